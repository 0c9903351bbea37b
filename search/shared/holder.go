package shared

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
)

// holding is the role of the process that holds the index: it has the
// index open, keeps it fresh and serves it on the socket.
type holding struct {
	x     *Index
	ix    *search.Index
	sem   *semantic.Engine // nil without an embedding model
	since time.Time
	srv   *server // nil when the index is not shared

	// ctx is the holding's lifetime: the watcher's, the change pump's and
	// the server's.
	ctx      context.Context
	cancel   context.CancelFunc
	pumpDone chan struct{}

	startOnce sync.Once
	// ready is closed when the first sync has ended; readyStats and
	// readyErr are its outcome, set before.
	ready      chan struct{}
	readyStats search.SyncStats
	readyErr   error

	// mu guards the fields below.
	mu        sync.Mutex
	progress  [2]int // the first sync's progress: done, total
	phase     string // "" indexing, "embed"
	watching  bool
	wantWatch bool // a watch asked for before the first sync ended
}

// hold opens the index, taking its lock, with the vectors of semantic
// search, and serves it on the socket. After a takeover it also
// reconciles the index with the disk and watches it, in the background.
func (x *Index) hold(ctx context.Context, takeover bool) (*holding, error) {
	ix, err := search.Open(ctx, search.Options{Path: x.opts.Path, Vault: x.v, Logger: x.opts.Logger, Debounce: x.opts.Debounce})
	if err != nil {
		return nil, err
	}
	h := &holding{x: x, ix: ix, since: time.Now(), ready: make(chan struct{}), pumpDone: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(x.bg)
	if x.opts.Embedder != nil {
		h.sem, err = semantic.Open(semantic.Options{Index: ix, Embedder: x.opts.Embedder, Path: x.opts.VectorsPath, Logger: x.opts.Logger})
		if err != nil {
			h.cancel()
			ix.Close()
			return nil, fmt.Errorf("open the vectors %s: %w", x.opts.VectorsPath, err)
		}
	}
	go h.pump()
	if x.opts.Path != "" && x.opts.Socket != "" && socketsSupported {
		if h.srv, err = serve(h); err != nil {
			// Searching still works here; the other processes of the
			// vault are refused the index as before sharing existed.
			x.log.Warn("the index is not shared with other vault-agent processes", "socket", x.opts.Socket, "error", err)
		}
	}
	if takeover {
		x.log.Info("this process now holds the index", "index", x.opts.Path)
		go func() {
			if _, err := h.start(h.ctx, StartOptions{Watch: true}); err != nil && h.ctx.Err() == nil {
				x.log.Error("bringing the index up to date after taking it over", "error", err)
			}
		}()
	}
	return h, nil
}

// StartOptions say how Start brings the index up to date.
type StartOptions struct {
	// Rebuild rebuilds the index from scratch instead of reconciling it.
	Rebuild bool
	// Progress receives the progress of the reconcile (or rebuild), and
	// EmbedProgress that of the first embedding of the notes' chunks; both
	// are called from the goroutine that does the work.
	Progress, EmbedProgress search.ProgressFunc
	// Watch keeps the index fresh with the file watcher.
	Watch bool
}

// start runs the first sync of this holding, or, when it has run (or
// runs), waits for its end, then does what so asks more.
func (h *holding) start(ctx context.Context, so StartOptions) (search.SyncStats, error) {
	first := false
	h.startOnce.Do(func() { first = true })
	if !first {
		if so.Rebuild {
			return h.sync(ctx, true, progressOf(so.Progress, so.EmbedProgress))
		}
		st, err := h.waitReady(ctx, progressOf(so.Progress, so.EmbedProgress))
		if err == nil && so.Watch {
			err = h.watch()
		}
		return st, err
	}
	index := func(done, total int) {
		h.setProgress(done, total, "")
		if so.Progress != nil {
			so.Progress(done, total)
		}
	}
	var err error
	if so.Rebuild {
		h.readyStats, err = h.ix.Rebuild(ctx, index)
	} else {
		h.readyStats, err = h.ix.Sync(ctx, index)
	}
	if err != nil {
		h.finish(err)
		return h.readyStats, err
	}
	if h.sem != nil {
		// A vault whose notes cannot be embedded now (the server is down)
		// still opens: search is lexical for the notes without vectors,
		// and they are embedded at the next change or start.
		st, err := h.sem.Sync(ctx, func(done, total int) {
			h.setProgress(done, total, phaseEmbed)
			if so.EmbedProgress != nil {
				so.EmbedProgress(done, total)
			}
		})
		switch {
		case err != nil && ctx.Err() != nil:
			h.finish(ctx.Err())
			return h.readyStats, ctx.Err()
		case err != nil:
			h.x.log.Warn("semantic search is incomplete: embedding the notes failed; the notes without vectors are embedded at the next change or start", "model", h.sem.Model(), "error", err)
		default:
			h.x.log.Info("vectors ready", "model", h.sem.Model(), "notes", st.Notes, "chunks", st.Chunks, "embedded", st.Embedded, "vectorMB", h.sem.MemoryBytes()>>20)
		}
	}
	if h.finish(nil) || so.Watch {
		if err := h.watch(); err != nil {
			// Search still works on a stale index: warn, don't fail.
			h.x.log.Warn("the vault watcher could not start; the index will not follow changes until it is reindexed", "error", err)
		}
	}
	return h.readyStats, nil
}

// phaseEmbed is the phase of Progress while the vectors are made.
const phaseEmbed = "embed"

// progressOf is a Progress that reports each phase to its function.
func progressOf(index, embed search.ProgressFunc) Progress {
	if index == nil && embed == nil {
		return nil
	}
	return func(done, total int, phase string) {
		switch {
		case phase == phaseEmbed && embed != nil:
			embed(done, total)
		case phase != phaseEmbed && index != nil:
			index(done, total)
		}
	}
}

func (h *holding) setProgress(done, total int, phase string) {
	h.mu.Lock()
	h.progress, h.phase = [2]int{done, total}, phase
	h.mu.Unlock()
}

// finish ends the first sync with err, and reports whether a watch was
// asked for meanwhile. A watch asked for from now on starts at once.
func (h *holding) finish(err error) (wantWatch bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readyErr = err
	close(h.ready)
	wantWatch, h.wantWatch = h.wantWatch, false
	return wantWatch && err == nil
}

func (h *holding) isReady() bool {
	select {
	case <-h.ready:
		return true
	default:
		return false
	}
}

// waitReady waits for the end of the first sync, reporting its progress
// every half second.
func (h *holding) waitReady(ctx context.Context, progress Progress) (search.SyncStats, error) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-h.ready:
			return h.readyStats, h.readyErr
		case <-ctx.Done():
			return search.SyncStats{}, ctx.Err()
		case <-tick.C:
			if progress != nil {
				h.mu.Lock()
				p, phase := h.progress, h.phase
				h.mu.Unlock()
				progress(p[0], p[1], phase)
			}
		}
	}
}

