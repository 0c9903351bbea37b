package acp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
)

func TestLocalBackend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", "testdata", "vault"))
	if err != nil {
		t.Fatal(err)
	}
	b := NewLocalBackend(LocalConfig{Model: llm.NewOffline(), InMemoryIndex: true})
	defer b.Close()

	v, err := b.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Open(ctx, root+string(filepath.Separator))
	if err != nil || again != v {
		t.Errorf("a second session on the same folder got another vault: %v", err)
	}
	if _, err := b.Open(ctx, filepath.Join(root, "recipes", "Sourdough Starter.md")); !errors.Is(err, ErrNotAVault) {
		t.Errorf("a file as cwd: %v, want ErrNotAVault", err)
	}
	if _, err := b.Open(ctx, filepath.Join(root, "no-such-folder")); !errors.Is(err, ErrNotAVault) {
		t.Errorf("a missing cwd: %v, want ErrNotAVault", err)
	}

	n, err := v.ReadNote(ctx, "recipes/Sourdough Starter.md", 1<<20)
	if err != nil || n.Title != "Sourdough Starter" || !strings.Contains(n.Text, "feed") {
		t.Fatalf("ReadNote = %+v, %v", n, err)
	}
	short, err := v.ReadNote(ctx, "Sourdough Starter", 40)
	if err != nil || !short.Truncated || len(short.Text) > 40 {
		t.Errorf("capped ReadNote = %+v, %v", short, err)
	}
	if _, err := v.ReadNote(ctx, "../outside.md", 100); err == nil {
		t.Error("a path leaving the vault was read")
	}

	var events []string
	res, err := v.Run(ctx, RunRequest{RunID: "r1", Message: "how do I keep my sourdough starter alive?", Settings: Settings{Mode: agent.ModeReact, Planner: true, MaxIterations: 10}},
		agent.SinkFunc(func(e agent.Event) { events = append(events, e.EventType) }))
	if err != nil || res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "[[") {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if !strings.Contains(strings.Join(events, " "), agent.EventPlanAuthored) {
		t.Errorf("the planner setting did not reach the run: %v", events)
	}

	// A cancelled context stops the run.
	stopped, cancelRun := context.WithCancel(ctx)
	cancelRun()
	res, err = v.Run(stopped, RunRequest{RunID: "r2", Message: "anything", Settings: Settings{Mode: agent.ModeReact}}, nil)
	if err != nil || res.StopReason != agent.StopStopped {
		t.Errorf("cancelled Run = %+v, %v", res, err)
	}
}

func TestLocalBackendIndexServesOneVault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tmp := t.TempDir()
	a, c := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	for _, d := range []string{a, c} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "Note.md"), []byte("# Note\nhello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := NewLocalBackend(LocalConfig{Model: llm.NewOffline(), Index: filepath.Join(tmp, "index")})
	defer b.Close()
	if _, err := b.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(ctx, c); !errors.Is(err, ErrVaultBusy) {
		t.Errorf("a second vault on one --index: %v, want ErrVaultBusy", err)
	}
}
