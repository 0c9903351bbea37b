package search

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// Scorch merges segments and persists snapshots on its own goroutines,
// after the batches that caused them have returned. A bulk sync waits for
// that work to end (waitSettled) before it gives the collector back its
// usual settings: each snapshot persisted carries the state record, which
// the persister copies twice on the heap while it writes (35 MB a copy at
// 100,000 notes), and a collection that runs then sets the next goal at
// twice a live heap that is mostly those copies.

// scorchEvents names onScorchEvent in scorch's registry of event callbacks;
// runtimeConfig gives it to every index on disk.
const scorchEvents = "vault-agent"

func init() { scorch.RegistryEventCallbacks[scorchEvents] = onScorchEvent }

// scorchWakes maps an open scorch index being waited on (Index.waitSettled) to
// its wake; the entry goes when the index closes.
var scorchWakes sync.Map

// wake is a channel closed, and replaced, at each event that may settle the
// index.
type wake struct {
	mu sync.Mutex
	ch chan struct{}
}

func (w *wake) current() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

func (w *wake) signal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.ch)
	w.ch = make(chan struct{})
}

// onScorchEvent runs on scorch's goroutines (merger, persister, closer),
// for every index on disk; it only wakes waiters, and never holds scorch
// back.
func onScorchEvent(e scorch.Event) bool {
	switch e.Kind {
	case scorch.EventKindMergerProgress, scorch.EventKindPersisterProgress, scorch.EventKindCloseStart:
		if v, ok := scorchWakes.Load(e.Scorch); ok {
			v.(*wake).signal()
		}
	case scorch.EventKindClose:
		if v, ok := scorchWakes.LoadAndDelete(e.Scorch); ok {
			v.(*wake).signal()
		}
	}
	return true
}

// settleTimeout bounds how long a bulk sync waits for scorch's merges and
// persisting after its last batch (normally milliseconds).
const settleTimeout = time.Minute

// waitSettled waits until the index's current snapshot is persisted and
// the merger has planned on it and found nothing to merge; or until ctx
// ends, settleTimeout passes or the index is closed. An index in memory
// has nothing to wait for. Called with writeMu held.
func (ix *Index) waitSettled(ctx context.Context) {
	if ix.path == "" || ix.idx == nil { // in memory, or a rebuild failed
		return
	}
	st := scorchStats(ix.idx)
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	v, _ := scorchWakes.LoadOrStore(st.s, &wake{ch: make(chan struct{})})
	w := v.(*wake)
	for {
		c := w.current() // before the check, so no event between them is missed
		if settled(st.Stats) {
			return
		}
		select {
		case <-c:
		case <-ix.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

// scorchIndex is a scorch index and its statistics.
type scorchIndex struct {
	s *scorch.Scorch
	*scorch.Stats
}

// scorchStats returns the scorch index under idx with its statistics, or
// nil when idx is not a scorch index.
func scorchStats(idx bleve.Index) *scorchIndex {
	adv, err := idx.Advanced()
	if err != nil {
		return nil
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	st, ok := s.Stats().(*scorch.Stats)
	if !ok {
		return nil
	}
	return &scorchIndex{s, st}
}

// settled reports whether scorch's current snapshot is persisted and
// planned for merging.
func settled(st *scorch.Stats) bool {
	root := atomic.LoadUint64(&st.CurRootEpoch)
	return atomic.LoadUint64(&st.LastPersistedEpoch) == root && atomic.LoadUint64(&st.LastMergedEpoch) == root
}
