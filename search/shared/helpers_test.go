package shared

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// place is one vault's index shared by the processes of a test: each
// Index opened on it plays one process (the lock and the socket do not
// tell processes apart from goroutines of one).
type place struct {
	root, index, socket string
}

func newPlace(t *testing.T) place {
	t.Helper()
	// Socket paths are short (sun_path): not under t.TempDir().
	dir, err := os.MkdirTemp("", "va")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return place{root: fixture.Copy(t), index: filepath.Join(t.TempDir(), "idx"), socket: filepath.Join(dir, "s", "i.sock")}
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// open opens pl's index as one more process would; edit changes its
// options first.
func (pl place) open(t *testing.T, edit ...func(*Options)) *Index {
	t.Helper()
	v, err := vault.Open(pl.root, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Path: pl.index, Socket: pl.socket, Vault: v, Logger: testLogger(t), FrontEnd: t.Name(), CallTimeout: 5 * time.Second}
	for _, e := range edit {
		e(&opts)
	}
	x, err := Open(ctxT(t), opts)
	if err != nil {
		t.Fatalf("open %s: %v", pl.index, err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// lock opens pl's index as a process that does not share it would: it
// holds the lock, and nothing answers on the socket.
func (pl place) lock(t *testing.T) (*vault.Vault, *search.Index) {
	t.Helper()
	v, err := vault.Open(pl.root, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(ctxT(t), search.Options{Path: pl.index, Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	return v, ix
}

// started opens pl's index and brings it up to date.
func (pl place) started(t *testing.T, edit ...func(*Options)) *Index {
	t.Helper()
	x := pl.open(t, edit...)
	if _, err := x.Start(ctxT(t), StartOptions{}); err != nil {
		t.Fatal(err)
	}
	return x
}

// embedder is an embedding model for tests, run in process.
type embedder struct {
	model string
	fn    llmtest.EmbedFunc
}

func (e embedder) Model() string { return e.model }

func (e embedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = e.fn(s)
	}
	return out, nil
}

// eventually waits, up to d, for ok to hold, trying again whenever
// changed signals (or every 50 ms, for what no signal tells).
func eventually(t *testing.T, d time.Duration, changed <-chan struct{}, ok func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-deadline.C:
			t.Fatalf("not within %s", d)
		case <-changed:
		case <-tick.C:
		}
	}
}
