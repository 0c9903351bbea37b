package search

import (
	"sort"
	"sync"
	"sync/atomic"
)

// ChangeKind says how a note changed in the index.
type ChangeKind string

// Kinds of NoteChange.
const (
	NoteAdded   ChangeKind = "added"
	NoteUpdated ChangeKind = "updated" // content or file metadata
	NoteRemoved ChangeKind = "removed"
)

// NoteChange is one note the index added, updated or removed.
type NoteChange struct {
	Path string
	Kind ChangeKind
}

// Changes is a subscription to the notes an index adds, updates and
// removes (SubscribeChanges). Its methods may be called from any
// goroutine.
type Changes struct {
	ix    *Index
	ready chan struct{}
	// mu guards pending: the paths changed since the last Take, each with
	// whether it was indexed at that Take.
	mu      sync.Mutex
	pending map[string]bool
}

// changeFeeds are the subscriptions of an index; the zero value is ready.
type changeFeeds struct {
	n  atomic.Int32 // len(subs), read without mu on every write
	mu sync.Mutex
	// subs is guarded by mu.
	subs map[*Changes]struct{}
}

// SubscribeChanges returns a subscription to the notes the index adds,
// updates or removes from now on: after every change it applies (a watcher
// batch, a sync, a rebuild), Ready is signalled and Take tells which notes
// changed. Close it when done.
func (ix *Index) SubscribeChanges() *Changes {
	c := &Changes{ix: ix, ready: make(chan struct{}, 1), pending: map[string]bool{}}
	f := &ix.feeds
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[*Changes]struct{}{}
	}
	f.subs[c] = struct{}{}
	f.n.Store(int32(len(f.subs)))
	return c
}

// Ready is signalled, without blocking and coalescing, when changes wait
// to be taken.
func (c *Changes) Ready() <-chan struct{} { return c.ready }

// Take returns the notes that changed since the last Take (or the
// subscription), sorted by path, each once, as its state now compares with
// its state then: a note added and removed in between is not reported.
func (c *Changes) Take() []NoteChange {
	c.ix.mu.RLock()
	defer c.ix.mu.RUnlock()
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]bool{}
	c.mu.Unlock()
	out := make([]NoteChange, 0, len(pending))
	for p, was := range pending {
		now := c.ix.meta.get(p) != nil
		switch {
		case was && now:
			out = append(out, NoteChange{p, NoteUpdated})
		case now:
			out = append(out, NoteChange{p, NoteAdded})
		case was:
			out = append(out, NoteChange{p, NoteRemoved})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Close ends the subscription.
func (c *Changes) Close() {
	f := &c.ix.feeds
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs, c)
	f.n.Store(int32(len(f.subs)))
}

// noteChanged records that the note at p goes from old to new (nil: not
// indexed) for every subscription. It is called with ix.mu held for
// writing, before the change is applied to ix.meta.
func (f *changeFeeds) noteChanged(p string, old, new *noteRec) {
	if f.n.Load() == 0 {
		return
	}
	switch {
	case old == nil && new == nil:
		return
	case old != nil && new != nil && old.sameFile(new):
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.subs {
		c.mu.Lock()
		if _, ok := c.pending[p]; !ok {
			c.pending[p] = old != nil
		}
		c.mu.Unlock()
		select {
		case c.ready <- struct{}{}:
		default:
		}
	}
}
