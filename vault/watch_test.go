package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

const testDebounce = 40 * time.Millisecond

// waitTimeout bounds every wait on the watcher; generous for a loaded CI box.
const waitTimeout = 10 * time.Second

type watchEnv struct {
	t    *testing.T
	root string
	v    *Vault
	w    *Watcher
	// final holds the last change seen per path; batches keeps them all.
	final   map[string]Change
	batches []Batch
}

func startWatch(t *testing.T, files map[string]string, opts Options) *watchEnv {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	v, err := Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := v.Watch(ctx, WatchOptions{Debounce: testDebounce})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		w.Close()
	})
	return &watchEnv{t: t, root: v.Root(), v: v, w: w, final: map[string]Change{}}
}

func (e *watchEnv) path(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

func (e *watchEnv) write(rel, content string) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *watchEnv) rename(from, to string) {
	e.t.Helper()
	if err := os.Rename(e.path(from), e.path(to)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *watchEnv) remove(rel string) {
	e.t.Helper()
	if err := os.RemoveAll(e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

// until reads batches until cond holds, failing after waitTimeout.
func (e *watchEnv) until(what string, cond func() bool) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for !cond() {
		b, err := e.w.Next(ctx)
		if err != nil {
			e.t.Fatalf("waiting for %s: %v; saw %+v", what, err, e.batches)
		}
		e.batches = append(e.batches, b)
		for _, c := range b.Changes {
			e.final[c.Path] = c
		}
	}
}

func (e *watchEnv) untilChange(rel string, removed bool) {
	e.t.Helper()
	e.until(fmt.Sprintf("%s removed=%v", rel, removed), func() bool {
		c, ok := e.final[rel]
		return ok && c.Removed == removed
	})
}

func (e *watchEnv) untilRescan() Batch {
	e.t.Helper()
	var got Batch
	e.until("a rescan batch", func() bool {
		for _, b := range e.batches {
			if b.Rescan {
				got = b
				return true
			}
		}
		return false
	})
	return got
}

// onlyPaths fails when a change was reported for a path outside want.
func (e *watchEnv) onlyPaths(want ...string) {
	e.t.Helper()
	ok := map[string]bool{}
	for _, w := range want {
		ok[w] = true
	}
	for p := range e.final {
		if !ok[p] {
			e.t.Errorf("unexpected change for %q (batches %+v)", p, e.batches)
		}
	}
}

func TestWatchFiles(t *testing.T) {
	e := startWatch(t, map[string]string{"a.md": "a", "dir/b.md": "b"}, Options{})

	e.write("new.md", "new")
	e.untilChange("new.md", false)

	e.write("dir/b.md", "b changed")
	e.untilChange("dir/b.md", false)

	e.rename("new.md", "dir/moved.md")
	e.untilChange("new.md", true)
	e.untilChange("dir/moved.md", false)

	e.remove("dir/moved.md")
	e.untilChange("dir/moved.md", true)
	e.onlyPaths("new.md", "dir/b.md", "dir/moved.md")
	for _, b := range e.batches {
		if b.Rescan {
			t.Errorf("unexpected rescan: %+v", b)
		}
	}
}

func TestWatchAtomicSaves(t *testing.T) {
	e := startWatch(t, map[string]string{"note.md": "v1"}, Options{})

	// Editor style 1: write a temp file, rename it over the target.
	e.write(".note.md.tmp", "v2")
	e.rename(".note.md.tmp", "note.md")
	e.write("sentinel1.md", "s")
	e.untilChange("sentinel1.md", false)
	e.untilChange("note.md", false)
	for _, b := range e.batches {
		for _, c := range b.Changes {
			if c.Path == "note.md" && c.Removed {
				t.Errorf("rename over the target reported a removal: %+v", e.batches)
			}
		}
	}
	e.final = map[string]Change{}

	// Editor style 2 (vim): backup rename, write, probe files, swap file.
	e.write(".note.md.swp", "swap")
	e.write("4913", "")
	e.remove("4913")
	e.rename("note.md", "note.md~")
	e.write("note.md", "v3")
	e.remove("note.md~")
	e.write(".#note.md", "emacs lock")
	e.remove(".note.md.swp")
	// Sentinel: once it is seen, every event above has been processed.
	e.write("sentinel.md", "s")
	e.untilChange("sentinel.md", false)
	e.untilChange("note.md", false)
	e.onlyPaths("note.md", "sentinel.md")
}

func TestWatchIgnored(t *testing.T) {
	e := startWatch(t, map[string]string{".obsidian/app.json": "{}", "Archive/old.md": "x"}, Options{Excludes: []string{"Archive/**", "*.excalidraw.md"}})
	e.write(".obsidian/workspace.md", "x")
	e.write("Archive/old.md", "changed")
	e.write("Archive/new/deep.md", "x")
	e.write("img.png", "png")
	e.write("d.excalidraw.md", "x")
	e.write(".trash/t.md", "x")
	e.write("sentinel.md", "s")
	e.untilChange("sentinel.md", false)
	e.onlyPaths("sentinel.md")
}

func TestWatchNewNestedFolder(t *testing.T) {
	e := startWatch(t, nil, Options{})
	// Files created right after the folders, before the watcher can have
	// added watches on them: the walk of the new folder must find them.
	e.write("n1/n2/n3/deep.md", "d")
	e.write("n1/top.md", "t")
	e.untilChange("n1/n2/n3/deep.md", false)
	e.untilChange("n1/top.md", false)
	// The new folders are watched now.
	e.write("n1/n2/later.md", "l")
	e.untilChange("n1/n2/later.md", false)
}

func TestWatchFolderRenameAndDelete(t *testing.T) {
	e := startWatch(t, map[string]string{"f/g.md": "g", "f/sub/h.md": "h", "other.md": "o"}, Options{})

	e.rename("f", "f2")
	b := e.untilRescan()
	if !strings.Contains(b.Reason, `"f"`) {
		t.Errorf("rescan reason %q does not name the folder", b.Reason)
	}
	e.untilChange("f2/g.md", false)
	e.untilChange("f2/sub/h.md", false)

	// The renamed folder is watched under its new name only.
	e.final = map[string]Change{}
	e.write("f2/sub/h.md", "h2")
	e.untilChange("f2/sub/h.md", false)
	e.onlyPaths("f2/sub/h.md")

	e.batches = nil
	e.remove("f2")
	b = e.untilRescan()
	if !strings.Contains(b.Reason, "f2") {
		t.Errorf("rescan reason %q does not name the folder", b.Reason)
	}
}

func TestWatchBurst(t *testing.T) {
	e := startWatch(t, map[string]string{"burst/.keep.md": ""}, Options{})
	const n = 500
	for i := range n {
		e.write(fmt.Sprintf("burst/n%03d.md", i), fmt.Sprintf("note %d", i))
	}
	e.until("all burst files", func() bool {
		seen := 0
		for p, c := range e.final {
			if strings.HasPrefix(p, "burst/n") && !c.Removed {
				seen++
			}
		}
		return seen == n
	})
	// Coalesced: at most one batch per debounce period while writing plus
	// the max-wait cap, i.e. a handful, never one per file.
	if len(e.batches) > 25 {
		t.Errorf("%d batches for %d files", len(e.batches), n)
	}
	t.Logf("%d files in %d batches", n, len(e.batches))
}

// Changes made while the consumer is busy with a batch (here: not asking
// for the next) accumulate into one batch, however many notes change: a
// branch switch comes as one batch, not as thousands.
func TestWatchBusyConsumerGetsOneBatch(t *testing.T) {
	e := startWatch(t, map[string]string{"a.md": ""}, Options{})
	e.write("a.md", "first")
	e.untilChange("a.md", false)
	before := len(e.batches)
	const n = 400 // more than burstPaths
	for i := range n {
		e.write(fmt.Sprintf("switch/n%03d.md", i), fmt.Sprintf("note %d", i))
	}
	e.until("the switched notes", func() bool {
		seen := 0
		for p := range e.final {
			if strings.HasPrefix(p, "switch/") {
				seen++
			}
		}
		return seen == n
	})
	if got := len(e.batches) - before; got != 1 {
		t.Errorf("%d notes changed while the consumer was busy came in %d batches, want 1", n, got)
	}
}

// A note saved without pause (an editor saving as one types) is still
// reported: the quiet period never comes, and the batch is cut after 10
// debounce periods.
func TestWatchSteadyStream(t *testing.T) {
	e := startWatch(t, map[string]string{"typing.md": ""}, Options{})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.WriteFile(e.path("typing.md"), []byte(fmt.Sprint(i)), 0o644); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	e.untilChange("typing.md", false)
	close(stop)
	<-done
}

// The longest wait for quiet: a stream of changes to a few paths is cut
// after 10 debounce periods, a burst of burstPaths or more after 60.
func TestWatchWaitLimit(t *testing.T) {
	w := &Watcher{debounce: time.Second, maxWait: 10 * time.Second, burstWait: 60 * time.Second}
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{{1, 10 * time.Second}, {burstPaths - 1, 10 * time.Second}, {burstPaths, 60 * time.Second}, {10 * burstPaths, 60 * time.Second}} {
		if got := w.limit(tt.n); got != tt.want {
			t.Errorf("limit(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestWatchOverflow(t *testing.T) {
	e := startWatch(t, nil, Options{})
	e.w.handleErr(fmt.Errorf("inotify: %w", fsnotify.ErrEventOverflow))
	b := e.untilRescan()
	if !strings.Contains(b.Reason, "overflow") {
		t.Errorf("reason = %q", b.Reason)
	}
}

func TestWatchLimit(t *testing.T) {
	// Swapped before the watcher starts and restored after it stops
	// (cleanups run last-in first-out).
	orig := fsAdd
	fsAdd = func(w *fsnotify.Watcher, p string) error {
		if filepath.Base(p) == "full" {
			return fmt.Errorf("add %s: %w", p, syscall.ENOSPC)
		}
		return orig(w, p)
	}
	t.Cleanup(func() { fsAdd = orig })
	e := startWatch(t, nil, Options{})
	if err := os.Mkdir(e.path("full"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := e.untilRescan()
	if !strings.Contains(b.Reason, "cannot watch") {
		t.Errorf("reason = %q", b.Reason)
	}
}

func TestWatchCloseAndCancel(t *testing.T) {
	root := t.TempDir()
	v, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	waitClosed := func(w *Watcher) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if _, err := w.Next(ctx); !errors.Is(err, ErrWatcherClosed) {
			t.Fatalf("Next on a closed watcher: %v", err)
		}
	}

	w, err := v.Watch(context.Background(), WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	w.Close() // idempotent
	waitClosed(w)

	ctx, cancel := context.WithCancel(context.Background())
	w, err = v.Watch(ctx, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	waitClosed(w)
}
