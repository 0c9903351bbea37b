package semantic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

const dims = 256

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

// threeChunks is a note of three sections, each its own chunk.
func threeChunks(i int, extra string) string {
	return fmt.Sprintf("# Note %d\n\nintro of note %d %s\n\n## Alpha\n\nalpha section of note %d\n\n## Beta\n\nbeta section of note %d\n", i, i, extra, i, i)
}

func manyNotes(t testing.TB, n int) string {
	dir := t.TempDir()
	for i := range n {
		writeFile(t, dir, fmt.Sprintf("notes/n%02d.md", i), threeChunks(i, ""))
	}
	return dir
}

func openIndex(t testing.TB, dir string) *search.Index {
	t.Helper()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(context.Background(), search.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}

type fixture struct {
	srv *llmtest.EmbedServer
	log *bytes.Buffer
	mu  *sync.Mutex
}

func newFixture(t testing.TB, fn llmtest.EmbedFunc) *fixture {
	return &fixture{srv: llmtest.NewEmbedServer(t, fn), log: &bytes.Buffer{}, mu: &sync.Mutex{}}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (f *fixture) logs() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.String()
}

func (f *fixture) embedder(t testing.TB, model string, batch int) *llm.Embedder {
	t.Helper()
	e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: f.srv.URL, Model: model, Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (f *fixture) open(t testing.TB, ix *search.Index, emb Embedder, path string, batch int) *Engine {
	t.Helper()
	e, err := Open(Options{Index: ix, Embedder: emb, Path: path, Batch: batch,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{f.mu, f.log}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func syncOK(t testing.TB, e *Engine) Stats {
	t.Helper()
	st, err := e.Sync(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSyncBatchesAndReopenMakesNoCall(t *testing.T) {
	dir := manyNotes(t, 10) // 30 chunks
	store := filepath.Join(t.TempDir(), "vectors.db")
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), store, 8)
	var prog [][2]int
	st, err := e.Sync(context.Background(), func(done, total int) { prog = append(prog, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 30 || st.Chunks != 30 || st.Notes != 10 {
		t.Fatalf("stats %+v", st)
	}
	if got := f.srv.Batches(); fmt.Sprint(got) != "[8 8 8 6]" {
		t.Errorf("batches %v, want [8 8 8 6]", got)
	}
	if fmt.Sprint(prog) != "[[0 30] [8 30] [16 30] [24 30] [30 30]]" {
		t.Errorf("progress %v", prog)
	}
	e.Close()

	calls := f.srv.Requests()
	e2 := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), store, 8)
	st = syncOK(t, e2)
	if f.srv.Requests() != calls || st.Embedded != 0 || st.Loaded != 10 || st.Chunks != 30 {
		t.Fatalf("reopen: %d requests (want %d), stats %+v", f.srv.Requests()-calls, 0, st)
	}
}

func TestOnlyChangedChunksAreEmbedded(t *testing.T) {
	dir := manyNotes(t, 20)
	store := filepath.Join(t.TempDir(), "vectors.db")
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), store, 16)
	syncOK(t, e)
	e.Close()

	// Ten notes get one section changed; one is renamed, one moved, one
	// deleted.
	for i := range 10 {
		writeFile(t, dir, fmt.Sprintf("notes/n%02d.md", i), threeChunks(i, "edited"))
	}
	if err := os.Rename(filepath.Join(dir, "notes/n10.md"), filepath.Join(dir, "notes/renamed.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "notes/n11.md"), filepath.Join(dir, "moved.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "notes/n12.md")); err != nil {
		t.Fatal(err)
	}
	texts := f.srv.Texts()
	e2 := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), store, 16)
	st := syncOK(t, e2)
	if got := f.srv.Texts() - texts; got != 10 || st.Embedded != 10 {
		t.Errorf("embedded %d chunks (stats %+v), want 10: only the changed sections", got, st)
	}
	if st.Notes != 19 || st.Chunks != 57 || st.Removed != 3 {
		t.Errorf("stats %+v, want 19 notes, 57 chunks, 3 removed (two old paths and a deleted note)", st)
	}
	res, err := e2.Search(context.Background(), search.Request{Query: "note 12 intro", Mode: search.ModeSemantic, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Results {
		if r.Path == "notes/n12.md" || r.Path == "notes/n10.md" {
			t.Errorf("%s is gone but found", r.Path)
		}
	}
	if !slices.ContainsFunc(res.Results, func(r search.Result) bool { return r.Path == "moved.md" }) {
		t.Errorf("the moved note is not found")
	}
}

// failAfter is an embedder that dies (as a killed process would) after n
// batches: the batch in flight is never committed.
type failAfter struct {
	Embedder
	n int
}

var errKilled = errors.New("killed")

func (f *failAfter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.n == 0 {
		return nil, errKilled
	}
	f.n--
	return f.Embedder.Embed(ctx, texts)
}

func TestResumeAfterCrash(t *testing.T) {
	dir := manyNotes(t, 20) // 60 chunks
	store := filepath.Join(t.TempDir(), "vectors.db")
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), &failAfter{f.embedder(t, "m1", 64), 3}, store, 10)
	if _, err := e.Sync(context.Background(), nil); !errors.Is(err, errKilled) {
		t.Fatalf("err %v", err)
	}
	e.Close()
	if f.srv.Texts() != 30 {
		t.Fatalf("embedded %d before the crash, want 30", f.srv.Texts())
	}
	e2 := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), store, 10)
	st := syncOK(t, e2)
	if st.Embedded != 30 || f.srv.Texts() != 60 || st.Chunks != 60 {
		t.Errorf("resume embedded %d (server total %d), stats %+v; want the 30 chunks not committed", st.Embedded, f.srv.Texts(), st)
	}
}

