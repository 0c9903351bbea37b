package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Change is one note that changed on disk.
type Change struct {
	Path string
	// Removed is true when the note is gone (deleted, renamed away, or no
	// longer safe to read); false means created or modified.
	Removed bool
}

// Batch is what the watcher reports after the disk has been quiet for the
// debounce period: every change since the batch before it.
type Batch struct {
	// Changes are sorted by path, one per path.
	Changes []Change
	// Rescan asks the consumer for a full reconcile with the disk: events
	// were lost (overflow), a folder could not be watched (watch limit), or
	// a folder was renamed, deleted or appeared with content, so that
	// per-file events do not tell the whole story.
	Rescan bool
	// Reason says why a rescan is needed, for logs.
	Reason string
}

// WatchOptions configures Vault.Watch.
type WatchOptions struct {
	// Debounce is the quiet period after the last event before a batch is
	// emitted; default 150ms. A steady stream of events on a few notes
	// (an editor saving as one types) still yields a batch at least every
	// 10 debounce periods; a burst of many notes (a branch switch, a sync
	// client catching up) is waited out, up to 60 debounce periods, so
	// that it comes as one batch.
	Debounce time.Duration
	// Logger gets warnings (watch limits, overflow); default the vault's.
	Logger *slog.Logger
}

// DefaultDebounce is the default quiet period of a Watcher.
const DefaultDebounce = 150 * time.Millisecond

// burstPaths is how many changed paths make a burst: a batch of fewer is
// cut after the steady stream's wait; a burst is waited out, until quiet
// for burstQuiet debounce periods.
var burstPaths = 256 // a variable for tests

const burstQuiet = 4

// fsAdd adds one fsnotify watch; tests replace it to simulate watch limits.
var fsAdd = func(w *fsnotify.Watcher, path string) error { return w.Add(path) }

// Watcher reports changes to the notes of a vault. fsnotify is not
// recursive, so the watcher adds every folder that is not ignored, and each
// new folder as it appears (walking it, so files created before its watch
// was in place are reported too). Folders reached through symlinks are not
// watched.
//
// One goroutine drains fsnotify, and never blocks on the consumer; the
// consumer asks for each batch (Next), which waits for quiet. The changes
// that happen while the consumer is busy with a batch accumulate and come
// as the next one, so a consumer slower than the changes gets them in a
// few large batches rather than many small ones. The watcher never writes
// into the vault.
type Watcher struct {
	v         *Vault
	fsw       *fsnotify.Watcher
	log       *slog.Logger
	debounce  time.Duration
	maxWait   time.Duration // for a stream of few paths
	burstWait time.Duration // for a burst of many
	kick      chan struct{} // buffered(1): new pending work
	stop      chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup

	// dirs holds the vault-relative folders being watched. Only the drain
	// goroutine touches it after Watch returns.
	dirs map[string]bool

	mu      sync.Mutex // guards the pending state below
	pending map[string]struct{}
	rescan  []string // reasons
	first   time.Time
	last    time.Time
}

// Watch starts watching the vault. The watcher stops when ctx is done or
// Close is called; Next returns ErrWatcherClosed then.
func (v *Vault) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch vault %s: %w", v.root, err)
	}
	d := opts.Debounce
	if d <= 0 {
		d = DefaultDebounce
	}
	log := opts.Logger
	if log == nil {
		log = v.log
	}
	w := &Watcher{
		v:         v,
		fsw:       fsw,
		log:       log.With("component", "vault.watch"),
		debounce:  d,
		maxWait:   10 * d,
		burstWait: 60 * d,
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		dirs:      make(map[string]bool),
		pending:   make(map[string]struct{}),
	}
	if err := w.addTree(v.root, ".", false); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch vault %s: %w", v.root, err)
	}
	w.wg.Add(1)
	go w.drain()
	go func() {
		select {
		case <-ctx.Done():
			w.Close()
		case <-w.stop:
		}
	}()
	return w, nil
}

// ErrWatcherClosed is returned by Next once the watcher is closed.
var ErrWatcherClosed = errors.New("vault watcher closed")

