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

// idleCPU is the CPU time below which an interval counts as idle: the
// runtime's background work and a watcher's heartbeat stay under it.
const idleCPU = 5 * time.Millisecond

// WhenIdle releases memory each time the process goes idle after working
// (and once soon after it starts, start-up being work): when it used less
// than idleCPU of CPU time over one interval. It returns when ctx ends.
// report, if not nil, hears each release.
func WhenIdle(ctx context.Context, interval time.Duration, report func(Released, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	idleLoop(ctx, t.C, processCPU, func() {
		RunIdleHooks()
		debug.FreeOSMemory()
		r, err := ReleaseCode()
		if report != nil {
			report(r, err)
		}
	})
}

// idleLoop is WhenIdle with its clock and CPU meter given: release runs on
// the first tick that finds the process idle after work. The CPU release
// itself spends is not counted as work.
func idleLoop(ctx context.Context, ticks <-chan time.Time, cpu func() time.Duration, release func()) {
	last := cpu()
	worked := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		now := cpu()
		used := now - last
		last = now
		switch {
		case used >= idleCPU:
			worked = true
		case worked:
			release()
			last = cpu()
			worked = false
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
