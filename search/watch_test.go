package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

// diskMatches reports whether the index metadata matches the files on disk
// (paths, sizes, mtimes); it is the cheap "caught up" check the live tests
// wait for before comparing with a fresh index.
func diskMatches(t *testing.T, ix *Index) bool {
	t.Helper()
	n := 0
	ok := true
	err := ix.Vault().Walk(context.Background(), func(fi vault.FileInfo) error {
		n++
		m, found := ix.Note(fi.Path)
		if !found || m.Size != fi.Size || !m.MTime.Equal(fi.ModTime) {
			ok = false
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	return ok && n == ix.Count()
}

func TestWatchLive(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			dir := writeVault(t, smallVault)
			path := ""
			if disk {
				path = filepath.Join(t.TempDir(), "idx")
			}
			ix, err := Open(context.Background(), Options{Path: path, Vault: openVault(t, dir), Logger: testLogger(t), Debounce: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if _, err := ix.Sync(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch, unsub := ix.Subscribe()
			defer unsub()
			if err := ix.Watch(ctx); err != nil {
				t.Fatal(err)
			}
			if !ix.Status().Watching {
				t.Fatal("Status().Watching = false")
			}
			abs := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
			settle := func(what string, extra ...string) {
				t.Helper()
				waitFor(t, ix, ch, 10*time.Second, what, func() bool { return diskMatches(t, ix) })
				assertSameAsFresh(t, ix, dir, extra...)
			}
			later := func(p string) { // a distinct mtime, whatever the clock granularity
				t.Helper()
				ts := time.Now().Add(time.Minute)
				if err := os.Chtimes(abs(p), ts, ts); err != nil {
					t.Fatal(err)
				}
			}

			steps := []struct {
				name  string
				do    func()
				extra []string
			}{
				{"create", func() { writeFile(t, dir, "new/Brand new.md", "# Brand new\nA new note.\n") }, []string{"brand"}},
				{"modify", func() {
					writeFile(t, dir, "recipes/Rye Crackers.md", "# Rye Crackers\nchanged text\n")
					later("recipes/Rye Crackers.md")
				}, []string{"changed"}},
				{"atomic save", func() {
					writeFile(t, dir, "recipes/.Café au lait.md.tmp", "#recipe/drink\nmoved on to tea\n")
					if err := os.Rename(abs("recipes/.Café au lait.md.tmp"), abs("recipes/Café au lait.md")); err != nil {
						t.Fatal(err)
					}
					later("recipes/Café au lait.md")
				}, []string{"tea"}},
				{"rename", func() {
					if err := os.Rename(abs("people/Jürgen Müller.md"), abs("people/Jürgen M.md")); err != nil {
						t.Fatal(err)
					}
				}, []string{"muller", "file:jürgen"}},
				{"delete", func() {
					if err := os.Remove(abs("journal/2024-03-01.md")); err != nil {
						t.Fatal(err)
					}
				}, []string{"running"}},
				{"folder rename", func() {
					if err := os.Rename(abs("projects"), abs("moved")); err != nil {
						t.Fatal(err)
					}
				}, []string{"path:moved/", "path:projects/"}},
				{"folder delete", func() {
					if err := os.RemoveAll(abs("recipes")); err != nil {
						t.Fatal(err)
					}
				}, []string{"tag:recipe"}},
				{"burst of 500", func() {
					for i := 0; i < 500; i++ {
						writeFile(t, dir, fmt.Sprintf("burst/%02d/note %03d.md", i%10, i), fmt.Sprintf("# Burst %d\nburstword number%d\n", i, i))
					}
				}, []string{"burstword", "number250", "path:burst/03/"}},
				{"burst delete", func() {
					if err := os.RemoveAll(abs("burst")); err != nil {
						t.Fatal(err)
					}
				}, []string{"burstword"}},
			}
			for _, s := range steps {
				s.do()
				settle(s.name, s.extra...)
			}
			if n := ix.Count(); n != 6 {
				t.Errorf("final Count = %d, want 6: %v", n, ix.Paths())
			}

			ix.Close()
			if ix.Status().Watching {
				t.Error("still watching after Close")
			}
		})
	}
}

// A branch switch: a watcher batch changing many notes of a larger index
// (their text and their links, some gone, some new) is applied in
// batches while searches are answered, and the index ends as a fresh index
// of the vault. A change of a sixth of the notes is followed note by note,
// reading the notes twice rather than holding them all; a larger one (here
// past a lowered threshold) is applied as a sync, scanning the links of the
// whole vault. Each is handed to Apply as one batch, and made on the disk
// for the live watcher to find.
func TestLargeWatcherBatch(t *testing.T) {
	tests := []struct {
		name     string
		fullScan bool
		watch    bool
	}{
		{"followed note by note", false, false},
		{"scanned in full", true, false},
		{"followed note by note, watched", false, true},
		{"scanned in full, watched", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func(h, b, f int) { heldNotes, bulkNotes, fullScanNotes = h, b, f }(heldNotes, bulkNotes, fullScanNotes)
			heldNotes, bulkNotes = 10, 50
			if tt.fullScan {
				fullScanNotes = 20
			}
			largeChange(t, tt.fullScan, tt.watch)
		})
	}
}

// largeChange runs one case of TestLargeWatcherBatch.
func largeChange(t *testing.T, fullScan, watch bool) {
	const n = 600
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("b%d/note %03d.md", i%6, i)] = fmt.Sprintf("# Note %d\nmain word%d, see [[note %03d]].\n", i, i, (i+1)%n)
	}
	dir := writeVault(t, files)
	ix, err := Open(context.Background(), Options{Path: filepath.Join(t.TempDir(), "idx"), Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 10, Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ix.Close() // the watcher's writer is done with testStep
		testStep = nil
	}()
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// The writer waits at its second batch until a search was answered.
	paused, resume := make(chan struct{}), make(chan struct{})
	var batches atomic.Int32
	testStep = func(step string) {
		if step == "batched" && batches.Add(1) == 2 {
			close(paused)
			<-resume
		}
	}
	ch, unsub := ix.Subscribe()
	defer unsub()
	if watch {
		if err := ix.Watch(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	// The other branch: a sixth of the notes differ (their links too), a
	// few are not there, a few are new.
	var changes []vault.Change
	for i := 0; i < n; i += 6 {
		p := fmt.Sprintf("b%d/note %03d.md", i%6, i)
		writeFile(t, dir, p, fmt.Sprintf("# Note %d\nbranch word%d, see [[note %03d]].\n", i, i, (i*7+3)%n))
		changes = append(changes, vault.Change{Path: p})
	}
	for i := 1; i < n; i += 50 {
		p := fmt.Sprintf("b%d/note %03d.md", i%6, i)
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
		changes = append(changes, vault.Change{Path: p, Removed: true})
	}
	for i := 0; i < 10; i++ {
		p := fmt.Sprintf("new/note x%d.md", i)
		writeFile(t, dir, p, fmt.Sprintf("# New %d\nbranch only, see [[note %03d]].\n", i, i*13))
		changes = append(changes, vault.Change{Path: p})
	}
	if len(changes) <= heldNotes || fullLinkScan(n, len(changes)) != fullScan {
		t.Fatalf("%d changes: not the large change wanted", len(changes))
	}

	applied := make(chan error, 1)
	if !watch {
		go func() { applied <- ix.Apply(context.Background(), vault.Batch{Changes: changes}) }()
	}
	select {
	case <-paused:
	case err := <-applied:
		t.Fatalf("applied without a second batch: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no second batch written within a minute")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if r := search(t, ix, Request{Query: "main word300"}); len(r.Results) == 0 {
			t.Error("no result while the change is applied")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a search waits for the change to be applied")
	}
	close(resume)
	if watch {
		waitFor(t, ix, ch, time.Minute, "the change applied", func() bool { return diskMatches(t, ix) })
	} else if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if b := batches.Load(); b < 5 {
		t.Errorf("%d changes written in %d batches", len(changes), b)
	}
	assertHashesAsFresh(t, ix, assertSameAsFresh(t, ix, dir, "branch", "main", "word42"))
}
