package search

import (
	"context"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"

	"github.com/vault-agent/vault-agent/vault"
)

// writer accumulates index operations and metadata changes into bleve
// batches. Called from one goroutine, with writeMu held.
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
	wrote    bool
	// sinceState counts the notes written since the state record was.
	sinceState int
	// bulk is set for a sync of bulkNotes or more: the state record is
	// written with its last batch only.
	bulk bool
	// unpersisted are the persistence signals of the batches written and
	// not known to be persisted, oldest first.
	unpersisted []chan error
	// spill, in a bulk sync of an empty index, holds the metadata of the
	// notes written, which reach ix.meta with the last batch.
	spill *metaSpill
}

// maxUnpersisted is how many written batches may wait for the persister.
const maxUnpersisted = 2

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
	return &writer{ix: ix, ctx: ctx, b: b, pending: make(map[string]*NoteMeta), docs: make(map[string]*document.Document), total: total, progress: progress, bulk: total >= bulkNotes}
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
	if !final && w.ops < w.ix.batchSz && w.bytes < maxBatchBytes || final && w.ops == 0 && w.sinceState == 0 {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	ix := w.ix
	// The state record lists every note, so writing it with every batch
	// of a large sync costs time and memory in the square of the vault's
	// size. It is written with the last batch, and before that only
	// once a quarter more notes were written since it last was, except
	// in a bulk sync (a first index, a rebuild), where only the last
	// batch (or the last before a cancellation) writes it: each record
	// is held in memory until the next replaces it, a third of a kilobyte
	// per note. A crash in between leaves documents the state does not
	// list, which Open takes for a damaged index and rebuilds.
	var spilled []byte // the spilled records in the state record
	if final || !w.bulk && w.sinceState+w.ops >= max(ix.batchSz, len(ix.meta)/4) {
		ix.mu.RLock()
		state, sp, err := encodeStateAfter(w.spill, ix.meta, w.pending)
		ix.mu.RUnlock()
		if err != nil {
			return err
		}
		spilled = sp
		w.b.SetInternal(keyState, state)
		w.sinceState = 0
		ix.stateWrites.Add(1)
	} else {
		w.sinceState += w.ops
	}
	var persisted chan error
	if ix.path != "" {
		persisted = make(chan error, 1)
		w.b.SetPersistedCallback(func(err error) { persisted <- err })
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
	if persisted != nil {
		ix.lastPersist = persisted
		// Batches are searchable before they are persisted (unsafe_batch);
		// the segments of the batches not persisted yet stay in memory.
		// A writer more than maxUnpersisted batches ahead of the disk
		// waits for it, so that memory does not grow with the vault when
		// the persister falls behind (large merges on a busy machine).
		w.unpersisted = append(w.unpersisted, persisted)
		if len(w.unpersisted) > maxUnpersisted {
			if err := <-w.unpersisted[0]; err != nil {
				ix.log.Warn("persisting index", "err", err)
			}
			w.unpersisted = w.unpersisted[1:]
			ix.persistWaits.Add(1)
		}
	}
	if w.bulk {
		raiseBulkLimit()
	}
	// The documents are analysed now: record their field lengths, which
	// ranking needs (they reach the state record with the next batch).
	for p, doc := range w.docs {
		if m := w.pending[p]; m != nil {
			m.lens, m.hasLens = fieldLengths(doc), true
		}
	}
	if w.spill != nil {
		if err := w.spillPending(final, spilled); err != nil {
			return err
		}
	} else {
		ix.applyPending(w.pending)
	}
	w.wrote = true
	w.pending = make(map[string]*NoteMeta)
	w.docs = make(map[string]*document.Document)
	w.ops, w.bytes = 0, 0
	return nil
}

// applyPending makes the notes of pending (nil: removed) the index's.
func (ix *Index) applyPending(pending map[string]*NoteMeta) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for p, m := range pending {
		ix.forgetLens(ix.meta[p])
		ix.titleChanged(ix.meta[p], m)
		ix.linkTablesChanged(ix.meta[p], m)
		ix.feeds.noteChanged(p, ix.meta[p], m)
		if m == nil {
			delete(ix.meta, p)
		} else {
			ix.meta[p] = m
			ix.addLens(m)
		}
	}
	ix.paths = nil
	ix.metaGen++
}

// spillPending spills the metadata of a batch just written, or with the
// last batch (final) makes every note written the index's notes.
func (w *writer) spillPending(final bool, spilled []byte) error {
	if final {
		return w.loadSpill(spilled, w.pending)
	}
	for _, m := range w.pending {
		if m == nil {
			continue // a first index removes nothing
		}
		if err := w.spill.add(m); err != nil {
			return err
		}
	}
	return nil
}

// loadSpill makes the spilled notes (spilled: their records, read from the
// spill when nil) and those of pending the index's notes, and ends the
// spill.
func (w *writer) loadSpill(spilled []byte, pending map[string]*NoteMeta) error {
	s := w.spill
	w.spill = nil
	defer s.close()
	if spilled == nil {
		var err error
		if spilled, err = s.appendTo(nil); err != nil {
			return err
		}
	}
	metas, err := decodeNotes(spilled, uint64(s.n))
	if err != nil {
		return fmt.Errorf("note metadata: %w", err)
	}
	for _, m := range pending {
		if m != nil {
			metas = append(metas, m)
		}
	}
	w.ix.setMeta(metas)
	return nil
}

// Apply applies one batch of watcher changes in a single bleve batch. A
