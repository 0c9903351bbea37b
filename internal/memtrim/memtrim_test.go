package memtrim

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestIdleLoop drives the loop tick by tick with a made-up CPU meter and
// checks on which ticks it releases.
func TestIdleLoop(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		// used is the CPU time the process spends before each tick.
		used []time.Duration
		need int   // idle ticks in a row before a release
		want []int // the ticks (from 0) that release
	}{
		{"start-up counts as work", []time.Duration{0, 0, 0}, 1, []int{0}},
		{"busy, then idle", []time.Duration{50 * ms, 80 * ms, 0, 0}, 1, []int{2}},
		{"each idle spell after work", []time.Duration{0, 20 * ms, 1 * ms, 0, 30 * ms, 0}, 1, []int{0, 2, 5}},
		{"background noise is idle", []time.Duration{0, 4 * ms, 4 * ms, 4 * ms}, 1, []int{0}},
		// Holding pages costly to fault back in: three idle ticks in a row.
		{"held: waits for the idle spell", []time.Duration{0, 0, 0, 0}, 3, []int{2}},
		{"held: work restarts the count", []time.Duration{0, 0, 9 * ms, 0, 0, 0, 0}, 3, []int{5}},
		{"held: a short spell releases nothing", []time.Duration{20 * ms, 0, 0, 20 * ms, 0, 0}, 3, nil},
		{"never idle", []time.Duration{10 * ms, 10 * ms, 10 * ms}, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The meter and release run on the loop's goroutine only: the
			// meter is read once at the start, once per tick and once after
			// each release, which spends 200 ms.
			var got []int
			tick, started, afterRelease := -1, false, false
			var used, spent time.Duration
			cpu := func() time.Duration {
				switch {
				case afterRelease:
					afterRelease = false
				case !started:
					started = true
				default:
					tick++
					used += tc.used[tick]
				}
				return used + spent
			}
			release := func() {
				got = append(got, tick)
				spent += 200 * ms
				afterRelease = true
			}
			ticks := make(chan time.Time)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			l := idleLoop{ticks: ticks, cpu: cpu, need: func() int { return tc.need }, release: release}
			go func() { l.run(ctx); close(done) }()
			for range tc.used {
				ticks <- time.Time{}
			}
			cancel()
			<-done
			if !slices.Equal(got, tc.want) {
				t.Fatalf("released on ticks %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOnIdle checks that the releases registered run on RunIdleHooks until
// they are unregistered, one of them unregistering itself.
func TestOnIdle(t *testing.T) {
	var a, b int
	removeA := OnIdle(func() { a++ })
	var removeB func()
	removeB = OnIdle(func() {
		b++
		removeB()
	})
	RunIdleHooks()
	RunIdleHooks()
	removeA()
	RunIdleHooks()
	if a != 2 || b != 1 {
		t.Fatalf("releases ran a %d, b %d times, want 2 and 1", a, b)
	}
}

// TestIdleTicksFollowHooks checks that a process waits for the whole hold
// only while it holds something registered with OnIdle.
func TestIdleTicksFollowHooks(t *testing.T) {
	need := idleTicks(200*time.Millisecond, 2*time.Second)
	if n := need(); n != 1 {
		t.Fatalf("nothing held: waits %d ticks, want 1", n)
	}
	remove := OnIdle(func() {})
	if n := need(); n != 10 {
		t.Fatalf("an index held: waits %d ticks, want 10", n)
	}
	remove()
	if n := need(); n != 1 {
		t.Fatalf("index closed: waits %d ticks, want 1", n)
	}
}

// TestAnsweredReleasesWhenQuiet runs the loop on synctest's clock: a
// process holding nothing releases 20 ms after an answer when it stays
// quiet, looks again 20 ms later when it is still at work, waits for its
// next tick when the answer cost little, and a process
// holding an index waits for its whole hold counted from the answer.
func TestAnsweredReleasesWhenQuiet(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		held bool
		// work is the CPU time the request spends, busy the CPU time
		// spent from 5 ms after its answer on.
		work, busy time.Duration
		want       []time.Duration // when releases happen, from the start
	}{
		{"quiet after the answer", false, 30 * ms, 0, []time.Duration{200 * ms, 270 * ms}},
		{"still at work after the answer", false, 30 * ms, 1 * ms, []time.Duration{200 * ms, 290 * ms}},
		{"a small answer waits for the tick", false, 3 * ms, 0, []time.Duration{200 * ms, 400 * ms}},
		{"holding an index", true, 30 * ms, 0, []time.Duration{2400 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var cpu atomic.Int64
				var got []time.Duration
				kicks := make(chan struct{}, 1)
				ticker := time.NewTicker(200 * ms)
				defer ticker.Stop()
				need := 1
				if tc.held {
					need = 10
				}
				l := idleLoop{
					ticks:   ticker.C,
					kicks:   kicks,
					quiet:   func() <-chan time.Time { return time.After(quietDelay) },
					cpu:     func() time.Duration { return time.Duration(cpu.Load()) },
					need:    func() int { return need },
					release: func() { got = append(got, time.Since(start)) },
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { l.run(ctx); close(done) }()

				// Start-up is work; then a request at 240 ms, answered at 250.
				time.Sleep(240 * ms)
				cpu.Add(int64(tc.work))
				time.Sleep(10 * ms)
				kicks <- struct{}{}
				time.Sleep(5 * ms)
				cpu.Add(int64(tc.busy))
				time.Sleep(2500*ms - 255*ms)
				cancel()
				<-done
				if !slices.Equal(got, tc.want) {
					t.Fatalf("released at %v, want %v", got, tc.want)
				}
			})
		})
	}
}
