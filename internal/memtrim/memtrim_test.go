package memtrim

import (
	"context"
	"testing"
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
		want []int // the ticks (from 0) that release
	}{
		{"start-up counts as work", []time.Duration{0, 0, 0}, []int{0}},
		{"busy, then idle", []time.Duration{50 * ms, 80 * ms, 0, 0}, []int{2}},
		{"each idle spell after work", []time.Duration{0, 20 * ms, 1 * ms, 0, 30 * ms, 0}, []int{0, 2, 5}},
		{"background noise is idle", []time.Duration{0, 4 * ms, 4 * ms, 4 * ms}, []int{0}},
		{"never idle", []time.Duration{10 * ms, 10 * ms, 10 * ms}, nil},
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
			go func() { idleLoop(ctx, ticks, cpu, release); close(done) }()
			for range tc.used {
				ticks <- time.Time{}
			}
			cancel()
			<-done
			if len(got) != len(tc.want) {
				t.Fatalf("released on ticks %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("released on ticks %v, want %v", got, tc.want)
				}
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
