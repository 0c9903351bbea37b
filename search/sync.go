package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
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

	type seen struct {
		fi   vault.FileInfo
		meta *NoteMeta
	}
	var toRead []seen
	onDisk := make(map[string]bool, ix.Count())
	// ix.meta is only written with writeMu held, which we hold: reading it
	// without mu does not race, and does not block Paths() during the walk.
	err := ix.v.Walk(ctx, func(fi vault.FileInfo) error {
		onDisk[fi.Path] = true
		m := ix.meta[fi.Path]
		if m != nil && m.Size == fi.Size && m.MTime.Equal(fi.ModTime) {
			stats.Unchanged++
			return nil
		}
		toRead = append(toRead, seen{fi, m})
		return nil
	})
	var removed []string
	for p := range ix.meta {
		if !onDisk[p] {
			removed = append(removed, p)
		}
	}
	if err != nil {
		return stats, fmt.Errorf("sync: walk vault: %w", err)
	}

	w := ix.newWriter(ctx, len(toRead)+len(removed), progress)
	for _, p := range removed {
		w.remove(p)
		stats.Removed++
	}
	paths := make([]string, len(toRead))
	for i, s := range toRead {
		paths[i] = s.fi.Path
	}
	err = ix.readNotes(ctx, paths, func(p string, n *vault.Note, rerr error) error {
		old := ix.metaOf(p)
		switch {
		case rerr != nil && (isNotExist(rerr) || errors.Is(rerr, vault.ErrNotMarkdown)):
			// Vanished since the walk, or not a note (binary data): it is
			// not in the vault.
			if errors.Is(rerr, vault.ErrNotMarkdown) {
				ix.log.Debug("skipping a file that is not a note", "path", p, "err", rerr)
			}
			if old != nil {
				stats.Removed++
				w.remove(p)
			} else {
				w.done++
			}
		case rerr != nil:
			stats.Failed++
			ix.log.Warn("cannot index note", "path", p, "err", rerr)
			w.done++
		case old != nil && old.Hash == n.Hash:
			stats.Unchanged++ // touched, same content: refresh mtime only
			w.touch(n)
		case old != nil:
			stats.Updated++
			w.index(n)
		default:
			stats.Added++
			w.index(n)
		}
		return w.maybeFlush(false)
	})
	if ferr := w.maybeFlush(true); err == nil {
		err = ferr
	}
	if err == nil && w.wrote {
		ix.waitPersisted(time.Minute)
	}
	stats.Took = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("sync: %w", err)
	}
	if progress != nil {
		progress(w.total, w.total)
	}
	ix.mu.Lock()
	ix.lastIndexed = time.Now()
	ix.mu.Unlock()
	ix.log.Info("index synced", "added", stats.Added, "updated", stats.Updated, "removed", stats.Removed,
		"unchanged", stats.Unchanged, "failed", stats.Failed, "took", stats.Took.Round(time.Millisecond), "rebuilt", stats.Rebuilt)
	ix.notify()
	return stats, nil
}

// reset replaces the index with an empty one. Called with writeMu held.
func (ix *Index) reset() error {
	ix.waitPersisted(5 * time.Second)
	ix.idxMu.Lock()
	defer ix.idxMu.Unlock()
	if ix.idx != nil {
		if err := ix.idx.Close(); err != nil {
			ix.log.Warn("closing old index", "err", err)
		}
		ix.idx = nil
	}
	ix.links.clear()
	if ix.path == "" {
		idx, err := bleve.NewUsing("", ix.m, scorch.Name, scorch.Name, nil)
		if err != nil {
			return fmt.Errorf("create in-memory index: %w", err)
		}
		ix.idx = idx
		ix.setMeta(nil)
		return ix.writeStamp()
	}
	return ix.create()
}

func (ix *Index) metaOf(p string) *NoteMeta {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.meta[p]
}

func isNotExist(err error) bool {
	return errors.Is(err, vault.ErrNotFound) || errors.Is(err, fs.ErrNotExist)
}

