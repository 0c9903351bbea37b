package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bolt "go.etcd.io/bbolt"

	"github.com/vault-agent/vault-agent/internal/memtrim"
	"github.com/vault-agent/vault-agent/vault"
)

// Options configures Open.
type Options struct {
	// Path is the index directory; "" keeps the index in memory (tests).
	Path   string
	Vault  *vault.Vault
	Logger *slog.Logger
	// BatchSize is the number of notes per bleve batch; 0 means 500.
	BatchSize int
	// Workers is the number of goroutines parsing notes; 0 means GOMAXPROCS.
	Workers int
	// Debounce is handed to the vault watcher by Watch; 0 keeps its default.
	Debounce time.Duration
}

// NoteMeta is the cached metadata of one indexed note.
type NoteMeta struct {
	Path    string    `json:"path"`
	Title   string    `json:"title"`
	Aliases []string  `json:"aliases,omitempty"`
	Tags    []string  `json:"tags,omitempty"`
	MTime   time.Time `json:"mtime"`
	// Date is the note's own date (vault.Note.Date); zero when it has none.
	Date time.Time `json:"date,omitzero"`
	Size int64     `json:"size"`
	Hash string    `json:"hash"`

	// lens are the analysed lengths of the note's text fields (lenFields),
	// when hasLens; inHash is the hash of its inbound link context. The
	// per-note fields below hold no pointers but keys' one: a large
	// vault's first index keeps them for every note while the collector
	// runs every few tens of megabytes, and what it has to scan is what
	// makes each cycle cost more as the vault grows.
	lens    [numLenFields]int32
	hasLens bool
	inHash  uint64
	keys    linkKeys // vault.LinkKey of each of its links, sorted, unique
	outHash uint64   // outHash of its links
}

// Internal keys of the bleve index. keyNotes holds the id of the index,
// which its note store (notestore.go) holds too.
var (
	keySchema = []byte("vault-agent/schema")
	keyVault  = []byte("vault-agent/vault")
	keyNotes  = []byte("vault-agent/notes")
)

// Files of the index directory that belong to bleve (removed on rebuild)
// and to us.
const (
	bleveMetaFile = "index_meta.json"
	bleveStoreDir = "store"
	lockFileName  = "vault-agent.lock"
)

// Index is the search index of one vault. Search, Status, Count, Tags,
// Paths and Note may be called from any goroutine at any time; Sync,
// Rebuild and Apply are serialized internally.
type Index struct {
	opts    Options
	v       *vault.Vault
	log     *slog.Logger
	path    string // "" for in-memory
	m       *mapping.IndexMappingImpl
	stamp   string
	textAn  analysis.Analyzer
	fused   *fusedChain // textAn's filters fused, for the documents written
	cjkAn   analysis.Analyzer
	lock    *os.File
	batchSz int
	workers int
	chunks  *chunkCache // parsed chunks for snippets
	advice  segmentAdvice
	pages   pageBudget // the segments' pages released between searches
	fill    fillers
	feeds   changeFeeds // SubscribeChanges

	// idxMu guards idx, which Rebuild replaces; searches hold it for reading.
	idxMu sync.RWMutex
	idx   bleve.Index

	// writeMu serializes everything that writes to the index.
	writeMu       sync.Mutex
	pendingReason string                        // set by Open: the next Sync rebuilds, saying why
	corrupt       bool                          // the index on disk is damaged: moved aside, not removed
	rebuilding    atomic.Bool                   // a search found damage and a rebuild runs
	rebuildDone   atomic.Pointer[chan struct{}] // closed when that rebuild ends
	created       bool                          // set by Open: there was no index, a new one was made
	store         *noteStore                    // the notes' records; nil for an index in memory
	// suspect are the notes whose last batch may not have reached both
	// the bleve index and the store (a crash): the next Sync reads each
	// of them again, or deletes its document when it is gone.
	suspect map[string]bool
	// interrupted is set when a change was cut short (a crash, a failed
	// or cancelled sync): the next Sync scans the links of every note.
	interrupted bool

	// mu guards the metadata cache.
	mu          sync.RWMutex
	meta        *noteMap
	memKeys     map[string]linkKeys // link keys of each note of an index in memory (one on disk reads its store's)
	keyIdx      *keyIndex           // by vault.NoteKey; nil when stale
	titleIdx    *titleIndex         // by titleKey; nil until first used
	titleVocab  *wordCounts         // words of titles and aliases: notes holding each; with titleIdx
	metaGen     uint64              // counts changes of meta
	lenSum      [numLenFields]int64 // sum of the known lens of each field
	lenNotes    int                 // notes whose lens are known
	paths       *pathTable          // nil when stale
	lastIndexed time.Time

	indexing     atomic.Bool
	persistWaits atomic.Int64 // waits of a writer for the persister (tests)
	persistAhead atomic.Int64 // most batches a writer had unpersisted after a batch (tests)
	applies      atomic.Int64 // watcher batches applied (tests, benchmarks)
	watching     atomic.Bool
	warming      sync.WaitGroup // background table builds (warm)

	subsMu sync.Mutex
	subs   map[int]chan struct{}
	nextID int

	// testBeforeSearch, set by tests only, runs before each bleve search:
	// a fault there is one in bleve's reading of the index.
	testBeforeSearch func()
	// unhookIdle unregisters ReleaseIdle from the process's idle release.
	unhookIdle func()

	closeOnce   sync.Once
	closed      chan struct{}
	watchCancel context.CancelFunc // guarded by subsMu
	watchDone   chan struct{}      // guarded by subsMu
}

