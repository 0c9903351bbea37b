package search

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/vault-agent/vault-agent/vault"
)

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// writeVault writes files (slash paths → content) under a new temp dir.
func writeVault(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		writeFile(t, dir, p, c)
	}
	return dir
}

// bulkRingVault writes a vault of n notes ("n/note 000.md" on), each with
// its own word and a link to the next, and makes a sync of 50 notes or
// more a bulk sync until the test ends.
func bulkRingVault(t testing.TB, n int) string {
	t.Helper()
	prev := bulkNotes
	t.Cleanup(func() { bulkNotes = prev })
	bulkNotes = 50
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("n/note %03d.md", i)] = fmt.Sprintf("# Note %d\nword%d and [[note %03d]]\n", i, i, (i+1)%n)
	}
	return writeVault(t, files)
}

func writeFile(t testing.TB, dir, p, content string) {
	t.Helper()
	abs := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openVault(t testing.TB, dir string) *vault.Vault {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatalf("vault.Open: %v", err)
	}
	return v
}

// openIndex opens an index (in memory when path is "") over dir and syncs it.
func openIndex(t testing.TB, dir, path string) *Index {
	t.Helper()
	ix, err := Open(context.Background(), Options{Path: path, Vault: openVault(t, dir), Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return ix
}

func search(t testing.TB, ix *Index, req Request) *Results {
	t.Helper()
	res, err := ix.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search(%+v): %v", req, err)
	}
	return res
}

func paths(res *Results) []string {
	out := make([]string, len(res.Results))
	for i, r := range res.Results {
		out[i] = r.Path
	}
	return out
}

func sortedPaths(res *Results) []string {
	p := paths(res)
	sort.Strings(p)
	return p
}

// waitFor waits until cond holds, re-checking after each index change
// signal, or fails after timeout.
func waitFor(t testing.TB, ix *Index, ch <-chan struct{}, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// wantFirst checks that each query's first result is the note at its path.
func wantFirst(t testing.TB, ix *Index, limit int, cases ...[2]string) {
	t.Helper()
	for _, c := range cases {
		res, err := ix.Search(context.Background(), Request{Query: c[0], Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(res); len(got) == 0 || got[0] != c[1] {
			t.Errorf("%q: results %v, want %s first", c[0], got, c[1])
		}
	}
}

func joinLines(s ...string) string { return strings.Join(s, "\n") + "\n" }

// openFixture indexes testdata/vault in memory.
func openFixture() (*Index, error) {
	v, err := vault.Open(filepath.Join("..", "testdata", "vault"), vault.Options{})
	if err != nil {
		return nil, err
	}
	ix, err := Open(context.Background(), Options{Vault: v, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// indexReader returns a reader of the current snapshot of ix; the caller
// closes it.
func indexReader(t testing.TB, ix *Index) index.IndexReader {
	t.Helper()
	adv, err := ix.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// benchPaths returns n note paths in 50 folders, as a table of notes would
// hold them.
func benchPaths(n int) []string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("Folder %d/Some Note Name %d.md", i%50, i)
	}
	return ps
}

// checkHeapPerItem fails the test when what build makes keeps more than
// most bytes of live heap for each of n items; keep is kept alive
// throughout (what build was given).
func checkHeapPerItem(t *testing.T, what string, n int, most float64, keep any, build func() any) {
	t.Helper()
	per := heapPerItem(n, keep, build)
	t.Logf("%s: %.1f bytes a note", what, per)
	if per > most {
		t.Errorf("%s keeps %.1f bytes a note, want at most %.0f", what, per, most)
	}
}

// heapPerItem returns the live heap that what build makes keeps, divided
// by n; keep is kept alive throughout (what build was given).
func heapPerItem(n int, keep any, build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	made := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(made)
	runtime.KeepAlive(keep)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
}
