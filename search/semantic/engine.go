package semantic

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Embedder turns texts into vectors; *llm.Embedder satisfies it. Model
// names the vectors it makes: vectors of another model are never mixed
// with its own.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Options configure Open.
type Options struct {
	// Index is the vault's text index: the notes to embed, the filters and
	// the lexical half of hybrid search (required).
	Index *search.Index
	// Embedder makes the vectors (required).
	Embedder Embedder
	// Path is the vector store file, beside the index and outside the
	// vault; "" keeps vectors in memory only.
	Path   string
	Logger *slog.Logger
	// Batch is the number of chunks embedded per request and committed per
	// transaction (default 64): a crash loses at most one batch.
	Batch int
}

// Engine keeps a vector for every chunk of every indexed note and searches
// them. Search, Related and Stats may be called from any goroutine; Sync
// and the watcher's updates are serialized.
type Engine struct {
	ix    *search.Index
	v     *vault.Vault
	emb   Embedder
	model string
	log   *slog.Logger
	batch int

	// syncMu serializes Sync and the watcher's updates, and guards st.
	syncMu sync.Mutex
	st     *store

	feed      *search.Changes
	closed    chan struct{}
	closeOnce sync.Once
	watchDone chan struct{}
	// updated is signalled (without blocking) after each update of the
	// watcher, for tests.
	updated chan struct{}

	embedded atomic.Int64 // chunks embedded since Open

	// health is the embedding endpoint's state (see health.go); probes
	// counts the goroutines trying it again, and recovered is signalled
	// (without blocking) when it answers again, for tests.
	health    health
	probes    sync.WaitGroup
	recovered chan struct{}
	// The bounds of health.go, shortened by tests.
	queryTimeout, probeFirst, probeMax time.Duration

	// mu guards the searchable matrix and the notes.
	mu       sync.RWMutex
	dims     int
	stride   int
	mat      []int8    // rows of stride values
	inv      []float32 // by row: inverse norm
	rowNote  []int32   // by row: note id
	rowChunk []int32   // by row: chunk index in its note
	notes    map[string]*noteState
	byID     []*noteState // by note id; nil for a free id
	freeIDs  []int32
	coh      coherence // the model's coherence on the vectors held

	// fusion weighs the two rankings of hybrid search.
	fusion fusion
}

// noteState is a note whose vectors are in the matrix.
type noteState struct {
	id   int32
	path string
	hash string
	rows []int32
}

// ErrNotEmbedded is the error of Related for a note without vectors yet.
var ErrNotEmbedded = errors.New("the note has no vectors yet")

// maxEmbedRunes caps the text of one chunk sent to the embedder: chunks
// are capped in runes already, this bounds a pathological one.
const maxEmbedRunes = 4000

