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
