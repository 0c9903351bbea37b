package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// sameMeta reports whether a and b hold the same metadata (times by
// instant, not by location).
func sameMeta(a, b NoteMeta) bool {
	return a.Path == b.Path && a.Title == b.Title && reflect.DeepEqual(a.Aliases, b.Aliases) &&
		reflect.DeepEqual(a.Tags, b.Tags) && a.MTime.Equal(b.MTime) && a.Date.Equal(b.Date) && a.Size == b.Size &&
		a.Hash == b.Hash && a.lens == b.lens && a.hasLens == b.hasLens && a.inHash == b.inHash &&
		a.keys == b.keys && a.outHash == b.outHash
}

// TestBulkIndexKeepsNotesOutOfMemory checks that a first index of a large
// vault keeps the metadata of the notes it has written out of the index's
// tables (in the note store beside the index) until it ends, and that the
// notes it ends with, in memory and in the records read back on reopen,
// are the same as those of an index that keeps them all along.
func TestBulkIndexKeepsNotesOutOfMemory(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 120; i++ {
		files[fmt.Sprintf("f%d/note %03d.md", i%3, i)] = fmt.Sprintf(
			"---\naliases: [alias%d]\ntags: [t%d]\ndate: 2024-03-%02d\n---\n# Note %d\nword%d, see [[note %03d]] and [[note %03d|other]].\n",
			i, i%5, i%28+1, i, i, (i+1)%120, (i*7)%120)
	}
	dir := writeVault(t, files)
	defer func(b, p int) { bulkNotes, notesPerPartition = b, p }(bulkNotes, notesPerPartition)
	open := func() (*Index, string) {
		idxPath := filepath.Join(t.TempDir(), "idx")
		ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 7})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix, idxPath
	}
	sync := func(ix *Index, progress ProgressFunc) {
		t.Helper()
		if _, err := ix.Sync(context.Background(), progress); err != nil {
			t.Fatal(err)
		}
	}

	// Kept: a sync under bulkNotes keeps every note's metadata in memory
	// as it goes.
	bulkNotes, notesPerPartition = 1000, 1000
	kept, keptPath := open()
	sync(kept, nil)
	if kept.Count() != 120 {
		t.Fatalf("%d notes", kept.Count())
	}

	// Spilled: a bulk sync in 3 link partitions (files beside the index).
	bulkNotes, notesPerPartition = 50, 40
	spilled, spilledPath := open()
	var midway, inMemory int
	sync(spilled, func(done, total int) {
		if done < 30 || done == total {
			return
		}
		midway++
		if spilled.Count() > 0 {
			inMemory++
		}
	})
	if midway == 0 || inMemory > 0 {
		t.Errorf("while indexing (%d looks): notes in memory %d times", midway, inMemory)
	}
	if left, _ := filepath.Glob(filepath.Join(spilledPath, "linkscan-*")); len(left) > 0 {
		t.Errorf("left in the index folder: %v", left)
	}

	// check compares the notes of ix with those of kept, field lengths
	// included: every note has them, in memory and in its record.
	check := func(name string, ix, kept *Index) {
		t.Helper()
		if ix.Count() != 120 {
			t.Fatalf("%s: %d notes", name, ix.Count())
		}
		for _, p := range kept.Paths() {
			a, _ := kept.Note(p)
			b, ok := ix.Note(p)
			if !ok || !sameMeta(a, b) || !b.hasLens {
				t.Errorf("%s: %s = %+v, want %+v", name, p, b, a)
			}
		}
		if got, want := ix.avgLens(), kept.avgLens(); got != want {
			t.Errorf("%s: mean field lengths %v, want %v", name, got, want)
		}
	}
	check("spilled", spilled, kept)
	if res := search(t, spilled, Request{Query: "alias17"}); len(res.Results) == 0 || res.Results[0].Path != "f2/note 017.md" {
		t.Errorf("search alias17: %v", paths(res))
	}
	spilled.Close()
	kept.Close()
	reopened, st := openDisk(t, dir, spilledPath)
	if st.Rebuilt || st.Unchanged != 120 {
		t.Errorf("reopen: %+v", st)
	}
	keptReopened, _ := openDisk(t, dir, keptPath)
	check("reopened", reopened, keptReopened)
	check("reopened against kept", reopened, kept)
}

// TestOpenRemovesStaleScans checks that opening an index removes the link
// scan folders a killed sync left in it, and nothing else.
func TestOpenRemovesStaleScans(t *testing.T) {
	dir := writeVault(t, smallVault)
	idxPath := filepath.Join(t.TempDir(), "idx")
	ix, _ := openDisk(t, dir, idxPath)
	notes := ix.Count()
	ix.Close()
	stale := filepath.Join(idxPath, linkScanPrefix+"12345")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "notes"), []byte("left by a killed sync"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(idxPath, "other")
	if err := os.WriteFile(keep, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ix, st := openDisk(t, dir, idxPath)
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale scan folder: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("another file: %v", err)
	}
	if st.Rebuilt || notes == 0 || ix.Count() != notes || st.Unchanged != notes {
		t.Errorf("reopen: %+v, %d notes", st, ix.Count())
	}
}

// TestBulkIndexFailingKeepsNotesWritten checks that a first index that
// fails part way (here a link partition gone from the disk) still has, in
// memory, the notes of the batches it wrote.
func TestBulkIndexFailingKeepsNotesWritten(t *testing.T) {
	defer func(b, p int) { bulkNotes, notesPerPartition = b, p }(bulkNotes, notesPerPartition)
	bulkNotes, notesPerPartition = 50, 40
	files := map[string]string{}
	for i := 0; i < 120; i++ {
		files[fmt.Sprintf("note %03d.md", i)] = fmt.Sprintf("# Note %d\nword%d, see [[note %03d]].\n", i, i, (i*7)%120)
	}
	dir := writeVault(t, files)
	idxPath := filepath.Join(t.TempDir(), "idx")
	ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	removed := false
	_, err = ix.Sync(context.Background(), func(done, total int) {
		if !removed { // at the start: the links were scanned, no note is written yet

			parts, _ := filepath.Glob(filepath.Join(idxPath, linkScanPrefix+"*", "2"))
			for _, p := range parts {
				removed = os.Remove(p) == nil
			}
		}
	})
	if !removed || err == nil {
		t.Fatalf("partition removed: %v; sync: %v", removed, err)
	}
	docs, derr := ix.idx.DocCount()
	if n := ix.Count(); n == 0 || n >= 120 || derr != nil || uint64(n) != docs {
		t.Errorf("after the failure: %d notes in memory, %d documents (%v)", n, docs, derr)
	}
}
