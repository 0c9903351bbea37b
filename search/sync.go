package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/vault-agent/vault-agent/vault"
)

// Sync reconciles the index with the disk: a note whose mtime and size match
// the index is skipped without reading it; otherwise it is read and
// reindexed unless its content hash is unchanged. Notes gone from the disk
// are deleted. Notes are parsed in parallel and written in batches. If Open
// found the index incompatible or corrupt, Sync rebuilds it and says why in
// SyncStats.Reason.
func (ix *Index) Sync(ctx context.Context, progress ProgressFunc) (SyncStats, error) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	return ix.syncLocked(ctx, progress)
}

// Rebuild drops the index and indexes the whole vault again.
func (ix *Index) Rebuild(ctx context.Context, progress ProgressFunc) (SyncStats, error) {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.pendingReason == "" {
		ix.pendingReason = "rebuild requested"
	}
	return ix.syncLocked(ctx, progress)
}

func (ix *Index) syncLocked(ctx context.Context, progress ProgressFunc) (SyncStats, error) {
	start := time.Now()
	if ix.isClosed() {
		return SyncStats{}, ErrClosed
	}
	ix.indexing.Store(true)
	defer ix.indexing.Store(false)

	var stats SyncStats
	if ix.idx == nil && ix.pendingReason == "" {
		ix.pendingReason = "index was not open (an earlier rebuild failed)"
	}
	if reason := ix.pendingReason; reason != "" {
		if err := ix.reset(); err != nil {
			return stats, err
		}
		ix.pendingReason = ""
		stats.Rebuilt, stats.Reason = true, reason
	}

	var toRead, all []string
	// ix.meta is only written with writeMu held, which we hold: reading it
	// without mu does not race, and does not block Paths() during the walk.
	// The paths on disk are only needed to find the notes that went away,
	// so a first index (nothing indexed) does not keep a set of them.
	var onDisk map[string]bool
	if ix.meta.len()+len(ix.suspect) > 0 {
		onDisk = make(map[string]bool, ix.meta.len())
	}
	err := ix.v.Walk(ctx, func(fi vault.FileInfo) error {
		if onDisk != nil {
			onDisk[fi.Path] = true
		}
		all = append(all, fi.Path)
		m := ix.meta.get(fi.Path)
		if m != nil && m.Size() == fi.Size && m.MTime().Equal(fi.ModTime) && !ix.suspect[fi.Path] {
			stats.Unchanged++
			return nil
		}
		toRead = append(toRead, fi.Path)
		return nil
	})
	var removed []string
	for m := range ix.meta.all() {
		if !onDisk[m.Path] {
			removed = append(removed, m.Path)
		}
	}
	for p := range ix.suspect {
		if !onDisk[p] && ix.meta.get(p) == nil {
			removed = append(removed, p) // its document may be left over
		}
	}
	if err != nil {
		return stats, fmt.Errorf("sync: walk vault: %w", err)
	}
	if len(toRead) >= bulkNotes {
		restore := bulkMemoryLimit()
		defer func() {
			// The merges the sync left, and the snapshots persisted
			// after its last batch, run under the bulk settings too;
			// Sync returns when they are done.
			ix.waitSettled(ctx)
			restore()
		}()
	}
	switch {
	case len(toRead)+len(removed) == 0 && ix.meta.len() > 0 && !ix.interrupted:
		// Nothing changed: nothing to read or write, and no link table
		// to build for it (a second at 100,000 notes).
	case ix.interrupted || fullLinkScan(ix.meta.len(), len(toRead)+len(removed)):
		err = ix.applyFull(ctx, all, toRead, removed, progress, &stats)
	default:
		err = ix.applyIncremental(ctx, toRead, removed, progress, &stats)
	}
	stats.Took = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("sync: %w", err)
	}
	if ix.interrupted {
		// Every note is as the disk has it now, whether or not this sync
		// had any to write.
		if err := ix.store.update(storeUpdate{end: true}); err != nil {
			return stats, fmt.Errorf("sync: %w", err)
		}
		ix.suspect, ix.interrupted = nil, false
	}
	ix.mu.Lock()
	ix.lastIndexed = time.Now()
	ix.mu.Unlock()
	ix.log.Info("index synced", "added", stats.Added, "updated", stats.Updated, "removed", stats.Removed,
		"unchanged", stats.Unchanged, "failed", stats.Failed, "took", stats.Took.Round(time.Millisecond), "rebuilt", stats.Rebuilt)
	ix.warm()
	ix.notify()
	return stats, nil
}

// warm builds the in-memory tables that searches and updates use (title
// keys and words, notes by name, paths) in the background, so the first
// search or save after a sync does not wait for them. Close waits for it.
//
// Building them takes a while and allocates a good deal (at 100,000 notes,
// seconds and several hundred megabytes, 60 MB of it kept): they are built
// under the memory settings of a bulk sync, which also gives the memory
// freed back to the system when done, so that the collector's goal after
// them is twice what the tables and notes hold, not twice a heap full of
// what building them left.
func (ix *Index) warm() {
	ix.mu.RLock()
	built := ix.titleIdx != nil && ix.keyIdx != nil && ix.paths != nil
	ix.mu.RUnlock()
	if built {
		return
	}
	ix.warming.Add(1)
	go func() {
		defer ix.warming.Done()
		if ix.isClosed() {
			return
		}
		restore := bulkMemoryLimit()
		defer restore()
		for _, build := range []func(){ix.buildTitles, func() { ix.keys() }, func() { ix.pathTables() }} {
			build()
			raiseBulkLimit()
		}
	}()
}

