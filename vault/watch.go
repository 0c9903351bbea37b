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
// debounce period.
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
	// emitted; default 150ms. A steady stream of events still yields a batch
	// at least every 10 debounce periods.
	Debounce time.Duration
	// Logger gets warnings (watch limits, overflow); default the vault's.
	Logger *slog.Logger
}

// DefaultDebounce is the default quiet period of a Watcher.
const DefaultDebounce = 150 * time.Millisecond

// fsAdd adds one fsnotify watch; tests replace it to simulate watch limits.
var fsAdd = func(w *fsnotify.Watcher, path string) error { return w.Add(path) }

// Watcher reports changes to the notes of a vault. fsnotify is not
// recursive, so the watcher adds every folder that is not ignored, and each
// new folder as it appears (walking it, so files created before its watch
// was in place are reported too). Folders reached through symlinks are not
// watched.
//
// Two goroutines run: one drains fsnotify (and must never block on the
// consumer), one waits for quiet and sends batches. The watcher never writes
// into the vault.
type Watcher struct {
	v        *Vault
	fsw      *fsnotify.Watcher
	log      *slog.Logger
	debounce time.Duration
	maxWait  time.Duration
	out      chan Batch
	kick     chan struct{} // buffered(1): new pending work
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

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
// Close is called; Batches is closed then.
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
		v:        v,
		fsw:      fsw,
		log:      log.With("component", "vault.watch"),
		debounce: d,
		maxWait:  10 * d,
		out:      make(chan Batch),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		dirs:     make(map[string]bool),
		pending:  make(map[string]struct{}),
	}
	if err := w.addTree(v.root, ".", false); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch vault %s: %w", v.root, err)
	}
	w.wg.Add(2)
	go w.drain()
	go w.emit()
	go func() {
		select {
		case <-ctx.Done():
			w.Close()
		case <-w.stop:
		}
	}()
	go func() {
		w.wg.Wait()
		close(w.out)
	}()
	return w, nil
}

// Batches returns the channel of batches; it is closed when the watcher
// stops. The consumer should keep reading: while it does not, changes
// accumulate (coalesced) rather than being lost.
func (w *Watcher) Batches() <-chan Batch { return w.out }

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

// emit waits for a quiet period after pending work and sends it as a batch.
func (w *Watcher) emit() {
	defer w.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		for {
			w.mu.Lock()
			first, last := w.first, w.last
			w.mu.Unlock()
			if first.IsZero() {
				break // taken by an earlier round
			}
			wait := min(w.debounce-time.Since(last), w.maxWait-time.Since(first))
			if wait <= 0 {
				break
			}
			timer.Reset(wait)
			select {
			case <-w.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		b, ok := w.take()
		if !ok {
			continue
		}
		select {
		case w.out <- b:
		case <-w.stop:
			return
		}
	}
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