// Open opens the index at opts.Path, creating it if needed. An index that
// cannot be opened, was built with another schema or for another vault, or
// whose state disagrees with its documents is wiped and recreated; the next
// Sync rebuilds it and reports why in SyncStats.Reason. When another process
// holds the index, Open fails at once with ErrLocked.
//
// Open does not read the vault: call Sync to bring the index up to date.
func Open(ctx context.Context, opts Options) (*Index, error) {
	if opts.Vault == nil {
		return nil, errors.New("search: Options.Vault is nil")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := newMapping()
	if err != nil {
		return nil, fmt.Errorf("index mapping: %w", err)
	}
	stamp, err := schemaStamp(m)
	if err != nil {
		return nil, fmt.Errorf("index mapping: %w", err)
	}
	ix := &Index{
		opts:    opts,
		v:       opts.Vault,
		log:     log.With("component", "search"),
		m:       m,
		stamp:   stamp,
		textAn:  m.AnalyzerNamed(textAnalyzer),
		cjkAn:   m.AnalyzerNamed(cjkAnalyzer),
		batchSz: opts.BatchSize,
		chunks:  newChunkCache(defaultChunkCacheBytes),
		workers: opts.Workers,
		meta:    newNoteMap(0),
		subs:    make(map[int]chan struct{}),
		closed:  make(chan struct{}),
	}
	if ix.textAn == nil || ix.cjkAn == nil {
		return nil, errors.New("index mapping: analyzers missing")
	}
	ix.fused = fusedChainFor(ix.textAn)
	ix.unhookIdle = func() {} // an index in memory maps nothing
	if ix.batchSz <= 0 {
		ix.batchSz = 500
	}
	if ix.workers <= 0 {
		ix.workers = runtime.GOMAXPROCS(0)
	}
	if opts.Path == "" {
		idx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
		if err != nil {
			return nil, fmt.Errorf("create in-memory index: %w", err)
		}
		ix.idx = idx
		ix.created = true
		if err := ix.writeStamp(""); err != nil {
			idx.Close()
			return nil, err
		}
		return ix, nil
	}

	path, err := ix.checkPath(opts.Path)
	if err != nil {
		return nil, err
	}
	ix.path = path
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("create index dir: %w", err)
	}
	ix.lock, err = lockDir(filepath.Join(path, lockFileName))
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	ix.removeStaleScans()
	if err := ix.openOrCreate(ctx); err != nil {
		ix.unlock()
		return nil, err
	}
	ix.unhookIdle = memtrim.OnIdle(ix.ReleaseIdle)
	return ix, nil
}

// removeStaleScans removes the folders a full index keeps its link scan
// and note metadata in (linkParts, metaSpill) left by a process that did
// not end its sync (killed, crashed): with the index locked, none is in
// use, and on a large vault they hold hundreds of megabytes.
func (ix *Index) removeStaleScans() {
	stale, _ := filepath.Glob(filepath.Join(ix.path, linkScanPrefix+"*"))
	for _, dir := range stale {
		if err := os.RemoveAll(dir); err != nil {
			ix.log.Warn("cannot remove a stale link scan", "dir", dir, "err", err)
		}
	}
}

