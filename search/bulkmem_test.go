package search

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestBulkMemoryLimit checks that a bulk sync runs under the soft limit and
// the bulk GC percent, that nested syncs restore both only when the last
// ends, and that a process with its own limit keeps its settings.
func TestBulkMemoryLimit(t *testing.T) {
	prevLimit, prevGC := debug.SetMemoryLimit(-1), gcPercent()
	if prevLimit != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set")
	}
	outer := bulkMemoryLimit()
	inner := bulkMemoryLimit()
	if got := debug.SetMemoryLimit(-1); got != bulkMemory {
		t.Fatalf("limit during a bulk sync %d, want %d", got, bulkMemory)
	}
	if got := gcPercent(); got != bulkGCPercent {
		t.Fatalf("GC percent during a bulk sync %d, want %d", got, bulkGCPercent)
	}
	inner()
	if got := gcPercent(); got != bulkGCPercent {
		t.Fatalf("GC percent restored while another bulk sync runs: %d", got)
	}
	outer()
	if got := debug.SetMemoryLimit(-1); got != prevLimit {
		t.Fatalf("limit after %d, want %d", got, prevLimit)
	}
	if got := gcPercent(); got != prevGC {
		t.Fatalf("GC percent after %d, want %d", got, prevGC)
	}

	debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(prevLimit)
	restore := bulkMemoryLimit()
	if got := gcPercent(); got != prevGC {
		t.Fatalf("GC percent changed under the process's own limit: %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Fatalf("process limit changed: %d", got)
	}
	restore()
}

// TestBulkLimitFollowsTheLiveHeap checks that the limit of a bulk sync
// rises to keep headroom above a live heap that outgrew it, and that the
// limit before the sync comes back after it.
func TestBulkLimitFollowsTheLiveHeap(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set")
	}
	restore := bulkMemoryLimit()
	ballast := make([]byte, bulkMemory) // live: the limit alone would leave no room
	for i := range ballast {
		ballast[i] = byte(i)
	}
	runtime.GC()
	raiseBulkLimit()
	got := debug.SetMemoryLimit(-1)
	runtime.KeepAlive(ballast)
	if got < bulkMemory+bulkHeadroom {
		t.Errorf("limit %d MiB with %d MiB live, want at least %d MiB", got>>20, len(ballast)>>20, (bulkMemory+bulkHeadroom)>>20)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit after the sync %d", got)
	}
	raiseBulkLimit() // no bulk sync: nothing changes
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit raised outside a bulk sync: %d", got)
	}
}

func TestServingGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		base int
		want int
	}{
		{0, 100, 100},
		{10 << 20, 100, 100},              // a small vault: Go's own growth
		{servingHeadroom, 100, 100},       // exactly the headroom
		{32 << 20, 100, 37},               // 12 MiB past 32 MiB live
		{40 << 20, 200, 30},               // the process's own percent, capped too
		{8 << 20, 200, 150},               // ... to the headroom only
		{1 << 30, 100, minServingGC},      // never below the floor
		{128 << 20, -1, -1},               // collector off: left off
		{128 << 20, minServingGC - 5, 20}, // under the floor already
	} {
		if got := servingGCPercent(c.live, c.base); got != c.want {
			t.Errorf("servingGCPercent(%d MiB, %d) = %d, want %d", c.live>>20, c.base, got, c.want)
		}
	}
}

// TestServingGCAfterSync checks that the end of a bulk sync leaves the
// collector at the serving growth of the live heap, and at the process's
// own percent again once the live heap is small.
func TestServingGCAfterSync(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set")
	}
	base := gcPercent()
	defer debug.SetGCPercent(base)
	if base != 100 {
		t.Skipf("GOGC=%d", base)
	}
	ballast := make([]byte, 4*servingHeadroom)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	bulkMemoryLimit()()
	got := gcPercent()
	runtime.KeepAlive(ballast)
	if got >= base || got < minServingGC {
		t.Fatalf("GC percent after a sync with %d MiB live: %d, want under %d", len(ballast)>>20, got, base)
	}
	ballast = nil
	bulkMemoryLimit()()
	if got := gcPercent(); got != base {
		t.Fatalf("GC percent after a sync with a small heap: %d, want the process's %d", got, base)
	}
}
