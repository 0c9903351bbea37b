package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sort"
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

	var toRead, all []string
	// ix.meta is only written with writeMu held, which we hold: reading it
	// without mu does not race, and does not block Paths() during the walk.
	// The paths on disk are only needed to find the notes that went away,
	// so a first index (nothing indexed) does not keep a set of them.
	var onDisk map[string]bool
	if len(ix.meta) > 0 {
		onDisk = make(map[string]bool, len(ix.meta))
	}
	err := ix.v.Walk(ctx, func(fi vault.FileInfo) error {
		if onDisk != nil {
			onDisk[fi.Path] = true
		}
		all = append(all, fi.Path)
		m := ix.meta[fi.Path]
		if m != nil && m.Size == fi.Size && m.MTime.Equal(fi.ModTime) {
			stats.Unchanged++
			return nil
		}
		toRead = append(toRead, fi.Path)
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
	if fullLinkScan(len(ix.meta), len(toRead)+len(removed)) {
		err = ix.applyFull(ctx, all, toRead, removed, progress, &stats)
	} else {
		err = ix.applyIncremental(ctx, toRead, removed, progress, &stats)
	}
	stats.Took = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("sync: %w", err)
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
// keys and words, notes by name, linking notes by name, paths) in the
// background, so the first search or save after a sync does not wait for
// them. Close waits for it.
func (ix *Index) warm() {
	ix.warming.Add(1)
	go func() {
		defer ix.warming.Done()
		if ix.isClosed() {
			return
		}
		ix.buildTitles()
		ix.keys()
		ix.linkers()
		ix.pathTables()
	}()
}

// fullLinkScan reports whether a change of changed notes in an index of
// indexed notes is better done by scanning the links of the whole vault
// than by following the link fields of the changed notes.
func fullLinkScan(indexed, changed int) bool {
	return indexed == 0 || changed > 200 && changed > indexed/8
}

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
	if w.bulk && len(ix.meta) == 0 {
		if w.spill, err = newMetaSpill(lp.dir); err != nil {
			return err
		}
		defer func() {
			if w.spill != nil {
				// The last batch was not written: the index has the
				// notes of the batches before it.
				if lerr := w.loadSpill(nil, nil); lerr != nil && err == nil {
					err = lerr
				}
			}
		}()
	}
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
			} else if m := ix.meta[p]; m != nil && m.inHash != ins[p].hashOrZero() {
				read = append(read, p)
				w.total++
			}
		}
		err = ix.readNotes(ctx, read, func(r noteRead) error {
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
	old := ix.meta[r.path]
	switch {
	case r.err != nil && (isNotExist(r.err) || errors.Is(r.err, vault.ErrNotMarkdown)):
		// Vanished since the walk, or not a note (binary data): it is
		// not in the vault.
		if errors.Is(r.err, vault.ErrNotMarkdown) {
			ix.log.Debug("skipping a file that is not a note", "path", r.path, "err", r.err)
		}
		if old != nil {
			stats.Removed++
			w.remove(r.path)
		} else {
			w.done++
		}
	case r.err != nil:
		stats.Failed++
		ix.log.Warn("cannot index note", "path", r.path, "err", r.err)
		w.done++
	case old != nil && old.Hash == r.note.Hash && old.inHash == in.hashOrZero():
		stats.Unchanged++
		if !old.MTime.Equal(r.note.ModTime) || old.Size != r.note.Size {
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

// finish flushes the writer and waits for the index to be persisted. A
// sync cancelled part way still writes what it has read, with the state
// record, so the next sync goes on from there instead of starting over.
func (ix *Index) finish(w *writer, err error, progress ProgressFunc) error {
	cancelled := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	if cancelled {
		w.ctx = context.WithoutCancel(w.ctx)
	}
	ferr := w.maybeFlush(true)
	if err == nil {
		err = ferr
	}
	if (err == nil || cancelled && ferr == nil) && w.wrote {
		ix.waitPersisted(time.Minute)
	}
	if err == nil && progress != nil {
		progress(w.total, w.total)
	}
	return err
}

// applyIncremental indexes the notes of toRead and removes those of
// removed, and rewrites the notes whose inbound link context they change
// (see links.go). The changed notes are held in memory until written, so
// this is for small changes; applyFull streams.
func (ix *Index) applyIncremental(ctx context.Context, toRead, removed []string, progress ProgressFunc, stats *SyncStats) error {
	w := ix.newWriter(ctx, len(toRead)+len(removed), progress)
	var reads []noteRead
	err := ix.readNotes(ctx, toRead, func(r noteRead) error {
		reads = append(reads, r)
		return nil
	})
	if err != nil {
		return err
	}
	// What changes: notes to remove, notes whose content changed (new or
	// updated), and notes only touched.
	gone := map[string]bool{}
	for _, p := range removed {
		if ix.meta[p] != nil {
			gone[p] = true
		}
	}
	changed := map[string]noteRead{}
	var failed []noteRead
	for _, r := range reads {
		switch old := ix.meta[r.path]; {
		case r.err != nil && (isNotExist(r.err) || errors.Is(r.err, vault.ErrNotMarkdown)):
			if old != nil {
				gone[r.path] = true
			}
		case r.err != nil:
			failed = append(failed, r)
		default:
			changed[r.path] = r // touched notes too: their inbound context may change
		}
	}
	ins := ix.inboundAfter(changed, gone)
	for p := range gone {
		w.remove(p)
		stats.Removed++
	}
	for _, r := range failed {
		ix.classify(w, r, nil, stats)
	}
	var reread []string
	for p, in := range ins {
		if r, ok := changed[p]; ok {
			ix.classify(w, r, in, stats)
			delete(changed, p)
		} else if m := ix.meta[p]; m != nil && m.inHash != in.hashOrZero() {
			reread = append(reread, p)
		}
	}
	for p, r := range changed { // inbound context unchanged
		ix.classify(w, r, ix.storedInbound(p), stats)
	}
	sort.Strings(reread)
	w.total += len(reread)
	err = ix.readNotes(ctx, reread, func(r noteRead) error {
		var discard SyncStats // a linked note rewritten is not a change of the vault
		ix.classify(w, r, ins[r.path], &discard)
		return w.maybeFlush(false)
	})
	return ix.finish(w, err, progress)
}

// inboundAfter works out which notes' inbound link context the changed
// (read, with their links) and gone notes may change, and returns their new
// inbound context (nil for none). A changed note not in the result keeps
// the inbound context it had (storedInbound). Called with writeMu held.
func (ix *Index) inboundAfter(changed map[string]noteRead, gone map[string]bool) map[string]*inbound {
	// The notes after the change, by key.
	keys := keyView{base: ix.keys(), over: map[string][]string{}}
	added, dropped := map[string]bool{}, map[string]bool{}
	for p := range changed {
		if ix.meta[p] == nil {
			added[p] = true
		}
	}
	for p := range gone {
		dropped[p] = true
	}
	for _, set := range []map[string]bool{added, dropped} {
		for p := range set {
			k := vault.NoteKey(p)
			var ps []string
			for _, q := range keys.get(k) {
				if !dropped[q] {
					ps = append(ps, q)
				}
			}
			if added[p] {
				ps = append(ps, p)
			}
			sort.Strings(ps)
			keys.over[k] = ps
		}
	}

	// A changed note whose links (with their context) are the same as
	// before changes nothing for the notes it links to: most edits.
	relinked := map[string]bool{}
	for p, r := range changed {
		if m := ix.meta[p]; m == nil || m.outHash != outHash(r.links) {
			relinked[p] = true
		}
	}
	dirty := map[string]bool{}
	for p := range added {
		dirty[p] = true // a new note's inbound context is not known yet
	}
	for p := range relinked {
		for _, lc := range changed[p].links {
			if to, ok := keys.resolve(lc, p); ok {
				dirty[to] = true
			}
		}
	}
	// The old targets of a relinked or removed note: every note named
	// as one of its links was (a superset; recomputing is exact).
	for _, set := range []map[string]bool{relinked, gone} {
		for p := range set {
			if m := ix.meta[p]; m != nil {
				for k := range m.keys.all() {
					for _, t := range keys.get(k) {
						dirty[t] = true
					}
				}
			}
		}
	}
	for _, set := range []map[string]bool{added, dropped} {
		for p := range set {
			for _, q := range keys.get(vault.NoteKey(p)) {
				dirty[q] = true
			}
		}
	}
	for p := range gone {
		delete(dirty, p)
	}

	// The inbound context of each dirty note, from the links to its name.
	// When the notes of that name are the same before and after, those
	// are the links stored with them (from notes that did not change) and
	// the changed notes' own: no note is read. When a note of that name
	// came or went, a link may now resolve elsewhere or where it resolved
	// nowhere before: every note linking to the name is read from disk.
	named := map[string]bool{}
	for _, set := range []map[string]bool{added, dropped} {
		for p := range set {
			named[vault.NoteKey(p)] = true
		}
	}
	before := ix.keys()
	scanned := map[string][]vault.LinkContext{}
	for p, r := range changed {
		scanned[p] = r.links
	}
	ins := make(map[string]*inbound, len(dirty))
	byKey := map[string][]string{}
	for t := range dirty {
		byKey[vault.NoteKey(t)] = append(byKey[vault.NoteKey(t)], t)
	}
	linkersOf := ix.linkers()
	for k, targets := range byKey {
		var items []inboundItem
		if named[k] {
			for _, src := range linkersOf[k] {
				if _, ok := changed[src]; ok || gone[src] {
					continue
				}
				lcs, ok := scanned[src]
				if !ok {
					lcs, _ = ix.readLinks(src)
					scanned[src] = lcs
				}
				items = appendItems(items, src, lcs, k)
			}
		} else {
			for _, q := range before[k] {
				for _, it := range ix.storedItems(q) {
					if _, ok := changed[it.Src]; !ok && !gone[it.Src] {
						items = append(items, it)
					}
				}
			}
		}
		for p, r := range changed {
			items = appendItems(items, p, r.links, k)
		}
		builders := make(map[string]*inboundBuilder, len(targets))
		for _, t := range targets {
			builders[t] = &inboundBuilder{}
		}
		for _, it := range items {
			if to, ok := keys.resolve(it.L, it.Src); ok && builders[to] != nil {
				builders[to].add(it.Src, it.I, it.L)
			}
		}
		for t, b := range builders {
			ins[t] = b.build()
		}
	}
	return ins
}

// appendItems appends the links of lcs (of the note src) whose key is k.
func appendItems(items []inboundItem, src string, lcs []vault.LinkContext, k string) []inboundItem {
	for i, lc := range lcs {
		if vault.LinkKey(lc.Target) == k {
			items = append(items, inboundItem{src, i, lc})
		}
	}
	return items
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

// noteRead is one note read and parsed, with its links, or the error.
type noteRead struct {
	path  string
	seq   int // its place in the paths read
	note  *vault.Note
	links []vault.LinkContext
	err   error
}

// readNotes reads, parses and scans the links of paths with a pool of
// workers and hands each result to fn, in the order of paths, on the
// calling goroutine (so it may touch the writer).
func (ix *Index) readNotes(ctx context.Context, paths []string, fn func(noteRead) error) error {
	if len(paths) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		seq int
		p   string
	}
	jobs := make(chan job)
	// The workers read and parse ahead while the writer waits for a
	// batch to be analysed and written: up to half a batch of notes, in
	// flight or waiting for the notes before them.
	ahead := max(2*ix.workers, min(len(paths), ix.batchSz/2))
	slots := make(chan struct{}, ahead)
	results := make(chan noteRead, ahead)
	var wg sync.WaitGroup
	for i := 0; i < ix.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := noteRead{path: j.p, seq: j.seq}
				raw, err := ix.v.ReadRaw(j.p, -1)
				if err != nil {
					r.err = err
				} else {
					r.note = vault.ParseForIndex(raw.Path, raw.Content, raw.ModTime)
					r.links = vault.LinkContexts(raw.Path, raw.Content)
				}
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i, p := range paths {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{i, p}:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	// The notes in flight are those from next to next+ahead-1: each waits
	// in its slot of ready until the ones before it were handed over.
	ready := make([]*noteRead, ahead)
	next := 0
	for r := range results {
		ready[r.seq%ahead] = &r
		for ready[next%ahead] != nil {
			r := ready[next%ahead]
			ready[next%ahead] = nil
			next++
			<-slots
			if err := fn(*r); err != nil {
				cancel()
				for range results {
				}
				return err
			}
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
}

// bulkMemoryLimit sets the soft memory limit and GC percent for a bulk
// sync and returns the func that restores those before it. A process with
// its own limit (GOMEMLIMIT) keeps both.
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
			// the bulk limit. Collected now, the goal is twice what a
			// serving index keeps.
			debug.FreeOSMemory()
			debug.SetMemoryLimit(bulkMu.prev)
			debug.SetGCPercent(bulkMu.prevGC)
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
	var reads, gone []string
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
			gone = append(gone, ix.notesUnder(p)...)
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
	if needSync {
		_, err := ix.syncLocked(ctx, nil)
		return err
	}
	var stats SyncStats
	var err error
	if fullLinkScan(len(ix.meta), len(reads)+len(gone)) {
		// A large batch (a folder of notes copied in): as a sync does.
		_, err = ix.syncLocked(ctx, nil)
		return err
	}
	if err = ix.applyIncremental(ctx, reads, gone, nil, &stats); err != nil {
		return fmt.Errorf("apply changes: %w", err)
	}
	ix.mu.Lock()
	ix.lastIndexed = time.Now()
	ix.mu.Unlock()
	ix.notify()
	return nil
}

// notesUnder returns the note at p, or every note under p when p is a
// folder that went away.
func (ix *Index) notesUnder(p string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
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
	return gone
}
