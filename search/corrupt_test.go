package search

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/vault-agent/vault-agent/internal/fixture"
)

// damageSegments writes seeded random bytes over the middle of every
// segment file of the index at path.
func damageSegments(t *testing.T, path string, seed uint64) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(path, bleveStoreDir, "*.zap"))
	if len(files) == 0 {
		t.Fatal("no segment file")
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		junk := make([]byte, min(4096, fi.Size()/4))
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		fh, err := os.OpenFile(f, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.WriteAt(junk, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
}

// Random bytes written into the middle of the segment files of a closed
// index are found when it is opened again: the damaged files are moved
// aside, the index is rebuilt from the vault with the reason said, and
// searches find the notes. An undamaged index is opened as it is.
func TestCorruptSegmentIsRebuilt(t *testing.T) {
	idxPath := filepath.Join(t.TempDir(), "idx")
	openIndex(t, fixture.Vault(), idxPath).Close()
	reopen := func() (*Index, SyncStats) {
		t.Helper()
		ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, fixture.Vault()), Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		stats, err := ix.Sync(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return ix, stats
	}
	ix, stats := reopen()
	if stats.Rebuilt || stats.Added != 0 {
		t.Fatalf("an undamaged index was rebuilt: %+v", stats)
	}
	ix.Close()

	damageSegments(t, idxPath, 1)
	ix, stats = reopen()
	if !stats.Rebuilt || !strings.Contains(stats.Reason, "corrupt") || !strings.Contains(stats.Reason, "checksum") {
		t.Fatalf("the damaged index was not rebuilt: %+v", stats)
	}
	if moved, _ := filepath.Glob(filepath.Join(idxPath, corruptDir, bleveStoreDir, "*.zap")); len(moved) == 0 {
		t.Error("the damaged segments were not moved aside")
	}
	if res := search(t, ix, Request{Query: "sourdough starter"}); len(res.Results) == 0 || ix.Count() < 50 {
		t.Errorf("after the rebuild: %d results, %d notes", len(res.Results), ix.Count())
	}
}

// A search that panics (as bleve does on damaged bytes it reads) returns
// ErrCorrupt instead of crashing, and the index is rebuilt from the vault
// in the background: a later search finds the notes.
func TestSearchPanicRebuilds(t *testing.T) {
	ix := openIndex(t, fixture.Vault(), filepath.Join(t.TempDir(), "idx"))
	var fired bool
	ix.testBeforeSearch = func() {
		if !fired {
			fired = true
			// A panic raised inside a library that decodes the
			// index, as a damaged bitmap would raise it.
			var b *roaring.Bitmap
			_ = b.GetCardinality()
		}
	}
	_, err := ix.Search(context.Background(), Request{Query: "sourdough"})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "nil pointer") {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	select {
	case <-*ix.rebuildDone.Load():
	case <-time.After(30 * time.Second):
		t.Fatal("the rebuild did not end")
	}
	if ix.Count() < 50 {
		t.Errorf("%d notes after the rebuild", ix.Count())
	}
	if moved, _ := filepath.Glob(filepath.Join(ix.path, corruptDir, bleveStoreDir, "*")); len(moved) == 0 {
		t.Error("the damaged index was not moved aside")
	}
	if res := search(t, ix, Request{Query: "sourdough starter"}); len(res.Results) == 0 {
		t.Error("no results after the rebuild")
	}
}

// A search that panics in this program's own code (a fault, not damage
// read from the index) returns ErrInternal with what happened; the index
// is neither moved aside nor rebuilt, and the next search runs as usual.
func TestSearchBugIsNotDamage(t *testing.T) {
	ix := openIndex(t, fixture.Vault(), filepath.Join(t.TempDir(), "idx"))
	var fired bool
	ix.testBeforeSearch = func() {
		if !fired {
			fired = true
			var words []string
			_ = words[len(words)] // index out of range, in this package
		}
	}
	_, err := ix.Search(context.Background(), Request{Query: "sourdough"})
	if !errors.Is(err, ErrInternal) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("err = %v, want ErrInternal", err)
	}
	if ix.rebuilding.Load() || ix.rebuildDone.Load() != nil {
		t.Error("a fault of the program started a rebuild")
	}
	if moved, _ := filepath.Glob(filepath.Join(ix.path, corruptDir, "*")); len(moved) > 0 {
		t.Errorf("the index was moved aside: %v", moved)
	}
	if res := search(t, ix, Request{Query: "sourdough starter"}); len(res.Results) == 0 {
		t.Error("no results from the next search")
	}
}