func TestModelAndDimensionChange(t *testing.T) {
	dir := manyNotes(t, 4) // 12 chunks
	store := filepath.Join(t.TempDir(), "vectors.db")
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), store, 64)
	syncOK(t, e)
	e.Close()

	e = f.open(t, openIndex(t, dir), f.embedder(t, "m2", 64), store, 64)
	st := syncOK(t, e)
	if st.Embedded != 12 || f.srv.Models()["m2"] != 12 {
		t.Errorf("model change embedded %d", st.Embedded)
	}
	if !strings.Contains(f.logs(), `the embedding model changed from \"m1\" to \"m2\": every chunk will be embedded again`) {
		t.Errorf("no clear message: %s", f.logs())
	}
	e.Close()

	// The same model name now answers with another dimension.
	f.srv.SetFunc(llmtest.WordVectors(dims*2, nil))
	writeFile(t, dir, "notes/n00.md", threeChunks(0, "changed"))
	e = f.open(t, openIndex(t, dir), f.embedder(t, "m2", 64), store, 64)
	st = syncOK(t, e)
	if st.Chunks != 12 || e.dims != dims*2 {
		t.Errorf("after a dimension change: stats %+v, dims %d", st, e.dims)
	}
	if !strings.Contains(f.logs(), "now returns vectors of 512 dimensions instead of 256") {
		t.Errorf("no clear message: %s", f.logs())
	}
	if _, err := e.Search(context.Background(), search.Request{Query: "alpha", Mode: search.ModeSemantic}); err != nil {
		t.Error(err)
	}
}

func TestWatcherKeepsVectorsFresh(t *testing.T) {
	dir := manyNotes(t, 3)
	ix := openIndex(t, dir)
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, ix, f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.Watch(ctx)
	texts := f.srv.Texts()
	// The index applies a change as its watcher would.
	writeFile(t, dir, "notes/n00.md", threeChunks(0, "sourdough"))
	if err := os.Remove(filepath.Join(dir, "notes/n01.md")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(ctx, vault.Batch{Changes: []vault.Change{{Path: "notes/n00.md"}, {Path: "notes/n01.md", Removed: true}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e, func() bool {
		e.mu.RLock()
		defer e.mu.RUnlock()
		return e.notes["notes/n01.md"] == nil && len(e.rowNote) == 6 && f.srv.Texts() == texts+1
	})
	res, err := e.Search(ctx, search.Request{Query: "sourdough", Mode: search.ModeSemantic, Limit: 1})
	if err != nil || len(res.Results) != 1 || res.Results[0].Path != "notes/n00.md" {
		t.Fatalf("%v %+v", err, res)
	}
}

// waitFor waits for the watcher's updates until ok holds.
func waitFor(t *testing.T, e *Engine, ok func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !ok() {
		select {
		case <-e.updated:
		case <-deadline:
			t.Fatal("the vectors did not follow the change")
		}
	}
}
