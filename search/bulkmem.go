package search

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A sync that reads at least bulkNotes notes (a first index, a rebuild)
// runs under a soft memory limit of bulkMemory, unless the process has one
// (GOMEMLIMIT), and with the collector started at bulkGCPercent growth
// instead of Go's 100%. Indexing allocates several times the vault's size
// while its live heap stays small (the batch being analysed, the segments
// not yet persisted), so at 100% the collector runs every few tens of
// megabytes and costs a sixth of the CPU; at bulkGCPercent it runs a few
// times less often, and the limit makes it run sooner whenever the heap
// nears bulkMemory, so the peak stays about the same whatever the size of
// the vault.
const (
	bulkMemory    = 168 << 20
	bulkGCPercent = 400
	bulkHeadroom  = 72 << 20
)

var bulkNotes = 2000 // a variable for tests

var bulkMu struct {
	sync.Mutex
	n      int   // syncs under the limit
	prev   int64 // the limit before the first of them
	prevGC int   // the GC percent before the first of them
	// baseGC is the process's own GC percent, and servingGC the one the
	// last sync left for serving (servingGCPercent of it); 0 before.
	baseGC, servingGC int
}

// A serving process keeps its notes' metadata and tables on the heap
// (under a kilobyte a note) and makes about a megabyte of garbage a
// search. At Go's 100% the heap grows to twice the live heap between
// collections: another 80 MB of resident memory at 100,000 notes that
// holds nothing but garbage. After a sync the collector is started at the
// growth that gives servingHeadroom past the live heap instead (never
// below minServingGC%, nor above the process's own): the heap of a small
// vault, under servingHeadroom, is left as Go sets it. The headroom went
// from 16 to 12 MiB once the live heap at 100,000 notes went from 39 to
// 27 MB: the collector then runs about a third more often, each time
// marking a third less, about the same work a search as before.
const (
	servingHeadroom = 12 << 20
	minServingGC    = 25
)

// servingGCPercent returns the GC percent for serving with live bytes live,
// the process's own percent being base.
func servingGCPercent(live uint64, base int) int {
	if base <= 0 || live == 0 || live*uint64(base)/100 <= servingHeadroom {
		return base
	}
	return min(base, max(minServingGC, int(servingHeadroom*100/live)))
}

// bulkMemoryLimit sets the soft memory limit and GC percent for a bulk
// sync and returns the func that restores the limit before it and sets the
// serving GC percent of the live heap then. A process with its own limit
// (GOMEMLIMIT) keeps both.
func bulkMemoryLimit() (restore func()) {
	bulkMu.Lock()
	defer bulkMu.Unlock()
	if bulkMu.n == 0 {
		bulkMu.prev = debug.SetMemoryLimit(-1)
		if bulkMu.prev != math.MaxInt64 {
			return func() {} // the process has its own limit
		}
		debug.SetMemoryLimit(bulkMemory)
		bulkMu.prevGC = debug.SetGCPercent(bulkGCPercent)
	}
	bulkMu.n++
	return func() {
		bulkMu.Lock()
		defer bulkMu.Unlock()
		if bulkMu.n--; bulkMu.n == 0 {
			// Collect first, and give the freed memory back to the
			// system. The collector's next goal at 100% is twice the
			// live heap of its last cycle, which ran while the last
			// batch was written (150 MiB at 100,000 notes): without a
			// collection now, the tables built after the sync could take
			// the heap to twice that before the next cycle, far above
			// the bulk limit. Collected now, the goal is what a serving
			// index keeps plus the serving headroom (servingGCPercent).
			debug.FreeOSMemory()
			debug.SetMemoryLimit(bulkMu.prev)
			// The percent before the sync is ours from an earlier sync,
			// or the process's own (GOGC, or set since).
			if bulkMu.servingGC == 0 || bulkMu.prevGC != bulkMu.servingGC {
				bulkMu.baseGC = bulkMu.prevGC
			}
			gc := bulkMu.baseGC
			if live, ok := runtimeMetric("/gc/heap/live:bytes"); ok {
				gc = servingGCPercent(live, gc)
			}
			bulkMu.servingGC = gc
			debug.SetGCPercent(gc)
		}
	}
}

// raiseBulkLimit keeps bulkHeadroom between the live heap and the soft
// limit of a bulk sync: what a sync keeps per note (its metadata, the
// tables of names and links) grows with the vault, and a limit the live
// heap nears makes the collector run without pause, most of the CPU spent
// marking the same objects again. The limit only rises, and only while a
// bulk sync set it.
func raiseBulkLimit() {
	live, ok := runtimeMetric("/gc/heap/live:bytes")
	if !ok {
		return
	}
	want := int64(live) + bulkHeadroom
	bulkMu.Lock()
	defer bulkMu.Unlock()
	if bulkMu.n > 0 && want > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(want)
	}
}

// runtimeMetric reads one of the runtime's uint64 metrics (runtime/metrics).
func runtimeMetric(name string) (uint64, bool) {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}
