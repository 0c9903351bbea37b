package shared

import (
	"sort"
	"sync"

	"github.com/vault-agent/vault-agent/search"
)

// feeds are this process's subscriptions to the index's changes, fed by
// the holder's changes wherever the index is (see holding.pump and
// following.Handle), so they outlive a change of holder.
type feeds struct {
	mu      sync.Mutex // guards the fields below
	changes map[*Changes]struct{}
	signals map[chan struct{}]struct{}
	closed  bool
}

// Changes is a subscription to the notes the index adds, updates and
// removes, as search.Changes is. Its methods may be called from any
// goroutine.
type Changes struct {
	f     *feeds
	ready chan struct{}
	// mu guards pending.
	mu      sync.Mutex
	pending map[string]search.ChangeKind
}

// SubscribeChanges returns a subscription to the notes the index adds,
// updates or removes from now on: after every change, Ready is signalled
// and Take tells which notes changed. Close it when done.
func (x *Index) SubscribeChanges() *Changes {
	c := &Changes{f: &x.feeds, ready: make(chan struct{}, 1), pending: map[string]search.ChangeKind{}}
	x.feeds.mu.Lock()
	defer x.feeds.mu.Unlock()
	if x.feeds.changes == nil {
		x.feeds.changes = map[*Changes]struct{}{}
	}
	x.feeds.changes[c] = struct{}{}
	return c
}

// Ready is signalled, without blocking and coalescing, when changes wait
// to be taken.
func (c *Changes) Ready() <-chan struct{} { return c.ready }

// Take returns the notes that changed since the last Take (or the
// subscription), sorted by path, each once: a note added and removed in
// between is not reported.
func (c *Changes) Take() []search.NoteChange {
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]search.ChangeKind{}
	c.mu.Unlock()
	out := make([]search.NoteChange, 0, len(pending))
	for p, k := range pending {
		out = append(out, search.NoteChange{Path: p, Kind: k})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Close ends the subscription.
func (c *Changes) Close() {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	delete(c.f.changes, c)
}

// Subscribe returns a channel signalled (without blocking, coalescing)
// after each change of the index's notes, and closed when the index is.
// Call the returned func to unsubscribe.
func (x *Index) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f := &x.feeds
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(ch)
		return ch, func() {}
	}
	if f.signals == nil {
		f.signals = map[chan struct{}]struct{}{}
	}
	f.signals[ch] = struct{}{}
	return ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.signals[ch]; ok {
			delete(f.signals, ch)
		}
	}
}

// deliver hands changes to every subscription; it does not block.
func (f *feeds) deliver(changes []search.NoteChange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.changes {
		c.mu.Lock()
		for _, ch := range changes {
			if k := mergeKind(c.pending[ch.Path], ch.Kind); k != "" {
				c.pending[ch.Path] = k
			} else {
				delete(c.pending, ch.Path)
			}
		}
		c.mu.Unlock()
		select {
		case c.ready <- struct{}{}:
		default:
		}
	}
	for ch := range f.signals {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// closeAll closes the Subscribe channels: the index is closed.
func (f *feeds) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for ch := range f.signals {
		close(ch)
	}
	f.signals = nil
}

// mergeKind is what a note that changed as old, then as next, changed as
// in all ("": not at all, a note added then removed).
func mergeKind(old, next search.ChangeKind) search.ChangeKind {
	switch {
	case old == "":
		return next
	case old == search.NoteAdded && next == search.NoteRemoved:
		return ""
	case old == search.NoteAdded:
		return search.NoteAdded
	case old == search.NoteRemoved && next != search.NoteRemoved:
		return search.NoteUpdated
	case next == search.NoteRemoved:
		return search.NoteRemoved
	}
	return search.NoteUpdated
}