// checkPath resolves the index path, refusing a directory inside the vault
// and a non-empty directory that is not an index (a typo in --index must
// not lead to deleting someone's files on rebuild).
func (ix *Index) checkPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("index path %s: %w", p, err)
	}
	root, err := filepath.Abs(ix.v.Root())
	if err != nil {
		return "", fmt.Errorf("vault root: %w", err)
	}
	realIdx, realRoot := evalExisting(abs), evalExisting(root)
	if rel, err := filepath.Rel(realRoot, realIdx); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: index path %s is inside the vault %s: the vault is read-only, choose a directory outside it", ErrIndexInVault, abs, root)
	}
	entries, err := os.ReadDir(abs)
	if err == nil && len(entries) > 0 {
		ours := false
		for _, e := range entries {
			if n := e.Name(); n == bleveMetaFile || n == lockFileName {
				ours = true
			}
		}
		if !ours {
			return "", fmt.Errorf("index path %s is a non-empty directory that is not a vault-agent index; choose an empty or new directory", abs)
		}
	}
	return abs, nil
}

// evalExisting resolves symlinks in the longest existing prefix of p.
func evalExisting(p string) string {
	var rest []string
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

func runtimeConfig() map[string]interface{} {
	return map[string]interface{}{
		// Fail instead of waiting forever if root.bolt is locked; the
		// lock file normally reports this first.
		"bolt_timeout": "1s",
		// Batches return once searchable instead of once persisted: the
		// persister overlaps with the next batch's analysis. Durability
		// is restored by waiting for the last batch of each sync to be
		// persisted (see flush); a crash loses at most recent work, which
		// the next Sync redoes because the state record is persisted in
		// the same snapshot as the documents.
		"unsafe_batch": true,
		// A merged segment holds at most maxSegmentDocs notes. Merging
		// maps every page of the segments it reads, so without a cap the
		// last merges of a large vault's first index read the whole index
		// at once and the memory of indexing grows with the vault; with
		// it, a 100,000-note vault ends in ten to twenty segments, which a
		// search reads side by side.
		"scorchMergePlanOptions": map[string]interface{}{"MaxSegmentSize": maxSegmentDocs},
		// Tells waitSettled when the merger and the persister progress.
		"eventCallbackName": scorchEvents,
	}
}

// maxSegmentDocs caps the notes of a merged segment (see runtimeConfig).
const maxSegmentDocs = 10000

func (ix *Index) openOrCreate(ctx context.Context) error {
	reason := ""
	if _, err := os.Stat(filepath.Join(ix.path, bleveMetaFile)); err == nil {
		idx, st, why, err := ix.openExisting()
		if err != nil {
			return err
		}
		if why == "" {
			ix.idx = idx
			ix.setMeta(st.notes)
			ix.interrupted = st.interrupted || len(st.dirty) > 0
			if ix.interrupted {
				ix.log.Info("the last run ended while writing the index: the next sync checks the notes it was writing and the links of every note", "notes", len(st.dirty))
			}
			if len(st.dirty) > 0 {
				ix.suspect = make(map[string]bool, len(st.dirty))
				for _, p := range st.dirty {
					ix.suspect[p] = true
				}
			}
			return nil
		}
		reason = why
		if idx != nil {
			idx.Close()
		}
	} else if _, err := os.Stat(filepath.Join(ix.path, bleveStoreDir)); err == nil {
		reason = "index metadata missing"
	}
	if reason != "" {
		ix.log.Warn("rebuilding index", "path", ix.path, "reason", reason)
		ix.pendingReason = reason
	} else {
		ix.created = true
	}
	return ix.create()
}

// Created reports whether Open found no index at its path (or was asked for
// one in memory) and made a new, empty one, which the first Sync fills. An
// index that existed but had to be rebuilt is not created: its first Sync
// reports Rebuilt and the reason instead.
func (ix *Index) Created() bool { return ix.created }

// openExisting opens the index on disk and its note store, and checks
// them. A non-empty why means the index must be rebuilt; err is only for
// conditions a rebuild cannot fix.
func (ix *Index) openExisting() (idx bleve.Index, st storeState, why string, err error) {
	defer func() {
		if r := recover(); r != nil {
			if idx != nil {
				idx.Close()
			}
			idx, st, why, err = nil, storeState{}, fmt.Sprintf("index is corrupt (panic while opening: %v)", r), nil
			ix.corrupt = true
		}
	}()
	idx, oerr := bleve.OpenUsing(ix.path, runtimeConfig())
	if oerr != nil {
		if errors.Is(oerr, bolt.ErrTimeout) {
			return nil, st, "", fmt.Errorf("open index %s: %w", ix.path, ErrLocked)
		}
		ix.corrupt = true
		return nil, st, "index is corrupt or unreadable: " + oerr.Error(), nil
	}
	live, lerr := liveSegments(idx)
	if lerr != nil {
		ix.corrupt = true
		return idx, st, "index is corrupt or unreadable: " + lerr.Error(), nil
	}
	if why := ix.verifySegments(live); why != "" {
		ix.corrupt = true
		return idx, st, why, nil
	}
	stamp, gerr := idx.GetInternal(keySchema)
	if gerr != nil {
		return idx, st, "index is corrupt: " + gerr.Error(), nil
	}
	if string(stamp) != ix.stamp {
		if len(stamp) == 0 {
			return idx, st, "index has no schema stamp", nil
		}
		return idx, st, fmt.Sprintf("index schema %q differs from %q", stamp, ix.stamp), nil
	}
	if root, _ := idx.GetInternal(keyVault); string(root) != ix.vaultKey() {
		return idx, st, fmt.Sprintf("index was built for vault %q", root), nil
	}
	id, gerr := idx.GetInternal(keyNotes)
	if gerr != nil {
		return idx, st, "index is corrupt: " + gerr.Error(), nil
	}
	if len(id) == 0 {
		return idx, st, "index keeps its notes' records in an older way", nil
	}
	if ix.store, err = openNoteStore(ix.path); err != nil {
		if errors.Is(err, ErrLocked) {
			idx.Close()
			return nil, st, "", err
		}
		return idx, st, "note records unreadable: " + err.Error(), nil
	}
	if st, err = ix.store.load(); err != nil {
		return idx, storeState{}, "note records unreadable: " + err.Error(), nil
	}
	if err := ix.store.unmap(); err != nil {
		return idx, storeState{}, "", err
	}
	if st.id != string(id) {
		return idx, storeState{}, "note records missing or of another index", nil
	}
	n, cerr := idx.DocCount()
	if cerr != nil {
		return idx, st, "index is corrupt: " + cerr.Error(), nil
	}
	// A dirty note may have a document and no record, or the reverse;
	// every other note has both or neither.
	if diff := int(n) - len(st.notes); diff > len(st.dirty) || -diff > len(st.dirty) {
		return idx, st, fmt.Sprintf("index holds %d documents but records %d notes", n, len(st.notes)), nil
	}
	// Touch the segments: a damaged segment file fails here rather than
	// on the first real search.
	probe := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 1, 0, false)
	if _, serr := idx.Search(probe); serr != nil {
		ix.corrupt = true
		return idx, st, "index is corrupt: " + serr.Error(), nil
	}
	return idx, st, "", nil
}

