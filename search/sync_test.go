package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/vault-agent/vault-agent/vault"
)

// equivQueries are run against an index and a fresh one to compare them.
var equivQueries = []string{
	"sourdough", "starter", "migration", "tag:recipe", "tag:project", "path:projects/", "file:plan",
	`"rye flour"`, "new", "changed", "cafe", "東京", "brand", "moved", "-tag:recipe",
}

// assertSameAsFresh checks that ix holds exactly what a fresh in-memory
// index over dir holds: the same notes with the same metadata, and the same
// result sets for equivQueries (plus any extra queries).
func assertSameAsFresh(t *testing.T, ix *Index, dir string, extra ...string) (fresh *Index) {
	t.Helper()
	fresh = openIndex(t, dir, "")
	if got, want := ix.Paths(), fresh.Paths(); !reflect.DeepEqual(got, want) {
		t.Fatalf("paths differ from a fresh index:\n got %v\nwant %v", got, want)
	}
	for _, p := range fresh.Paths() {
		a, _ := ix.Note(p)
		b, _ := fresh.Note(p)
		if a.Hash != b.Hash || a.Title != b.Title || !reflect.DeepEqual(a.Tags, b.Tags) || !a.MTime.Equal(b.MTime) || a.Size != b.Size {
			t.Errorf("note %s differs:\n got %+v\nwant %+v", p, a, b)
		}
	}
	for _, q := range append(equivQueries, extra...) {
		got := search(t, ix, Request{Query: q, Limit: 100})
		want := search(t, fresh, Request{Query: q, Limit: 100})
		// Beyond one page, ties may be cut differently; compare totals.
		samePage := want.Total > len(want.Results) || reflect.DeepEqual(sortedPaths(got), sortedPaths(want))
		if !samePage || got.Total != want.Total {
			t.Errorf("query %q: got %v (total %d), fresh index %v (total %d)", q, sortedPaths(got), got.Total, sortedPaths(want), want.Total)
		}
	}
	if ix.Count() != fresh.Count() {
		t.Errorf("Count = %d, fresh %d", ix.Count(), fresh.Count())
	}
	return fresh
}

// assertHashesAsFresh checks that every note of ix has the hashes of its
// links (out and in) and the field lengths it has in fresh, a fresh index
// of the same vault (assertSameAsFresh returns one).
func assertHashesAsFresh(t *testing.T, ix, fresh *Index) {
	t.Helper()
	for _, p := range fresh.Paths() {
		a, _ := ix.Note(p)
		b, _ := fresh.Note(p)
		if a.inHash != b.inHash || a.outHash != b.outHash || a.lens != b.lens {
			t.Errorf("%s: links or field lengths differ from a fresh index", p)
		}
	}
}

func openDisk(t *testing.T, dir, idxPath string) (*Index, SyncStats) {
	t.Helper()
	ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 3})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	st, err := ix.Sync(context.Background(), nil)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return ix, st
}