// Close stops the watcher and releases its watches. Pending changes are
// dropped. It is safe to call more than once and from any goroutine.
func (w *Watcher) Close() error {
	var err error
	w.stopOnce.Do(func() {
		close(w.stop)
		err = w.fsw.Close()
		w.wg.Wait()
	})
	return err
}

// drain reads fsnotify events and errors until the watcher stops.
func (w *Watcher) drain() {
	defer w.wg.Done()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.handleErr(err)
		}
	}
}

func (w *Watcher) handleErr(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn("file events were lost; a full rescan follows", "err", err)
		w.markRescan("event queue overflow")
		return
	}
	w.log.Warn("file watcher error", "err", err)
}

func (w *Watcher) handle(ev fsnotify.Event) {
	rel, ok := w.v.Rel(ev.Name)
	if !ok {
		return
	}
	if rel == "." {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.markRescan("the vault folder itself was removed or renamed")
		}
		return
	}
	if hasDotSegment(rel) {
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// A rename reports the old name; the new name arrives as Create.
		if w.dirs[rel] {
			w.forgetTree(rel)
			w.markRescan(fmt.Sprintf("folder %q was removed or renamed", rel))
			return
		}
		if !w.v.Ignored(rel, false) {
			w.record(rel)
		}
	case ev.Has(fsnotify.Create):
		lst, err := os.Lstat(ev.Name)
		if err != nil {
			if !w.v.Ignored(rel, false) {
				w.record(rel) // gone already; the flush reports it removed
			}
			return
		}
		if lst.IsDir() {
			if w.v.Ignored(rel, true) {
				return
			}
			found := 0
			if err := w.addTreeCounting(ev.Name, rel, &found); err != nil {
				w.log.Debug("walk new folder", "path", rel, "err", err)
			}
			if found > 0 {
				w.markRescan(fmt.Sprintf("folder %q appeared with content", rel))
			}
			return
		}
		if lst.Mode()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
				if !w.v.Ignored(rel, true) {
					w.markRescan(fmt.Sprintf("symlinked folder %q appeared", rel))
				}
				return
			}
		}
		if !w.v.Ignored(rel, false) {
			w.record(rel)
		}
	case ev.Has(fsnotify.Write):
		if !w.v.Ignored(rel, false) {
			w.record(rel)
		}
	}
	// Chmod alone does not change content.
}

// addTree watches dir and every folder below it that is not ignored. With
// record set, the notes found are reported as changes.
func (w *Watcher) addTree(dir, rel string, record bool) error {
	if record {
		var n int
		return w.addTreeCounting(dir, rel, &n)
	}
	return w.walkTree(dir, rel, nil)
}

func (w *Watcher) addTreeCounting(dir, rel string, found *int) error {
	return w.walkTree(dir, rel, func(r string) {
		*found++
		w.record(r)
	})
}

// walkTree adds a watch on each folder before listing it, so a file created
// meanwhile is either listed or produces an event (or both; they coalesce).
func (w *Watcher) walkTree(dir, rel string, onFile func(rel string)) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // vanished or unreadable below the top: skip it
		}
		r := rel
		if p != dir {
			sub, _ := filepath.Rel(dir, p)
			r = joinRel(rel, filepath.ToSlash(sub))
		}
		if d.IsDir() {
			if p != dir && w.v.Ignored(r, true) {
				return filepath.SkipDir
			}
			w.addWatch(p, r)
			return nil
		}
		if onFile != nil && !w.v.Ignored(r, false) && (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) {
			onFile(r)
		}
		return nil
	})
}

func joinRel(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

func (w *Watcher) addWatch(abs, rel string) {
	err := fsAdd(w.fsw, abs)
	switch {
	case err == nil:
		w.dirs[rel] = true
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE):
		w.log.Warn("cannot watch folder: the system limit on file watches is reached; changes there are picked up by rescans only (on Linux raise fs.inotify.max_user_watches)",
			"path", rel, "err", err)
		w.markRescan(fmt.Sprintf("cannot watch folder %q: %v", rel, err))
	case errors.Is(err, fs.ErrNotExist):
		// Gone before we got to it.
	default:
		w.log.Warn("cannot watch folder", "path", rel, "err", err)
	}
}