// fullLinkScan reports whether a change of changed notes in an index of
// indexed notes is better done by scanning the links of the whole vault
// than by following the link fields of the changed notes.
func fullLinkScan(indexed, changed int) bool {
	return indexed == 0 || changed > fullScanNotes && changed > indexed/8
}

// fullScanNotes is the fewest changed notes that may make a full link scan.
var fullScanNotes = 200 // a variable for tests

// applyFull indexes the notes of toRead and removes those of removed,
// after scanning the links of every note (all is every note on disk): every
// note whose inbound link context changed is rewritten too. Notes are
// parsed in parallel and written in batches as they come.
func (ix *Index) applyFull(ctx context.Context, all, toRead, removed []string, progress ProgressFunc, stats *SyncStats) (err error) {
	slices.Sort(all) // the order notes are written in (see linkParts)
	lp, err := ix.newLinkParts(all)
	if err != nil {
		return err
	}
	defer lp.close()
	if err := ix.scanLinks(ctx, all, newKeyIndex(all), lp); err != nil {
		return err
	}
	// Every note is read when toRead is all of them (a first index, a
	// rebuild); otherwise reading holds the ones to read.
	var reading map[string]bool
	if len(toRead) < len(all) {
		reading = make(map[string]bool, len(toRead))
		for _, p := range toRead {
			reading[p] = true
		}
	}
	w := ix.newWriter(ctx, len(toRead)+len(removed), progress)
	defer func() {
		// Also when the sync fails part way: the index has the notes of
		// the batches it wrote.
		if eerr := w.end(err); err == nil {
			err = eerr
		}
	}()
	for _, p := range removed {
		w.remove(p)
		stats.Removed++
	}
	// One partition at a time: the notes of the partition to read (new or
	// changed, or whose inbound context changed), with the inbound
	// context of its links.
	byPart := make([][]string, lp.n)
	for _, p := range all {
		k := lp.partOf(p)
		byPart[k] = append(byPart[k], p)
	}
	for k, ps := range byPart {
		b, err := lp.read(k)
		if err != nil {
			return err
		}
		ins, err := inboundOf(b)
		lp.drop(k)
		if err != nil {
			return err
		}
		var read []string
		for _, p := range ps {
			if reading == nil || reading[p] {
				read = append(read, p)
			} else if m := ix.meta.get(p); m != nil && m.inHash != ins[p].hashOrZero() {
				read = append(read, p)
				w.total++
			}
		}
		err = ix.readNotes(ctx, read, false, func(r noteRead) error {
			ix.classify(w, r, ins[r.path], stats)
			return w.maybeFlush(false)
		})
		if err != nil {
			return ix.finish(w, err, progress)
		}
	}
	return ix.finish(w, nil, progress)
}

// classify writes one read note: indexed when new or changed (or when its
// inbound context changed), metadata refreshed when only touched, removed
// when it vanished or is not a note.
func (ix *Index) classify(w *writer, r noteRead, in *inbound, stats *SyncStats) {
	old := ix.meta.get(r.path)
	switch {
	case r.err != nil && (isNotExist(r.err) || errors.Is(r.err, vault.ErrNotMarkdown)):
		// Vanished since the walk, or not a note (binary data): it is
		// not in the vault.
		if errors.Is(r.err, vault.ErrNotMarkdown) {
			ix.log.Debug("skipping a file that is not a note", "path", r.path, "err", r.err)
		}
		switch {
		case old != nil:
			stats.Removed++
			w.remove(r.path)
		case ix.suspect[r.path]:
			w.remove(r.path) // its document may be left over
		default:
			w.done++
		}
	case r.err != nil:
		stats.Failed++
		ix.log.Warn("cannot index note", "path", r.path, "err", r.err)
		w.done++
	case old != nil && old.hashIs(r.note.Hash) && old.inHash == in.hashOrZero():
		stats.Unchanged++
		if !old.MTime().Equal(r.note.ModTime) || old.Size() != r.note.Size || ix.suspect[r.path] {
			// Touched, same content: the document is written again, as
			// time filters read the mtime from it, not from the metadata.
			w.index(r.note, r.links, in)
		} else {
			w.done++
		}
	case old != nil:
		stats.Updated++
		w.index(r.note, r.links, in)
	default:
		stats.Added++
		w.index(r.note, r.links, in)
	}
}

// finish flushes the writer and ends it: the sync returns once the index
// and the records of its notes are persisted. A sync cancelled part way
// still writes what it has read, so the next sync goes on from there
// instead of starting over.
func (ix *Index) finish(w *writer, err error, progress ProgressFunc) error {
	cancelled := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	if cancelled {
		w.ctx = context.WithoutCancel(w.ctx)
	}
	ferr := w.maybeFlush(true)
	if err == nil {
		err = ferr
	}
	if eerr := w.end(err); err == nil {
		err = eerr
	}
	if err == nil && progress != nil {
		progress(w.total, w.total)
	}
	return err
}

// reset replaces the index with an empty one. Called with writeMu held.
func (ix *Index) reset() error {
	ix.idxMu.Lock()
	defer ix.idxMu.Unlock()
	if ix.idx != nil {
		if err := ix.idx.Close(); err != nil {
			ix.log.Warn("closing old index", "err", err)
		}
		ix.idx = nil
	}
	if ix.path == "" {
		idx, err := bleve.NewUsing("", ix.m, scorch.Name, scorch.Name, nil)
		if err != nil {
			return fmt.Errorf("create in-memory index: %w", err)
		}
		ix.idx = idx
		ix.setMeta(nil)
		return ix.writeStamp("")
	}
	return ix.create()
}

func (ix *Index) metaOf(p string) *noteRec {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.meta.get(p)
}