func TestSyncPersistent(t *testing.T) {
	dir := writeVault(t, smallVault)
	idxPath := filepath.Join(t.TempDir(), "idx")

	var progress [][2]int
	ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Sync(context.Background(), func(done, total int) { progress = append(progress, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 9 || st.Rebuilt || st.Updated+st.Removed+st.Failed != 0 {
		t.Errorf("first sync: %+v", st)
	}
	if len(progress) < 2 || progress[0] != [2]int{0, 9} || progress[len(progress)-1] != [2]int{9, 9} {
		t.Errorf("progress = %v", progress)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen unchanged: nothing is read or written.
	ix, st = openDisk(t, dir, idxPath)
	if st.Unchanged != 9 || st.Added+st.Updated+st.Removed != 0 || st.Rebuilt {
		t.Errorf("reopen sync: %+v", st)
	}
	if r := search(t, ix, Request{Query: "sourdough"}); len(r.Results) == 0 || r.Results[0].Path != "recipes/Sourdough Bread.md" || r.Results[0].Title != "Sourdough Bread" {
		t.Errorf("search after reopen: %+v", r.Results)
	}
	if m, _ := ix.Note("journal/2024-03-01.md"); !m.Date.Equal(time.Date(2024, 3, 1, 0, 0, 0, 0, time.Local)) {
		t.Errorf("note date after reopen = %v", m.Date)
	}
	ix.Close()

	// Change the disk behind the index's back.
	writeFile(t, dir, "new/Brand new.md", "# Brand new\nA new note.\n")
	writeFile(t, dir, "projects/Beta/Notes.md", "#project\nBeta changed completely.\n")
	os.Remove(filepath.Join(dir, "journal", "2024-03-01.md"))
	touched := filepath.Join(dir, "recipes", "Rye Crackers.md")
	later := time.Now().Add(time.Hour)
	os.Chtimes(touched, later, later)

	ix, st = openDisk(t, dir, idxPath)
	want := SyncStats{Added: 1, Updated: 1, Removed: 1, Unchanged: 7}
	st.Took = 0
	if st != want {
		t.Errorf("sync after changes = %+v, want %+v", st, want)
	}
	if m, _ := ix.Note("recipes/Rye Crackers.md"); !m.MTime.Equal(later) {
		t.Errorf("touched note mtime = %v, want %v", m.MTime, later)
	}
	assertSameAsFresh(t, ix, dir)
	ix.Close()

	// And the state record survived: reopening is a no-op again.
	ix, st = openDisk(t, dir, idxPath)
	if st.Unchanged != 9 || st.Added+st.Updated+st.Removed != 0 {
		t.Errorf("second reopen: %+v", st)
	}
	assertSameAsFresh(t, ix, dir)
}

func TestRebuild(t *testing.T) {
	dir := writeVault(t, smallVault)
	for _, path := range []string{"", filepath.Join(t.TempDir(), "idx")} {
		ix, _ := openDisk(t, dir, path)
		st, err := ix.Rebuild(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Rebuilt || st.Added != 9 || st.Reason == "" {
			t.Errorf("Rebuild(%q) = %+v", path, st)
		}
		assertSameAsFresh(t, ix, dir)
	}
}

func TestCorruptIndexRebuilds(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, idxPath string)
	}{
		{"truncated segment", func(t *testing.T, idxPath string) {
			segs, _ := filepath.Glob(filepath.Join(idxPath, "store", "*.zap"))
			if len(segs) == 0 {
				t.Fatal("no segment files")
			}
			for _, s := range segs {
				st, _ := os.Stat(s)
				if err := os.Truncate(s, st.Size()/2); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"garbage root.bolt", func(t *testing.T, idxPath string) {
			if err := os.WriteFile(filepath.Join(idxPath, "store", "root.bolt"), []byte(strings.Repeat("garbage!", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage index_meta.json", func(t *testing.T, idxPath string) {
			if err := os.WriteFile(filepath.Join(idxPath, "index_meta.json"), []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing store", func(t *testing.T, idxPath string) {
			if err := os.RemoveAll(filepath.Join(idxPath, "store")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeVault(t, smallVault)
			idxPath := filepath.Join(t.TempDir(), "idx")
			ix, _ := openDisk(t, dir, idxPath)
			ix.Close()
			tt.damage(t, idxPath)

			ix, st := openDisk(t, dir, idxPath)
			if !st.Rebuilt || st.Reason == "" || st.Added != 9 {
				t.Fatalf("sync after damage = %+v, want a rebuild with a reason", st)
			}
			t.Logf("reason: %s", st.Reason)
			assertSameAsFresh(t, ix, dir)
		})
	}
}

func TestSchemaMismatchRebuilds(t *testing.T) {
	dir := writeVault(t, smallVault)
	idxPath := filepath.Join(t.TempDir(), "idx")
	ix, _ := openDisk(t, dir, idxPath)
	ix.Close()

	raw, err := bleve.OpenUsing(idxPath, map[string]interface{}{"unsafe_batch": false})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.SetInternal(keySchema, []byte("vault-agent-search/0/old")); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	ix, st := openDisk(t, dir, idxPath)
	if !st.Rebuilt || !strings.Contains(st.Reason, "schema") || st.Added != 9 {
		t.Fatalf("sync = %+v, want a schema rebuild", st)
	}
	assertSameAsFresh(t, ix, dir)
}

func TestOtherVaultRebuilds(t *testing.T) {
	dirA := writeVault(t, smallVault)
	dirB := writeVault(t, map[string]string{"only.md": "# Only\n"})
	idxPath := filepath.Join(t.TempDir(), "idx")
	ix, _ := openDisk(t, dirA, idxPath)
	ix.Close()
	ix, st := openDisk(t, dirB, idxPath)
	if !st.Rebuilt || !strings.Contains(st.Reason, "vault") || ix.Count() != 1 {
		t.Fatalf("sync = %+v, count %d", st, ix.Count())
	}
}

func TestSecondOpenerLocked(t *testing.T) {
	dir := writeVault(t, smallVault)
	idxPath := filepath.Join(t.TempDir(), "idx")
	ix, _ := openDisk(t, dir, idxPath)

	done := make(chan error, 1)
	go func() {
		_, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir)})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another vault-agent") {
			t.Fatalf("second Open err = %v, want ErrLocked with a clear message", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second Open hangs")
	}
	// The first one is unaffected, and after Close the index opens again.
	if r := search(t, ix, Request{Query: "sourdough"}); len(r.Results) == 0 {
		t.Fatal("first index broken")
	}
	ix.Close()
	ix2, st := openDisk(t, dir, idxPath)
	if st.Unchanged != 9 || ix2.Count() != 9 {
		t.Fatalf("reopen after close: %+v", st)
	}
}

func TestIndexPathChecks(t *testing.T) {
	dir := writeVault(t, smallVault)
	v := openVault(t, dir)
	notIndex := t.TempDir()
	writeFile(t, notIndex, "precious.txt", "do not delete")
	tests := []struct {
		path string
		want string
	}{
		{filepath.Join(dir, ".index"), "inside the vault"},
		{dir, "inside the vault"},
		{notIndex, "not a vault-agent index"},
	}
	for _, tt := range tests {
		_, err := Open(context.Background(), Options{Path: tt.path, Vault: v})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s) err = %v, want %q", tt.path, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(notIndex, "precious.txt")); err != nil {
		t.Errorf("foreign file touched: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".index")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index dir created inside the vault")
	}
}

func TestApply(t *testing.T) {
	for _, path := range []string{"", "disk"} {
		t.Run("path="+path, func(t *testing.T) {
			dir := writeVault(t, smallVault)
			if path != "" {
				path = filepath.Join(t.TempDir(), "idx")
			}
			ix, _ := openDisk(t, dir, path)
			ch, unsub := ix.Subscribe()
			defer unsub()
			apply := func(changes ...vault.Change) {
				t.Helper()
				if err := ix.Apply(context.Background(), vault.Batch{Changes: changes}); err != nil {
					t.Fatal(err)
				}
				select {
				case <-ch:
				default:
					t.Fatal("no Subscribe signal after Apply")
				}
			}

			writeFile(t, dir, "new/Brand new.md", "# Brand new\nA new note.\n")
			apply(vault.Change{Path: "new/Brand new.md"})
			if r := search(t, ix, Request{Query: "brand"}); len(r.Results) != 1 {
				t.Fatalf("created note not found: %v", paths(r))
			}

			writeFile(t, dir, "recipes/Rye Crackers.md", "# Rye Crackers\nchanged text\n")
			os.Remove(filepath.Join(dir, "journal", "2024-03-01.md"))
			apply(vault.Change{Path: "recipes/Rye Crackers.md"}, vault.Change{Path: "journal/2024-03-01.md", Removed: true})
			assertSameAsFresh(t, ix, dir)

			// Removed flag on a path that exists again (coalesced atomic save).
			writeFile(t, dir, "recipes/Café au lait.md", "#recipe/drink\nmoved on to tea\n")
			apply(vault.Change{Path: "recipes/Café au lait.md", Removed: true})
			assertSameAsFresh(t, ix, dir)

			// Folder renamed: old folder gone, new folder appears.
			if err := os.Rename(filepath.Join(dir, "projects"), filepath.Join(dir, "moved")); err != nil {
				t.Fatal(err)
			}
			apply(vault.Change{Path: "projects", Removed: true}, vault.Change{Path: "moved"})
			assertSameAsFresh(t, ix, dir, "path:moved/")

			// Folder deleted.
			os.RemoveAll(filepath.Join(dir, "recipes"))
			apply(vault.Change{Path: "recipes", Removed: true})
			assertSameAsFresh(t, ix, dir)

			// Ignored paths and escapes do nothing.
			writeFile(t, dir, ".trash/x.md", "sourdough")
			apply(vault.Change{Path: ".trash/x.md"}, vault.Change{Path: "../outside.md"})
			assertSameAsFresh(t, ix, dir)

			// Rescan.
			writeFile(t, dir, "late.md", "late arrival")
			apply(vault.Change{Path: "unrelated.md"})
			if err := ix.Apply(context.Background(), vault.Batch{Rescan: true, Reason: "overflow"}); err != nil {
				t.Fatal(err)
			}
			assertSameAsFresh(t, ix, dir, "late")
		})
	}
}

// A .md file holding binary data is not a note: it is never indexed, and a
// note that becomes binary leaves the index.
func TestBinaryFilesAreNotNotes(t *testing.T) {
	dir := writeVault(t, smallVault)
	writeFile(t, dir, "attachments/photo.md", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR sourdough")
	ix, st := openDisk(t, dir, filepath.Join(t.TempDir(), "idx"))
	if st.Added != 9 || st.Failed != 0 {
		t.Errorf("first sync: %+v", st)
	}
	if _, ok := ix.Note("attachments/photo.md"); ok {
		t.Error("a binary file was indexed")
	}
	writeFile(t, dir, "recipes/Rye Crackers.md", "rye\x00\x01\x02")
	st, err := ix.Sync(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed != 1 || st.Failed != 0 {
		t.Errorf("sync after a note became binary: %+v", st)
	}
	for _, p := range ix.Paths() {
		if p == "recipes/Rye Crackers.md" || p == "attachments/photo.md" {
			t.Errorf("%s is in the index", p)
		}
	}
	if _, err := ix.Vault().ReadNote("attachments/photo.md"); !errors.Is(err, vault.ErrNotMarkdown) || !strings.Contains(err.Error(), "binary") {
		t.Errorf("ReadNote of a binary file: %v", err)
	}
}

// TestSaveWritesItsNotesOnly checks that the cost of a change in records
// written is that of the notes it changed, whatever the size of the vault:
// each note's record is its own (notestore.go), and a sync writes those of
// the notes it wrote, once.
func TestSaveWritesItsNotesOnly(t *testing.T) {
	for _, n := range []int{30, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			files := map[string]string{}
			for i := 0; i < n; i++ {
				files[fmt.Sprintf("n/note %03d.md", i)] = fmt.Sprintf("# Note %d\nword%d and [[note %03d]]\n", i, i, (i+1)%n)
			}
			dir := writeVault(t, files)
			idxPath := filepath.Join(t.TempDir(), "idx")
			ix, _ := openDisk(t, dir, idxPath)
			if got := ix.store.records.Load(); got != int64(n) {
				t.Errorf("the first index wrote %d records for %d notes", got, n)
			}
			before := ix.store.records.Load()
			// Two notes change their text, not their links or the
			// sentences around them; one is new.
			writeFile(t, dir, "n/note 005.md", "# Note 5\nword5 and [[note 006]]\n\nchanged\n")
			writeFile(t, dir, "n/note 017.md", "# Note 17\nword17 and [[note 018]]\n\nchanged\n")
			writeFile(t, dir, "new.md", "# New\nfresh words\n")
			st, err := ix.Sync(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Updated != 2 || st.Added != 1 {
				t.Fatalf("sync: %+v", st)
			}
			if got := ix.store.records.Load() - before; got != 3 {
				t.Errorf("a change of 3 notes wrote %d records", got)
			}
			ix.Close()
			ix, st = openDisk(t, dir, idxPath)
			if st.Rebuilt || st.Unchanged != n+1 || ix.Count() != n+1 {
				t.Errorf("reopen: %+v, %d notes", st, ix.Count())
			}
			if r := search(t, ix, Request{Query: "word17 changed"}); len(r.Results) == 0 || r.Results[0].Path != "n/note 017.md" {
				t.Errorf("search after reopen: %v", paths(r))
			}
		})
	}
}

// TestBulkSyncRecordsOnce checks that a bulk sync (a first index) writes
// each note's record once, keeping the notes out of memory until its end,
// and that a bulk sync cancelled part way still writes what it read, so
// the next sync goes on from there.
func TestBulkSyncRecordsOnce(t *testing.T) {
	dir := bulkRingVault(t, 300)

	idxPath := filepath.Join(t.TempDir(), "idx")
	ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	inMemory := 0
	if _, err := ix.Sync(context.Background(), func(done, total int) {
		if done > 0 && done < total && ix.Count() > 0 {
			inMemory++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if n := ix.store.records.Load(); n != 300 {
		t.Errorf("a bulk sync of 300 notes wrote %d records", n)
	}
	if inMemory > 0 || ix.Count() != 300 {
		t.Errorf("notes in memory while indexing %d times; %d at the end", inMemory, ix.Count())
	}
	ix.Close()

	idxPath = filepath.Join(t.TempDir(), "idx")
	ix, err = Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = ix.Sync(ctx, func(done, total int) {
		if done >= 150 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sync: %v", err)
	}
	written := ix.Count()
	if written < 150 || written >= 300 {
		t.Fatalf("%d notes indexed when the sync was cancelled", written)
	}
	ix.Close()
	_, st := openDisk(t, dir, idxPath)
	if st.Rebuilt || st.Unchanged != written || st.Added != 300-written {
		t.Errorf("the sync after a cancelled one: %+v, want %d unchanged and the rest added", st, written)
	}
}

// TestFullIndexPartitioned checks that a full index done in several link
// partitions (spilled to files beside the index) gives every note the
// same inbound link context as one done in memory, and leaves no file.
func TestFullIndexPartitioned(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("f%d/note %02d.md", i%4, i)] = fmt.Sprintf("# Note %d\nSee [[note %02d|alias%d]] about topic%d, and [text%d](note%%20%02d.md).\n",
			i, (i*7+3)%60, i, i, i, (i*11+5)%60)
	}
	dir := writeVault(t, files)
	build := func(parts int) (*Index, string) {
		old := notesPerPartition
		notesPerPartition = parts
		defer func() { notesPerPartition = old }()
		idxPath := filepath.Join(t.TempDir(), "idx")
		ix, _ := openDisk(t, dir, idxPath)
		return ix, idxPath
	}
	one, _ := build(1000)
	many, manyPath := build(9) // 7 partitions
	if one.Count() != 60 || many.Count() != 60 {
		t.Fatalf("counts %d, %d", one.Count(), many.Count())
	}
	linked := 0
	for _, p := range one.Paths() {
		a, _ := one.Note(p)
		b, _ := many.Note(p)
		if a.inHash != b.inHash {
			t.Errorf("%s: inbound context differs (%x, %x)", p, a.inHash, b.inHash)
		}
		if a.inHash != 0 {
			linked++
		}
	}
	if linked < 50 {
		t.Errorf("only %d notes have inbound links", linked)
	}
	for _, q := range []string{"alias7", "topic12", "text30"} {
		if got, want := sortedPaths(search(t, many, Request{Query: q})), sortedPaths(search(t, one, Request{Query: q})); !reflect.DeepEqual(got, want) || len(want) < 2 {
			t.Errorf("%s: %v, in memory %v", q, got, want)
		}
	}
	entries, _ := os.ReadDir(manyPath)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "linkscan-") {
			t.Errorf("%s left in the index folder", e.Name())
		}
	}
}

// TestSyncWaitsForPersister checks that a sync does not run ahead of the
// persister by more than maxUnpersisted batches (their segments stay in
// memory until persisted). The persister is made as slow as it can be:
// bleve's signal that it persisted a batch reaches the writer only when
// the writer waits for that batch, so every batch past the first
// maxUnpersisted must wait for one, whatever the machine's speed.
func TestSyncWaitsForPersister(t *testing.T) {
	var mu sync.Mutex
	held := map[chan error]func(){} // signals not handed on yet
	waited := map[chan error]bool{} // batches the writer waits for
	batches := 0
	testHoldPersisted = func(ch chan error, deliver func()) {
		mu.Lock()
		defer mu.Unlock()
		batches++
		if waited[ch] {
			deliver()
			return
		}
		held[ch] = deliver
	}
	testWaitPersisted = func(ch chan error) {
		mu.Lock()
		defer mu.Unlock()
		waited[ch] = true
		if deliver := held[ch]; deliver != nil {
			delete(held, ch)
			deliver()
		}
	}
	defer func() { testHoldPersisted, testWaitPersisted = nil, nil }()

	files := map[string]string{}
	for i := 0; i < 60; i++ {
		files[fmt.Sprintf("note %02d.md", i)] = fmt.Sprintf("# Note %d\nword%d\n", i, i)
	}
	dir := writeVault(t, files)
	ix, _ := openDisk(t, dir, filepath.Join(t.TempDir(), "idx")) // 20 batches of 3
	mu.Lock()
	defer mu.Unlock()
	if batches != 20 {
		t.Fatalf("%d batches, want 20", batches)
	}
	if n, ahead := ix.persistWaits.Load(), ix.persistAhead.Load(); n != int64(batches-maxUnpersisted) || ahead != maxUnpersisted {
		t.Errorf("the writer waited for the persister %d times in %d batches (want %d), and was up to %d batches ahead of it (want %d)",
			n, batches, batches-maxUnpersisted, ahead, maxUnpersisted)
	}
	if len(held) > 0 {
		t.Errorf("the sync ended without the signals of %d batches", len(held))
	}
	if ix.Count() != 60 {
		t.Errorf("%d notes", ix.Count())
	}
	if m, ok := ix.Note("note 59.md"); !ok || !m.hasLens {
		t.Errorf("the last batch's note: %+v, %v", m, ok)
	}
}

// A note touched without a change keeps its index entry but must carry
// the new mtime where time filters look, not only in its metadata.
func TestSyncTouchedNoteMatchesNewTimeRange(t *testing.T) {
	dir := writeVault(t, smallVault)
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	touched := filepath.Join(dir, "recipes", "Rye Crackers.md")
	if err := os.Chtimes(touched, old, old); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, dir, "")
	later := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(touched, later, later); err != nil {
		t.Fatal(err)
	}
	st, err := ix.Sync(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Updated != 0 || st.Unchanged != 9 {
		t.Fatalf("sync = %+v, want the touched note unchanged", st)
	}
	in := Request{Query: "crackers", From: later.Add(-time.Hour), To: later.Add(time.Hour)}
	if res := search(t, ix, in); len(res.Results) != 1 || res.Results[0].Path != "recipes/Rye Crackers.md" {
		t.Errorf("search in the new mtime's range = %v, want the touched note", paths(res))
	}
	before := Request{Query: "crackers", From: old.Add(-time.Hour), To: old.Add(time.Hour)}
	if res := search(t, ix, before); len(res.Results) != 0 {
		t.Errorf("search in the old mtime's range = %v, want none", paths(res))
	}
}

// TestReadNotesInOrder checks that notes read by several workers are
// handed over in the order asked for, when some take much longer to parse
// than the others, and that an error from the receiver stops the reading.
func TestReadNotesInOrder(t *testing.T) {
	files := map[string]string{}
	var paths []string
	for i := 0; i < 300; i++ {
		p := fmt.Sprintf("n/%03d.md", i)
		files[p] = fmt.Sprintf("# Note %d\nword%d\n", i, i)
		if i%29 == 3 {
			files[p] = strings.Repeat("A long note with [[links]] and words. ", 8000)
		}
		paths = append(paths, p)
	}
	paths = append(paths[:100], append([]string{"missing.md"}, paths[100:]...)...)
	dir := writeVault(t, files)
	ix, err := Open(context.Background(), Options{Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 8, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var got []string
	err = ix.readNotes(context.Background(), paths, false, func(r noteRead) error {
		if (r.err != nil) != (r.path == "missing.md") {
			t.Errorf("%s: %v", r.path, r.err)
		}
		got = append(got, r.path)
		return nil
	})
	if err != nil || !slices.Equal(got, paths) {
		t.Errorf("read %d notes (%v), not in the order asked for: %v", len(got), err, got)
	}
	stop := errors.New("stop")
	n := 0
	err = ix.readNotes(context.Background(), paths, false, func(r noteRead) error {
		if n++; n == 50 {
			return stop
		}
		return nil
	})
	if err != stop || n != 50 {
		t.Errorf("stopped at %d notes with %v", n, err)
	}
}

// TestLinkPartsAreRuns checks that the partitions of a full index are runs
// of the sorted paths, of at most notesPerPartition notes each, so that a
// full index writes its notes in the order of their paths.
func TestLinkPartsAreRuns(t *testing.T) {
	defer func(n int) { notesPerPartition = n }(notesPerPartition)
	notesPerPartition = 9
	var paths []string
	for i := 0; i < 100; i++ {
		paths = append(paths, fmt.Sprintf("d%d/note %03d.md", i%7, i))
	}
	slices.Sort(paths)
	ix := openIndex(t, writeVault(t, nil), "")
	lp, err := ix.newLinkParts(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer lp.close()
	sizes := make([]int, lp.n)
	last := 0
	for _, p := range paths {
		k := lp.partOf(p)
		if k < last || k >= lp.n {
			t.Fatalf("%s in partition %d, after %d (of %d)", p, k, last, lp.n)
		}
		last = k
		sizes[k]++
	}
	for k, n := range sizes {
		if n == 0 || n > notesPerPartition {
			t.Errorf("partition %d has %d notes: %v", k, n, sizes)
		}
	}
	for _, p := range []string{"", "a", "d3/", "zzz"} {
		if k := lp.partOf(p); k < 0 || k >= lp.n {
			t.Errorf("%q in partition %d of %d", p, k, lp.n)
		}
	}
}