// forgetTree drops the watches of a removed or renamed folder. Watches on a
// renamed folder would otherwise keep reporting under the old name.
func (w *Watcher) forgetTree(rel string) {
	prefix := rel + "/"
	for d := range w.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			delete(w.dirs, d)
			_ = w.fsw.Remove(filepath.Join(w.v.root, filepath.FromSlash(d)))
		}
	}
}

// record notes that rel may have changed; what happened is decided from
// the disk when the batch is built, so the last state wins.
func (w *Watcher) record(rel string) {
	w.mu.Lock()
	w.pending[rel] = struct{}{}
	w.touchLocked()
	w.mu.Unlock()
}

func (w *Watcher) markRescan(reason string) {
	w.mu.Lock()
	w.rescan = append(w.rescan, reason)
	w.touchLocked()
	w.mu.Unlock()
}

func (w *Watcher) touchLocked() {
	now := time.Now()
	if w.first.IsZero() {
		w.first = now
	}
	w.last = now
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Next waits for changes and returns them as one batch, once the disk has
// been quiet for the debounce period (or, for a stream of changes to fewer
// than burstPaths paths, after at most 10 debounce periods; for a burst,
// 60). Changes made while the consumer is busy between calls accumulate,
// coalesced, into the next batch. It returns ErrWatcherClosed once the
// watcher is closed, or ctx's error. Called from one goroutine.
func (w *Watcher) Next(ctx context.Context) (Batch, error) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		w.mu.Lock()
		first, last, n := w.first, w.last, len(w.pending)
		w.mu.Unlock()
		if first.IsZero() {
			// Nothing pending: wait for the drain to record something.
			select {
			case <-w.kick:
				continue
			case <-w.stop:
				return Batch{}, ErrWatcherClosed
			case <-ctx.Done():
				return Batch{}, ctx.Err()
			}
		}
		quiet := w.debounce
		if n >= burstPaths {
			// A burst pauses longer between files than an editor
			// between keystrokes (a busy machine, a large file).
			quiet = burstQuiet * w.debounce
		}
		if wait := min(quiet-time.Since(last), w.limit(n)-time.Since(first)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-w.stop:
				return Batch{}, ErrWatcherClosed
			case <-ctx.Done():
				return Batch{}, ctx.Err()
			}
			continue
		}
		if b, ok := w.take(); ok {
			return b, nil
		}
	}
}

// limit is the longest Next waits for quiet after the first of n pending
// changes: an editor saving one note as one types is indexed every 10
// debounce periods, while a burst of many notes is waited out.
func (w *Watcher) limit(n int) time.Duration {
	if n >= burstPaths {
		return w.burstWait
	}
	return w.maxWait
}

// take builds a batch from the pending state and resets it.
func (w *Watcher) take() (Batch, bool) {
	w.mu.Lock()
	pending, reasons := w.pending, w.rescan
	w.pending, w.rescan = make(map[string]struct{}), nil
	w.first, w.last = time.Time{}, time.Time{}
	w.mu.Unlock()
	if len(pending) == 0 && len(reasons) == 0 {
		return Batch{}, false
	}
	b := Batch{Rescan: len(reasons) > 0, Reason: strings.Join(dedupe(reasons, nil), "; ")}
	for rel := range pending {
		b.Changes = append(b.Changes, Change{Path: rel, Removed: !w.isNote(rel)})
	}
	sort.Slice(b.Changes, func(i, j int) bool { return b.Changes[i].Path < b.Changes[j].Path })
	return b, true
}

// isNote reports whether rel is now a readable note inside the vault.
func (w *Watcher) isNote(rel string) bool {
	abs, err := w.v.Resolve(rel)
	if err != nil {
		return false
	}
	if real, ok := w.v.Rel(abs); ok && real != rel && w.v.Ignored(real, false) {
		return false
	}
	st, err := os.Stat(abs)
	return err == nil && st.Mode().IsRegular()
}
