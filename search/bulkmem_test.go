package search

import (
	"math"
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
