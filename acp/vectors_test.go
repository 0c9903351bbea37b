package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/service"
)

// panicEmbedder panics when the vault is opened with it, as a bug in
// opening a vault would.
type panicEmbedder struct{}

func (panicEmbedder) Model() string { panic("opening failed") }
func (panicEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("not called")
}

// within runs fn and fails the test if it does not return in time (a
// lock left held makes it block for good).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}

// TestBackendSurvivesAFailedOpen: a panic while a session opens its vault
// is an error for that session, and leaves nothing held: the next session
// is answered, and Close returns.
func TestBackendSurvivesAFailedOpen(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "Note.md"), []byte("# Note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := NewBackend(service.Options{Index: filepath.Join(t.TempDir(), "index"), Env: &service.Env{}, Agent: true, Embedder: panicEmbedder{}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 2 {
		within(t, "opening a vault", func() {
			if _, err := b.Open(ctx, root); err == nil {
				t.Errorf("open %d: no error", i)
			}
		})
	}
	within(t, "Close", func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// TestBackendOpensWithDamagedVectors damages the vectors file beside the
// index between two servers: a session still opens the vault and runs.
func TestBackendOpensWithDamagedVectors(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(64, nil))
	emb, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for i := range 40 {
		note := fmt.Sprintf("# Note %d\n\nabout topic %d and more words to embed\n\n## Part\n\nsecond part %d\n", i, i, i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("n%02d.md", i)), []byte(note), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := service.Options{Index: filepath.Join(t.TempDir(), "index"), Env: &service.Env{}, Agent: true, Embedder: emb}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := NewBackend(opts)
	v, err := b.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	v.Release()
	b.Close()
	f, err := os.OpenFile(opts.Index+"-vectors.db", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Stat(); st.Size() < 3*4096 {
		t.Fatalf("vectors file of %d bytes", st.Size())
	}
	if _, err := f.WriteAt(make([]byte, 4096), 4096); err != nil { // meta page 1 and what follows
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("not a bbolt file"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b = NewBackend(opts)
	defer b.Close()
	within(t, "opening a vault with damaged vectors", func() {
		v, err := b.Open(ctx, root)
		if err != nil {
			t.Errorf("open: %v", err)
			return
		}
		defer v.Release()
		res, err := v.Run(ctx, service.RunRequest{RunID: "r", Message: "topic 7", Settings: service.Settings{Mode: agent.ModeReact}}, nil)
		if err != nil || res.StopReason != agent.StopFinalAnswer {
			t.Errorf("run = %+v, %v", res, err)
		}
	})
}
