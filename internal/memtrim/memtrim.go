// Package memtrim gives back the memory a long-running front-end holds
// without needing it while it waits for its client.
//
// Every process of this binary runs the init functions of all the packages
// linked into it (the terminal renderer's syntax tables, the search
// engine's registries), which touch code and read-only data all over the
// executable, and the kernel maps 64 KB around each of those faults. A
// front-end that then serves for hours keeps those pages resident, and
// keeps the heap a burst of work grew. An MCP client keeps such a process
// running all day beside an editor that runs another, so once the process
// has been idle a while it drops its mappings of the executable's
// read-only pages (they stay in the page cache, shared: the code that runs
// again faults them back in at the cost of a minor fault) and returns its
// free heap to the system.
package memtrim

import (
	"context"
	"runtime/debug"
	"sync"
	"time"
)

// Released says what ReleaseCode gave back.
type Released struct {
	// Bytes is the resident size of the executable's read-only mappings
	// before the release.
	Bytes int64
	// Mappings is how many mappings were released.
	Mappings int
}

// idleCPU is the CPU time below which a tick's interval counts as idle: the
// runtime's background work and a watcher's heartbeat stay under it.
const idleCPU = 5 * time.Millisecond

// Answered's quiet: a process holding nothing releases once it has spent
// less than quietCPU over quietDelay after its last answer, when it has
// worked at least quietWork since its last release (a stream of small
// answers, a model's tokens relayed one by one, touches little and would
// otherwise pay for a release after each).
const (
	quietDelay = 20 * time.Millisecond
	quietCPU   = time.Millisecond
	quietWork  = 20 * time.Millisecond
)

// WhenIdle releases memory each time the process goes idle after working
// (start-up being work), reading the process's CPU time every tick: an
// interval in which it used less than idleCPU is idle.
//
// A process that holds pages costly to fault back in (anything registered
// with OnIdle: an index's segment pages, which its next search would read
// again) releases once it has been idle for hold. One that holds none (a
// front-end forwarding to the process that holds the index) has only its
// code and heap to give back, a few pages a request to fault in again, so
// it releases on its first idle tick, and at once when it falls quiet
// after an answer (Answered): it stays small even right after its work.
// It returns when ctx ends. report, if not nil, hears each release.
func WhenIdle(ctx context.Context, tick, hold time.Duration, report func(Released, error)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	l := idleLoop{
		ticks: t.C,
		kicks: answered,
		quiet: func() <-chan time.Time { return time.After(quietDelay) },
		cpu:   processCPU,
		need:  idleTicks(tick, hold),
		release: func() {
			RunIdleHooks()
			debug.FreeOSMemory()
			r, err := ReleaseCode()
			if report != nil {
				report(r, err)
			}
		},
	}
	l.run(ctx)
}

// answered carries Answered's signal to WhenIdle.
var answered = make(chan struct{}, 1)

// Answered tells WhenIdle that the process has just written an answer to
// its client: a process holding nothing registered with OnIdle releases
// once it stays quiet a moment after it. It never blocks.
func Answered() {
	select {
	case answered <- struct{}{}:
	default:
	}
}

// idleTicks is how many idle ticks in a row WhenIdle waits for: those
// that make up hold while a release is registered with OnIdle, else one.
func idleTicks(tick, hold time.Duration) func() int {
	held := max(1, int((hold+tick-1)/tick))
	return func() int {
		if hasHooks() {
			return held
		}
		return 1
	}
}

// idleLoop is WhenIdle with its clocks and CPU meter given.
type idleLoop struct {
	ticks   <-chan time.Time
	kicks   <-chan struct{}         // Answered
	quiet   func() <-chan time.Time // fires quietDelay after it is called
	cpu     func() time.Duration    // the process's CPU time so far
	need    func() int              // idle ticks in a row before a release
	release func()
}

// run releases once the process has been idle for need() ticks in a row
// after work (an answer restarts the count); and, when need() is one tick
// (nothing costly held), also as soon as it uses under quietCPU in a
// quietDelay after an answer, having worked quietWork since its last
// release. The CPU a release spends is not counted as work.
func (l *idleLoop) run(ctx context.Context) {
	last := l.cpu()
	released := time.Duration(-1 << 62) // the CPU time at the last release
	worked := true
	idle := 0 // idle ticks in a row
	var quiet <-chan time.Time
	var quietFrom time.Duration
	release := func() {
		l.release()
		last = l.cpu()
		released = last
		worked, idle, quiet = false, 0, nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.kicks:
			worked, idle = true, 0
			if l.need() == 1 {
				quiet, quietFrom = l.quiet(), l.cpu()
			}
		case <-quiet:
			now := l.cpu()
			switch {
			case now-released < quietWork:
				quiet = nil // too little to give back: the tick will see
			case now-quietFrom < quietCPU:
				release()
			default:
				// Still at work after the answer: look again.
				quiet, quietFrom = l.quiet(), now
			}
		case <-l.ticks:
			now := l.cpu()
			used := now - last
			last = now
			if used >= idleCPU {
				worked, idle = true, 0
				continue
			}
			idle++
			if worked && idle >= l.need() {
				release()
			}
		}
	}
}

// hooks are the releases of OnIdle, by registration.
var hooks struct {
	mu   sync.Mutex
	next int
	fns  map[int]func()
}

// OnIdle registers release to run each time WhenIdle finds the process
// idle, before the free heap is returned: a package that holds memory only
// its work needs (an index's mappings of the pages its searches read) gives
// it back on the same signal. It returns the func that unregisters it.
func OnIdle(release func()) (remove func()) {
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if hooks.fns == nil {
		hooks.fns = map[int]func(){}
	}
	id := hooks.next
	hooks.next++
	hooks.fns[id] = release
	return func() {
		hooks.mu.Lock()
		defer hooks.mu.Unlock()
		delete(hooks.fns, id)
	}
}

// hasHooks reports whether a release is registered with OnIdle.
func hasHooks() bool {
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	return len(hooks.fns) > 0
}

// RunIdleHooks runs the releases registered with OnIdle, as WhenIdle does
// on going idle; outside the lock, so a release may unregister itself or
// another.
func RunIdleHooks() {
	hooks.mu.Lock()
	fns := make([]func(), 0, len(hooks.fns))
	for _, f := range hooks.fns {
		fns = append(fns, f)
	}
	hooks.mu.Unlock()
	for _, f := range fns {
		f()
	}
}