// create makes a fresh, empty index, removing bleve's files and the note
// store first (or moving bleve's aside, when they are damaged). The store
// goes first and comes back last, with the new index's id: a crash in
// between leaves an index whose store is missing or of another index,
// which the next Open rebuilds.
func (ix *Index) create() error {
	if err := ix.closeStore(); err != nil {
		ix.log.Warn("closing note records", "err", err)
	}
	if err := removeNoteStore(ix.path); err != nil {
		return err
	}
	if ix.corrupt && ix.path != "" {
		if err := ix.moveAside(); err != nil {
			return err
		}
	} else if err := ix.removeIndexFiles(); err != nil {
		return err
	}
	ix.corrupt = false
	idx, err := bleve.NewUsing(ix.path, ix.m, scorch.Name, scorch.Name, runtimeConfig())
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return fmt.Errorf("create index %s: %w", ix.path, ErrLocked)
		}
		return fmt.Errorf("create index %s: %w", ix.path, err)
	}
	ix.idx = idx
	ix.setMeta(nil)
	ix.suspect, ix.interrupted = nil, false
	id := newStoreID()
	if err := ix.writeStamp(id); err != nil {
		return err
	}
	if ix.store, err = openNoteStore(ix.path); err != nil {
		return err
	}
	return ix.store.start(id)
}