// sync reconciles (or rebuilds) the index for a caller.
func (h *holding) sync(ctx context.Context, full bool, progress Progress) (search.SyncStats, error) {
	report := func(done, total int) {
		if progress != nil {
			progress(done, total, "")
		}
	}
	if full {
		return h.ix.Rebuild(ctx, report)
	}
	return h.ix.Sync(ctx, report)
}

// watch starts the watcher of the index, and of the vectors, once: now,
// or at the end of the first sync if it still runs.
func (h *holding) watch() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watching {
		return nil
	}
	if !h.isReady() {
		h.wantWatch = true
		return nil
	}
	if err := h.ix.Watch(h.ctx); err != nil {
		return err
	}
	if h.sem != nil {
		h.sem.Watch(h.ctx)
	}
	h.watching = true
	return nil
}

// search answers a search in its mode: with an embedding model the
// default is hybrid; without one it is lexical, and asking for semantic or
// hybrid is ErrNoEmbedder.
func (h *holding) search(ctx context.Context, req search.Request) (*search.Results, error) {
	if h.sem != nil {
		return h.sem.Search(ctx, req)
	}
	switch req.Mode {
	case "", search.ModeLexical:
		return h.ix.Search(ctx, req)
	case search.ModeSemantic, search.ModeHybrid:
		return nil, ErrNoEmbedder
	}
	return nil, fmt.Errorf("%w, got %q", semantic.ErrMode, req.Mode)
}

// pump hands the index's changes to this process's subscribers and to the
// processes connected to the socket.
func (h *holding) pump() {
	defer close(h.pumpDone)
	feed := h.ix.SubscribeChanges()
	defer feed.Close()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-feed.Ready():
		}
		changes := feed.Take()
		if len(changes) == 0 {
			continue
		}
		h.x.feeds.deliver(changes)
		if h.srv != nil {
			h.srv.broadcast(changes)
		}
	}
}

// status describes the holding for `vault-agent status`.
func (h *holding) status() Status {
	st := h.ix.Status()
	s := Status{
		PID: os.Getpid(), FrontEnd: h.x.opts.FrontEnd, Version: h.x.opts.Version, Since: h.since,
		Vault: h.x.v.Root(), Index: h.x.opts.Path, Ready: h.isReady(),
		Notes: st.Notes, Indexing: st.Indexing, Watching: st.Watching, LastIndexedAt: st.LastIndexedAt,
		IndexBytes: dirSize(h.x.opts.Path),
	}
	if h.srv != nil {
		s.Clients = h.srv.clients()
	}
	if h.sem != nil {
		s.EmbedModel = h.sem.Model()
		if fi, err := os.Stat(h.x.opts.VectorsPath); err == nil {
			s.VectorsBytes = fi.Size()
		}
	}
	return s
}

// dirSize is the size of the files under dir (0 for "" or none).
func dirSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// close stops serving (the connected processes take the index over once
// its lock is free), then closes the vectors and the index, which frees
// the lock.
func (h *holding) close() error {
	if h.srv != nil {
		h.srv.close()
	}
	h.cancel()
	<-h.pumpDone
	var errs []error
	if h.sem != nil {
		if err := h.sem.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the vectors: %w", err))
		}
	}
	if err := h.ix.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close the index: %w", err))
	}
	return errors.Join(errs...)
}
