package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"

	"github.com/vault-agent/vault-agent/vault"
)

// writer accumulates index operations and metadata changes into bleve
// batches, and writes the records of the notes of each batch into the note
// store once bleve has persisted it (see notestore.go). Called from one
// goroutine, with writeMu held; end must be called when it is done.
type writer struct {
	ix       *Index
	ctx      context.Context
	b        *bleve.Batch
	pending  map[string]*NoteMeta // nil value: delete
	docs     map[string]*document.Document
	ops      int
	bytes    int // note text in the batch
	done     int
	total    int
	progress ProgressFunc
	lastProg time.Time
	// bulk is set for a sync of bulkNotes or more: it runs under the bulk
	// memory settings.
	bulk bool
	// outOfHeap, in a bulk sync of an empty index on disk, keeps the notes
	// written out of ix.meta: they reach it from the note store when the
	// writer ends, so the live heap, and with it the memory limit of the
	// sync and the work of every collection, does not grow with the vault.
	outOfHeap bool
	// flights are the batches written whose records are not in the store
	// yet, oldest first.
	flights []flight
	// failed are the records of the batches bleve failed to persist.
	failed []map[string]*NoteMeta
	// began is set once the store knows the writer is at work.
	began bool
	ended bool
}

// flight is a batch written to bleve, waiting for its records to be
// written into the note store.
type flight struct {
	persisted chan error // bleve's persistence signal; nil once received
	err       error      // what it signalled
	records   map[string]*NoteMeta
}

// testStep, set by tests only (the kill tests), is called at each step of
// the writer where a crash leaves the bleve index and the note store
// apart: "marked" (a batch's notes marked dirty), "batched" (the batch
// written to bleve), "persisted" (bleve has persisted a batch whose
// records are not written yet) and "recorded" (records written).
var testStep func(step string)

func step(name string) {
	if testStep != nil {
		testStep(name)
	}
}

// testHoldPersisted and testWaitPersisted, set by tests only, let a test
// choose when the writer learns that bleve persisted a batch: each batch's
// persistence signal goes to testHoldPersisted (ch is the batch's channel)
// with deliver, which hands it on whenever the test calls it, and
// testWaitPersisted is called with a batch's channel when the writer is
// about to block until its signal comes.
var (
	testHoldPersisted func(ch chan error, deliver func())
	testWaitPersisted func(ch chan error)
)

// maxUnpersisted is how many written batches may wait for the persister.
const maxUnpersisted = 2

// persistTimeout bounds how long a writer that ends waits for bleve to
// persist its batches. A batch not persisted in time keeps its dirty
// marks: the next Open has its notes read again.
const persistTimeout = time.Minute

// maxBatchBytes bounds the note text of one batch: the memory a batch
// takes while it is analysed and written grows with its text (about ten
// times the text: tokens, term vectors, the segment being built).
const maxBatchBytes = 4 << 20

func (ix *Index) newWriter(ctx context.Context, total int, progress ProgressFunc) *writer {
	ix.idxMu.RLock()
	b := ix.idx.NewBatch()
	ix.idxMu.RUnlock()
	if progress != nil {
		progress(0, total)
	}
	w := &writer{ix: ix, ctx: ctx, b: b, pending: make(map[string]*NoteMeta), docs: make(map[string]*document.Document), total: total, progress: progress, bulk: total >= bulkNotes}
	w.outOfHeap = w.bulk && ix.store != nil && ix.meta.len() == 0
	return w
}

func metaOfNote(n *vault.Note) *NoteMeta {
	return &NoteMeta{Path: n.Path, Title: n.Title, Aliases: n.Aliases, Tags: n.Tags, MTime: n.ModTime, Date: n.Date, Size: n.Size, Hash: n.Hash}
}