// closeStore closes the note store, if open.
func (ix *Index) closeStore() error {
	if ix.store == nil {
		return nil
	}
	err := ix.store.close()
	ix.store = nil
	return err
}

// removeIndexFiles deletes what bleve keeps in the index directory, and
// nothing else.
func (ix *Index) removeIndexFiles() error {
	if ix.path == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(ix.path, bleveMetaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove old index: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(ix.path, bleveStoreDir)); err != nil {
		return fmt.Errorf("remove old index: %w", err)
	}
	return nil
}

func (ix *Index) vaultKey() string {
	root, err := filepath.Abs(ix.v.Root())
	if err != nil {
		root = ix.v.Root()
	}
	return evalExisting(root)
}

// writeStamp writes the schema stamp, the vault and the id of the note
// store ("" for an index in memory) into the new index.
func (ix *Index) writeStamp(id string) error {
	b := ix.idx.NewBatch()
	b.SetInternal(keySchema, []byte(ix.stamp))
	b.SetInternal(keyVault, []byte(ix.vaultKey()))
	b.SetInternal(keyNotes, []byte(id))
	// Waited for on disk: the index is not an index without it (nor
	// without the mapping bleve wrote before it), and a process killed
	// while writing its first notes then leaves one to go on from.
	var persisted chan error
	if ix.path != "" {
		persisted = make(chan error, 1)
		b.SetPersistedCallback(func(err error) { persisted <- err })
	}
	if err := ix.idx.Batch(b); err != nil {
		return fmt.Errorf("write index stamp: %w", err)
	}
	if persisted != nil {
		select {
		case err := <-persisted:
			if err != nil {
				return fmt.Errorf("write index stamp: %w", err)
			}
		case <-time.After(persistTimeout):
			return errors.New("write index stamp: not persisted in time")
		}
	}
	return nil
}

// Status describes the index.
func (ix *Index) Status() Status {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return Status{
		Notes:         ix.meta.len(),
		Indexing:      ix.indexing.Load(),
		Watching:      ix.watching.Load(),
		LastIndexedAt: ix.lastIndexed,
	}
}

// Subscribe returns a channel signalled (without blocking, coalescing) after
// each applied change: a watcher batch, Sync or Rebuild. Call the returned
// func to unsubscribe.
func (ix *Index) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	ix.subsMu.Lock()
	id := ix.nextID
	ix.nextID++
	ix.subs[id] = ch
	ix.subsMu.Unlock()
	return ch, func() {
		ix.subsMu.Lock()
		delete(ix.subs, id)
		ix.subsMu.Unlock()
	}
}

func (ix *Index) notify() {
	ix.subsMu.Lock()
	defer ix.subsMu.Unlock()
	for _, ch := range ix.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (ix *Index) isClosed() bool {
	select {
	case <-ix.closed:
		return true
	default:
		return false
	}
}

// Close stops the watcher, waits for a running Sync or Apply to end (cancel
// its context first to make that quick) and for pending writes to reach
// the disk, and releases the index.
func (ix *Index) Close() error {
	var err error
	ix.closeOnce.Do(func() {
		close(ix.closed)
		ix.unhookIdle()
		ix.subsMu.Lock()
		cancel, done := ix.watchCancel, ix.watchDone
		ix.subsMu.Unlock()
		if cancel != nil {
			cancel()
			<-done
		}
		ix.warming.Wait()
		ix.writeMu.Lock()
		ix.idxMu.Lock()
		if ix.idx != nil {
			err = ix.idx.Close()
			ix.idx = nil
		}
		ix.idxMu.Unlock()
		if serr := ix.closeStore(); err == nil {
			err = serr
		}
		ix.writeMu.Unlock()
		ix.unlock()
	})
	return err
}

func (ix *Index) unlock() {
	if ix.lock != nil {
		unlockDir(ix.lock)
		ix.lock = nil
	}
}