// Open opens the vector store at opts.Path (or in memory) and subscribes
// to the index's changes. It makes no embedding call: Sync does, and Watch
// keeps vectors fresh after it. A store made with another model is
// emptied, and says so: every chunk will be embedded again.
func Open(opts Options) (*Engine, error) {
	if opts.Index == nil || opts.Embedder == nil {
		return nil, errors.New("semantic: Options.Index and Options.Embedder are required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	st, err := openStore(opts.Path, log.With("component", "semantic"))
	if err != nil {
		return nil, err
	}
	e := &Engine{
		ix:      opts.Index,
		v:       opts.Index.Vault(),
		emb:     opts.Embedder,
		model:   opts.Embedder.Model(),
		log:     log.With("component", "semantic"),
		batch:   opts.Batch,
		st:      st,
		closed:  make(chan struct{}),
		updated: make(chan struct{}, 1),
		notes:   map[string]*noteState{},
		fusion:  defaultFusion,

		recovered:    make(chan struct{}, 1),
		queryTimeout: queryTimeout,
		probeFirst:   probeFirst,
		probeMax:     probeMax,
	}
	if e.batch <= 0 {
		e.batch = 64
	}
	if st.model != e.model {
		if st.model != "" {
			e.log.Info(fmt.Sprintf("the embedding model changed from %q to %q: every chunk will be embedded again", st.model, e.model))
		}
		if err := st.reset(e.model, 0); err != nil {
			st.close()
			return nil, err
		}
	}
	e.setDims(st.dims)
	e.feed = e.ix.SubscribeChanges()
	return e, nil
}

// Model returns the embedding model's name.
func (e *Engine) Model() string { return e.model }

func (e *Engine) setDims(d int) {
	e.mu.Lock()
	e.dims, e.stride = d, strideOf(d)
	e.mu.Unlock()
}

// Stats describe what Sync did.
type Stats struct {
	Notes    int // notes with vectors after the sync
	Chunks   int // chunks with vectors after the sync
	Embedded int // chunks sent to the embedder
	Loaded   int // notes whose vectors came from the store
	Removed  int // notes dropped
}

// Sync brings the vectors in line with the index: notes that are gone
// drop their vectors, notes whose vectors are stored (under their
// content hash) are loaded, and only chunks with no stored vector are
// embedded, Batch at a time, each batch committed before the next. A
// chunk moved, renamed or unchanged is never embedded again. progress
// receives chunks embedded so far and chunks to embed. A failure keeps
// what was committed; the next Sync resumes from there.
func (e *Engine) Sync(ctx context.Context, progress search.ProgressFunc) (Stats, error) {
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	st, err := e.update(ctx, e.ix.Paths(), true, progress)
	if errors.Is(err, errDims) || errors.Is(err, errDamaged) {
		if err = e.restart(); err == nil {
			st, err = e.update(ctx, e.ix.Paths(), true, progress)
		}
	}
	if err != nil {
		return st, err
	}
	if n, err := e.st.collect(); err != nil {
		e.log.Warn("could not delete unused vectors", "error", err)
	} else if n > 0 {
		e.log.Debug("deleted unused vectors", "count", n)
	}
	return st, nil
}

// errDims is an embedder answering with vectors of another dimension than
// the stored ones.
var errDims = errors.New("the embedding dimension changed")

// restart drops every vector after a change of dimension.
func (e *Engine) restart() error {
	e.mu.Lock()
	e.mat, e.inv, e.rowNote, e.rowChunk = nil, nil, nil, nil
	e.notes, e.byID, e.freeIDs = map[string]*noteState{}, nil, nil
	e.mu.Unlock()
	if err := e.st.reset(e.model, 0); err != nil {
		return err
	}
	e.setDims(0)
	return nil
}

// pending is a note waiting for vectors.
type pending struct {
	path    string
	hash    string
	keys    []key
	missing int
}

// update brings the notes of paths up to date; with full, notes not in
// paths are dropped. It is called with syncMu held.
func (e *Engine) update(ctx context.Context, paths []string, full bool, progress search.ProgressFunc) (Stats, error) {
	var stats Stats
	if full {
		keep := make(map[string]bool, len(paths))
		for _, p := range paths {
			keep[p] = true
		}
		var gone []string
		e.mu.RLock()
		for p := range e.notes {
			if !keep[p] {
				gone = append(gone, p)
			}
		}
		e.mu.RUnlock()
		for p := range e.st.notes {
			if !keep[p] {
				if _, ok := e.notes[p]; !ok {
					gone = append(gone, p)
				}
			}
		}
		if err := e.drop(gone); err != nil {
			return stats, err
		}
		stats.Removed = len(gone)
	}

	var waiting []*pending
	var texts []string
	var textKeys []key
	queued := map[key]bool{}
	waitersOf := map[key][]*pending{}
	e.st.view(func(tx txn) {
		for _, p := range paths {
			if ctx.Err() != nil {
				return
			}
			meta, indexed := e.ix.Note(p)
			if !indexed {
				continue
			}
			e.mu.RLock()
			n := e.notes[p]
			e.mu.RUnlock()
			if n != nil && n.hash == meta.Hash {
				continue
			}
			if r, ok := e.st.notes[p]; ok && r.hash == meta.Hash {
				if vecs, ok := e.st.get(r.keys, e.stride); ok {
					e.place(p, r.hash, vecs)
					stats.Loaded++
					continue
				}
			}
			note, err := e.v.ReadNote(p)
			if err != nil {
				e.log.Debug("cannot read a note to embed it", "path", p, "error", err)
				continue
			}
			w := &pending{path: p, hash: note.Hash, keys: make([]key, len(note.Chunks))}
			for i, c := range note.Chunks {
				k := chunkKey(c)
				w.keys[i] = k
				if queued[k] {
					w.missing++
					waitersOf[k] = append(waitersOf[k], w)
					continue
				}
				if e.st.has(tx, k) {
					continue
				}
				queued[k] = true
				w.missing++
				waitersOf[k] = append(waitersOf[k], w)
				texts = append(texts, embedText(note.Title, c))
				textKeys = append(textKeys, k)
			}
			waiting = append(waiting, w)
		}
	})
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	// Notes needing no embedding call are complete now.
	var ready []*pending
	for _, w := range waiting {
		if w.missing == 0 {
			ready = append(ready, w)
		}
	}
	if err := e.complete(ready, nil, nil); err != nil {
		return stats, err
	}
	if len(texts) > 0 {
		e.log.Info("embedding chunks", "chunks", len(texts), "notes", len(waiting), "model", e.model)
	}
	if progress != nil && len(texts) > 0 {
		progress(0, len(texts))
	}
	if len(texts) > 0 {
		if err := e.downErr(); err != nil {
			return stats, err
		}
	}
	for start := 0; start < len(texts); start += e.batch {
		end := min(start+e.batch, len(texts))
		var raw [][]float32
		var err error
		if start == 0 {
			// The first request of a pass is one attempt: an endpoint
			// that cannot be reached is tried again in the background
			// (health.go) rather than retried here while the caller
			// waits. One that answers, overloaded or failing, is retried
			// as any batch is.
			raw, err = e.embedOnce(ctx, texts[start:end])
			var answered *llm.StatusError
			if err != nil && ctx.Err() == nil && unavailable(err) && errors.As(err, &answered) {
				raw, err = e.emb.Embed(ctx, texts[start:end])
			}
		} else {
			raw, err = e.emb.Embed(ctx, texts[start:end])
		}
		if err != nil && ctx.Err() == nil && unavailable(err) {
			e.markDown(err)
		}
		if err != nil {
			return stats, fmt.Errorf("embed %d chunks with %s: %w", end-start, e.model, err)
		}
		if len(raw) != end-start {
			return stats, fmt.Errorf("embed with %s: %d vectors for %d chunks", e.model, len(raw), end-start)
		}
		dims := len(raw[0])
		if e.dims == 0 {
			e.st.dims = dims
			e.setDims(dims)
		} else if dims != e.dims {
			e.log.Warn(fmt.Sprintf("the embedding model %q now returns vectors of %d dimensions instead of %d: every chunk will be embedded again", e.model, dims, e.dims))
			return stats, errDims
		}
		vecs := make([]vec, len(raw))
		for i, r := range raw {
			if len(r) != dims {
				return stats, fmt.Errorf("embed with %s: vectors of different lengths", e.model)
			}
			vecs[i].q, vecs[i].inv = quantize(r, e.stride)
		}
		keys := textKeys[start:end]
		ready = ready[:0]
		for _, k := range keys {
			for _, w := range waitersOf[k] {
				if w.missing--; w.missing == 0 {
					ready = append(ready, w)
				}
			}
		}
		if err := e.complete(ready, keys, vecs); err != nil {
			return stats, err
		}
		stats.Embedded += end - start
		e.embedded.Add(int64(end - start))
		if progress != nil {
			progress(end, len(texts))
		}
	}
	e.mu.RLock()
	stats.Notes, stats.Chunks = len(e.notes), len(e.rowNote)
	e.mu.RUnlock()
	return stats, nil
}

// complete commits the vectors just embedded (keys, vecs) with the records
// of the notes now complete, in one transaction, then puts those notes in
// the matrix.
func (e *Engine) complete(ready []*pending, keys []key, vecs []vec) error {
	if len(ready) == 0 && len(keys) == 0 {
		return nil
	}
	recs := make(map[string]noteRec, len(ready))
	for _, w := range ready {
		recs[w.path] = noteRec{hash: w.hash, keys: w.keys}
	}
	if err := e.st.commit(keys, vecs, recs, nil); err != nil {
		return err
	}
	fresh := make(map[key]vec, len(keys))
	for i, k := range keys {
		fresh[k] = vecs[i]
	}
	for _, w := range ready {
		out := make([]vec, len(w.keys))
		var missing []key
		for i, k := range w.keys {
			if v, ok := fresh[k]; ok {
				out[i] = v
			} else {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			stored, ok := e.st.get(w.keys, e.stride)
			if !ok {
				return fmt.Errorf("vector store: the vectors of %s are missing", w.path)
			}
			out = stored
		}
		e.place(w.path, w.hash, out)
	}
	return nil
}

// drop removes the vectors of the notes at paths, and their records.
func (e *Engine) drop(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := e.st.commit(nil, nil, nil, paths); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range paths {
		if n := e.notes[p]; n != nil {
			e.removeRows(n)
			delete(e.notes, p)
			e.byID[n.id] = nil
			e.freeIDs = append(e.freeIDs, n.id)
		}
	}
	return nil
}

// place puts the vectors of the note at path in the matrix, replacing its
// old ones.
func (e *Engine) place(path, hash string, vecs []vec) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.notes[path]
	if n == nil {
		n = &noteState{path: path}
		if k := len(e.freeIDs); k > 0 {
			n.id = e.freeIDs[k-1]
			e.freeIDs = e.freeIDs[:k-1]
			e.byID[n.id] = n
		} else {
			n.id = int32(len(e.byID))
			e.byID = append(e.byID, n)
		}
		e.notes[path] = n
	}
	e.removeRows(n)
	n.hash = hash
	for i, v := range vecs {
		r := int32(len(e.rowNote))
		e.mat = append(e.mat, v.q[:e.stride]...)
		e.inv = append(e.inv, v.inv)
		e.rowNote = append(e.rowNote, n.id)
		e.rowChunk = append(e.rowChunk, int32(i))
		n.rows = append(n.rows, r)
	}
}

// removeRows takes the rows of n out of the matrix, moving the last row
// into each freed one. It is called with mu held for writing.
func (e *Engine) removeRows(n *noteState) {
	rows := slices.Clone(n.rows)
	slices.Sort(rows)
	s := e.stride
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		last := int32(len(e.rowNote) - 1)
		if r != last {
			copy(e.mat[int(r)*s:int(r+1)*s], e.mat[int(last)*s:int(last+1)*s])
			e.inv[r] = e.inv[last]
			e.rowNote[r] = e.rowNote[last]
			e.rowChunk[r] = e.rowChunk[last]
			owner := e.byID[e.rowNote[r]]
			for j, x := range owner.rows {
				if x == last {
					owner.rows[j] = r
					break
				}
			}
		}
		e.mat = e.mat[:int(last)*s]
		e.inv = e.inv[:last]
		e.rowNote = e.rowNote[:last]
		e.rowChunk = e.rowChunk[:last]
	}
	n.rows = n.rows[:0]
}

// chunkKey is the key of a chunk's vector: its heading path and text.
func chunkKey(c vault.Chunk) key {
	h := sha256.New()
	h.Write([]byte(c.Heading))
	h.Write([]byte{0})
	h.Write([]byte(c.Text))
	var k key
	copy(k[:], h.Sum(nil))
	return k
}

// embedText is what is embedded for a chunk: the note's title and the
// chunk's heading path give it context its text may lack. The vector is
// stored under the chunk's own key, so a renamed note keeps its vectors
// (with the title they were made with) instead of being embedded again.
func embedText(title string, c vault.Chunk) string {
	s := title
	if c.Heading != "" {
		s += "\n" + c.Heading
	}
	s += "\n\n" + c.Text
	return truncate.Runes(s, maxEmbedRunes)
}

// Watch keeps the vectors in line with the index's changes (the watcher's
// batches) until ctx ends or the engine is closed. Call it once, after
// the first Sync. A failed update (the embedder down) is logged; the
// notes it missed are embedded by the next change or Sync.
func (e *Engine) Watch(ctx context.Context) {
	e.watchDone = make(chan struct{})
	go func() {
		defer close(e.watchDone)
		for {
			select {
			case <-ctx.Done():
				return
			case <-e.closed:
				return
			case <-e.feed.Ready():
			}
			changes := e.feed.Take()
			var gone, changed []string
			for _, c := range changes {
				if c.Kind == search.NoteRemoved {
					gone = append(gone, c.Path)
				} else {
					changed = append(changed, c.Path)
				}
			}
			e.syncMu.Lock()
			err := e.drop(gone)
			if err == nil {
				_, err = e.update(ctx, changed, false, nil)
			}
			if errors.Is(err, errDims) || errors.Is(err, errDamaged) {
				if err = e.restart(); err == nil {
					_, err = e.update(ctx, e.ix.Paths(), true, nil)
				}
			}
			e.syncMu.Unlock()
			if err != nil && ctx.Err() == nil {
				e.log.Warn("could not update the vectors of changed notes", "notes", len(changes), "error", err)
			}
			select {
			case e.updated <- struct{}{}:
			default:
			}
		}
	}()
}

// Close stops the watcher and closes the store.
func (e *Engine) Close() error {
	var err error
	e.closeOnce.Do(func() {
		e.health.mu.Lock()
		e.health.closed = true
		e.health.mu.Unlock()
		close(e.closed)
		e.probes.Wait()
		if e.watchDone != nil {
			<-e.watchDone
		}
		e.feed.Close()
		e.syncMu.Lock()
		err = e.st.close()
		e.syncMu.Unlock()
	})
	return err
}

// Embedded returns the number of chunks embedded since Open.
func (e *Engine) Embedded() int64 { return e.embedded.Load() }

// MemoryBytes is the memory the vectors take: stride bytes per chunk plus
// 12 bytes of row data (inverse norm, note, chunk).
func (e *Engine) MemoryBytes() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.rowNote) * (e.stride + 12)
}