// index writes a note with its links (the note's own, and in: the
// context of the links pointing to it).
func (w *writer) index(n *vault.Note, links []vault.LinkContext, in *inbound) {
	doc, err := noteDoc(w.ix.m, w.ix.fused, n, in)
	if err != nil {
		// Mapping plain strings cannot fail; keep the old entry if it does.
		w.ix.log.Warn("cannot map note", "path", n.Path, "err", err)
		w.done++
		return
	}
	_ = w.b.IndexAdvanced(doc) // only fails for an empty id
	m := metaOfNote(n)
	m.inHash, m.keys, m.outHash = in.hashOrZero(), packLinkKeys(links), outHash(links)
	w.pending[n.Path] = m
	w.docs[n.Path] = doc
	w.ops++
	w.bytes += len(n.Body)
	w.done++
}

func (w *writer) remove(p string) {
	w.b.Delete(p)
	w.pending[p] = nil
	delete(w.docs, p)
	w.ops++
	w.done++
}

// maybeFlush writes the batch when it is full, or when final is set and
// anything is pending.
func (w *writer) maybeFlush(final bool) error {
	if w.progress != nil && (final || w.done%100 == 0 || time.Since(w.lastProg) > 200*time.Millisecond) {
		w.lastProg = time.Now()
		w.progress(w.done, w.total)
	}
	if !final && w.ops < w.ix.batchSz && w.bytes < maxBatchBytes || w.ops == 0 {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	ix := w.ix
	if ix.store != nil {
		// The records of the batches persisted since the last one, and
		// the dirty marks of this one's notes, in one transaction.
		records := w.persistedRecords(false)
		u := storeUpdate{done: records, dirty: slices.Collect(maps.Keys(w.pending)), begin: !w.began}
		if err := ix.store.update(u); err != nil {
			return err
		}
		w.began = true
		if len(records) > 0 {
			step("recorded")
		}
		step("marked")
	}
	var persisted chan error
	if ix.path != "" {
		persisted = make(chan error, 1)
		ch, hold := persisted, testHoldPersisted
		w.b.SetPersistedCallback(func(err error) {
			deliver := func() { ch <- err }
			if hold != nil {
				hold(ch, deliver)
				return
			}
			deliver()
		})
	}
	ix.idxMu.RLock()
	err := ix.idx.Batch(w.b)
	if err == nil {
		// A new batch, not Reset: scorch's analysis goroutine can still be
		// ranging over the old batch's operations after Batch returns (it
		// walks the deletes after the last document is analysed), and Reset
		// would race with it (bleve issue #1460, seen under -race with
		// v2.5.7; gitea works around it the same way).
		w.b = ix.idx.NewBatch()
	}
	ix.idxMu.RUnlock()
	if err != nil {
		return fmt.Errorf("write batch: %w", err)
	}
	step("batched")
	// The documents are analysed now: record their field lengths, which
	// ranking needs.
	for p, doc := range w.docs {
		if m := w.pending[p]; m != nil {
			m.lens, m.hasLens = fieldLengths(doc), true
		}
	}
	if !w.outOfHeap {
		ix.applyPending(w.pending)
	}
	if persisted != nil {
		w.flights = append(w.flights, flight{persisted: persisted, records: w.pending})
		// Batches are searchable before they are persisted (unsafe_batch);
		// the segments of the batches not persisted yet stay in memory.
		// A writer more than maxUnpersisted batches ahead of the disk
		// waits for it, so that memory does not grow with the vault when
		// the persister falls behind (large merges on a busy machine).
		var waiting []*flight
		for i := range w.flights {
			if w.flights[i].persisted != nil {
				waiting = append(waiting, &w.flights[i])
			}
		}
		if len(waiting) > maxUnpersisted {
			waiting[0].wait(true, nil)
			waiting = waiting[1:]
			ix.persistWaits.Add(1)
		}
		if n := int64(len(waiting)); n > ix.persistAhead.Load() {
			ix.persistAhead.Store(n)
		}
	}
	if w.bulk {
		raiseBulkLimit()
	}
	w.pending = make(map[string]*NoteMeta)
	w.docs = make(map[string]*document.Document)
	w.ops, w.bytes = 0, 0
	return nil
}

// wait receives the flight's persistence signal: without block, only if it
// came already; with block, waiting for it until timeout fires (never, for
// a nil timeout). It reports whether the signal came.
func (f *flight) wait(block bool, timeout <-chan time.Time) bool {
	if f.persisted == nil {
		return true
	}
	select {
	case f.err = <-f.persisted:
		f.persisted = nil
		return true
	default:
		if !block {
			return false
		}
	}
	if testWaitPersisted != nil {
		testWaitPersisted(f.persisted)
	}
	select {
	case f.err = <-f.persisted:
		f.persisted = nil
		return true
	case <-timeout:
		return false
	}
}

// persistedRecords takes the records of the flights at the head of the
// queue that bleve has persisted: those already signalled, or, with wait,
// every flight signalled within persistTimeout. A flight whose batch failed
// to persist gives no records (its notes stay marked dirty).
func (w *writer) persistedRecords(wait bool) []map[string]*NoteMeta {
	var timeout <-chan time.Time
	if wait {
		t := time.NewTimer(persistTimeout)
		defer t.Stop()
		timeout = t.C
	}
	var out []map[string]*NoteMeta
	n := 0
	for ; n < len(w.flights); n++ {
		f := &w.flights[n]
		if !f.wait(wait, timeout) {
			if wait {
				w.ix.log.Warn("index not persisted in time; the next start will check its notes again", "notes", len(f.records))
			}
			break
		}
		step("persisted")
		if f.err != nil {
			w.ix.log.Warn("persisting index", "err", f.err)
			w.failed = append(w.failed, f.records)
			continue
		}
		out = append(out, f.records)
	}
	w.flights = w.flights[n:]
	return out
}

// end writes the records of the batches written, once bleve has persisted
// them (waiting at most persistTimeout), and, when the writer kept its notes
// out of the heap, makes every note written the index's. werr is the
// error the writer's work ended with: a writer that ends early, or whose
// batches did not all reach the disk, leaves the index interrupted, and
// the next sync scans the whole vault's links. It does its work once;
// later calls return nil.
func (w *writer) end(werr error) error {
	if w.ended {
		return nil
	}
	w.ended = true
	ix := w.ix
	if ix.store == nil {
		return nil
	}
	records := w.persistedRecords(true)
	clean := werr == nil && len(w.flights) == 0 && len(w.failed) == 0
	err := ix.store.update(storeUpdate{done: records, end: clean && w.began})
	if err == nil && len(records) > 0 {
		step("recorded")
	}
	if !clean || err != nil {
		ix.interrupted = true
	}
	if !w.outOfHeap {
		return err
	}
	// The notes of the batches not persisted in time are not in the
	// store: the index has them all the same.
	st, lerr := ix.store.load()
	if lerr == nil {
		lerr = ix.store.unmap()
	}
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	notes := st.notes
	if err != nil { // none written
		for _, rs := range records {
			notes = appendRecords(notes, rs)
		}
	}
	for _, f := range w.flights {
		notes = appendRecords(notes, f.records)
	}
	for _, rs := range w.failed {
		notes = appendRecords(notes, rs)
	}
	ix.setMeta(notes)
	return err
}

// appendRecords appends the notes of records (not the removed ones).
func appendRecords(notes []*noteRec, records map[string]*NoteMeta) []*noteRec {
	for _, m := range records {
		if m != nil {
			notes = append(notes, recOf(m))
		}
	}
	return notes
}

// applyPending makes the notes of pending (nil: removed) the index's.
func (ix *Index) applyPending(pending map[string]*NoteMeta) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for p, meta := range pending {
		m := ix.keep(p, meta)
		old := ix.meta.get(p)
		ix.forgetLens(old)
		ix.titleChanged(old, m)
		ix.linkTablesChanged(old, m)
		ix.feeds.noteChanged(p, old, m)
		if m == nil {
			ix.meta.del(p)
		} else {
			ix.meta.put(m)
			ix.addLens(m)
		}
	}
	ix.paths = nil
	ix.metaGen++
}
