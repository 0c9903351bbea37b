package search

import (
	"context"
	"math"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"testing"
)

func forcedGCs() uint64 {
	n, _ := runtimeMetric("/gc/cycles/forced:gc-cycles")
	return n
}

// TestBulkSyncEndsSettled checks that a bulk sync returns only once scorch
// has persisted its last snapshot and planned its merges on it, and that it
// then collects and gives the collector its settings back. A sync of one
// note a batch leaves tens of small segments to merge after its last
// batch, so without the wait the index is not settled when Sync returns.
func TestBulkSyncEndsSettled(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set")
	}
	dir := bulkRingVault(t, 200)
	ix, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "idx"), Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	prevGC, forced := gcPercent(), forcedGCs()
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	st := scorchStats(ix.idx).Stats
	if !settled(st) {
		t.Errorf("not settled when the bulk sync returned: root epoch %d, persisted %d, merge-planned %d",
			atomic.LoadUint64(&st.CurRootEpoch), atomic.LoadUint64(&st.LastPersistedEpoch), atomic.LoadUint64(&st.LastMergedEpoch))
	}
	if atomic.LoadUint64(&st.TotFileMergePlanTasks) == 0 {
		t.Errorf("no merges: the test does not exercise what it checks")
	}
	if got := gcPercent(); got != prevGC {
		t.Errorf("GC percent after the bulk sync %d, want %d", got, prevGC)
	}
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("memory limit left set after the bulk sync")
	}
	if forcedGCs() == forced {
		t.Errorf("no collection at the end of the bulk sync")
	}
}