// readNotes parses paths with a pool of workers and hands each result to fn,
// which runs on the calling goroutine (so it may touch the writer).
func (ix *Index) readNotes(ctx context.Context, paths []string, fn func(string, *vault.Note, error) error) error {
	if len(paths) == 0 {
		return nil
	}
	type result struct {
		path string
		note *vault.Note
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan string)
	results := make(chan result, 2*ix.workers)
	var wg sync.WaitGroup
	for i := 0; i < ix.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				n, err := ix.v.ReadNote(p)
				select {
				case results <- result{p, n, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, p := range paths {
			select {
			case jobs <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	for r := range results {
		if err := fn(r.path, r.note, r.err); err != nil {
			cancel()
			for range results {
			}
			return err
		}
	}
	return ctx.Err()
}

// writer accumulates index operations and metadata changes into bleve
// batches. Called from one goroutine, with writeMu held.
type writer struct {
	ix       *Index
	ctx      context.Context
	b        *bleve.Batch
	pending  map[string]*NoteMeta // nil value: delete
	ops      int
	done     int
	total    int
	progress ProgressFunc
	lastProg time.Time
	wrote    bool
}

func (ix *Index) newWriter(ctx context.Context, total int, progress ProgressFunc) *writer {
	ix.idxMu.RLock()
	b := ix.idx.NewBatch()
	ix.idxMu.RUnlock()
	if progress != nil {
		progress(0, total)
	}
	return &writer{ix: ix, ctx: ctx, b: b, pending: make(map[string]*NoteMeta), total: total, progress: progress}
}

func metaOfNote(n *vault.Note) *NoteMeta {
	return &NoteMeta{Path: n.Path, Title: n.Title, Aliases: n.Aliases, Tags: n.Tags, MTime: n.ModTime, Date: n.Date, Size: n.Size, Hash: n.Hash}
}

func (w *writer) index(n *vault.Note) {
	doc := document.NewDocument(n.Path)
	if err := w.ix.m.MapDocument(doc, noteDocument(n)); err != nil {
		// Mapping plain strings cannot fail; keep the old entry if it does.
		w.ix.log.Warn("cannot map note", "path", n.Path, "err", err)
		w.done++
		return
	}
	_ = w.b.IndexAdvanced(doc) // only fails for an empty id
	w.ix.keepLinks(n)
	w.pending[n.Path] = metaOfNote(n)
	w.ops++
	w.done++
}

func (w *writer) touch(n *vault.Note) {
	w.ix.keepLinks(n)
	w.pending[n.Path] = metaOfNote(n)
	w.ops++
	w.done++
}

func (w *writer) remove(p string) {
	w.ix.links.drop(p)
	w.b.Delete(p)
	w.pending[p] = nil
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
	if w.ops == 0 || (!final && w.ops < w.ix.batchSz) {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	ix := w.ix
	ix.mu.RLock()
	state := encodeState(ix.meta, w.pending)
	ix.mu.RUnlock()
	w.b.SetInternal(keyState, state)
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
	}
	ix.mu.Lock()
	for p, m := range w.pending {
		ix.feeds.noteChanged(p, ix.meta[p], m)
		if m == nil {
			delete(ix.meta, p)
		} else {
			ix.meta[p] = m
		}
	}
	ix.paths = nil
	ix.mu.Unlock()
	w.wrote = true
	w.pending = make(map[string]*NoteMeta)
	w.ops = 0
	return nil
}

// Apply applies one batch of watcher changes in a single bleve batch. A
// batch asking for a rescan (event overflow, watch limit) runs Sync.
func (ix *Index) Apply(ctx context.Context, b vault.Batch) error {
	if b.Rescan {
		ix.log.Warn("watcher asked for a full rescan", "reason", b.Reason)
		_, err := ix.Sync(ctx, nil)
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	if ix.idx == nil || ix.pendingReason != "" {
		// The index must be rebuilt first; Sync does that.
		_, err := ix.syncLocked(ctx, nil)
		return err
	}
	needSync := false
	var reads []string
	w := ix.newWriter(ctx, 0, nil)
	seen := make(map[string]bool, len(b.Changes))
	for i := len(b.Changes) - 1; i >= 0; i-- { // the last change of a path wins
		c := b.Changes[i]
		p := strings.TrimPrefix(c.Path, "./")
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		// Removed or not, the disk decides: a coalesced remove+create (an
		// atomic save) must not drop a note that exists.
		abs, err := ix.v.Resolve(p)
		if err != nil {
			ix.log.Warn("watcher change outside the vault", "path", p, "err", err)
			continue
		}
		st, err := os.Stat(abs)
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			ix.removeUnder(w, p)
		case err != nil:
			ix.log.Warn("cannot stat changed path", "path", p, "err", err)
		case st.IsDir():
			// A folder appeared (created or renamed into place): walking
			// the vault is cheap, a stat per note.
			needSync = true
		case vault.IsNotePath(p):
			reads = append(reads, p)
		}
	}
	err := ix.readNotes(ctx, reads, func(p string, n *vault.Note, rerr error) error {
		old := ix.metaOf(p)
		switch {
		case rerr != nil && isNotExist(rerr):
			if old != nil {
				w.remove(p)
			}
		case rerr != nil:
			ix.log.Warn("cannot index note", "path", p, "err", rerr)
		case old != nil && old.Hash == n.Hash:
			if !old.MTime.Equal(n.ModTime) || old.Size != n.Size {
				w.touch(n)
			}
		default:
			w.index(n)
		}
		return nil
	})
	if err == nil {
		err = w.maybeFlush(true)
	}
	if err != nil {
		return fmt.Errorf("apply changes: %w", err)
	}
	if needSync {
		if _, err := ix.syncLocked(ctx, nil); err != nil {
			return err
		}
		return nil
	}
	if w.wrote {
		ix.mu.Lock()
		ix.lastIndexed = time.Now()
		ix.mu.Unlock()
	}
	ix.notify()
	return nil
}

// removeUnder deletes the note at p, or every note under p when p is a
// folder that went away.
func (ix *Index) removeUnder(w *writer, p string) {
	ix.mu.RLock()
	var gone []string
	if _, ok := ix.meta[p]; ok {
		gone = append(gone, p)
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	for k := range ix.meta {
		if strings.HasPrefix(k, prefix) {
			gone = append(gone, k)
		}
	}
	ix.mu.RUnlock()
	for _, k := range gone {
		w.remove(k)
	}
}
