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
	"github.com/vault-agent/vault-agent/service"
)

func TestBackend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := filepath.Abs(filepath.Join("..", "testdata", "vault"))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBackend(service.Options{InMemoryIndex: true, Env: &service.Env{}, Agent: true, Watch: true})
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

	n, err := v.ReadNote("recipes/Sourdough Starter.md", 1<<20)
	if err != nil || n.Title != "Sourdough Starter" || !strings.Contains(n.Text, "feed") {
		t.Fatalf("ReadNote = %+v, %v", n, err)
	}
	short, err := v.ReadNote("Sourdough Starter", 40)
	if err != nil || !short.Truncated || len(short.Text) > 40 {
		t.Errorf("capped ReadNote = %+v, %v", short, err)
	}
	if _, err := v.ReadNote("../outside.md", 100); err == nil {
		t.Error("a path leaving the vault was read")
	}

	var events []string
	on := true
	res, err := v.Run(ctx, service.RunRequest{RunID: "r1", Message: "how do I keep my sourdough starter alive?", Settings: service.Settings{Mode: agent.ModeReact, Planner: &on, MaxIterations: 10}},
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
	res, err = v.Run(stopped, service.RunRequest{RunID: "r2", Message: "anything", Settings: service.Settings{Mode: agent.ModeReact}}, nil)
	if err != nil || res.StopReason != agent.StopStopped {
		t.Errorf("cancelled Run = %+v, %v", res, err)
	}
	// So does a closed Stop.
	stop := make(chan struct{})
	close(stop)
	res, err = v.Run(ctx, service.RunRequest{RunID: "r3", Message: "anything", Stop: stop}, nil)
	if err != nil || res.StopReason != agent.StopStopped {
		t.Errorf("stopped Run = %+v, %v", res, err)
	}

	// The vault stays open while a session uses it; the last release
	// closes it, and the next session opens it anew.
	v.Release()
	if still, err := b.Open(ctx, root); err != nil || still != again {
		t.Fatalf("the vault closed while a session used it: %v", err)
	} else {
		still.Release()
	}
	again.Release()
	fresh, err := b.Open(ctx, root)
	if err != nil || fresh == v {
		t.Fatalf("the vault was not closed after its last session: %v", err)
	}
	if _, err := v.Run(ctx, service.RunRequest{Message: "anything"}, nil); err == nil {
		t.Error("a released vault still runs the agent")
	}
	fresh.Release()
}

func TestBackendIndexServesOneVault(t *testing.T) {
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
	b := NewBackend(service.Options{Index: filepath.Join(tmp, "index"), Env: &service.Env{}, Agent: true})
	defer b.Close()
	if _, err := b.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(ctx, c); !errors.Is(err, ErrVaultBusy) {
		t.Errorf("a second vault on one --index: %v, want ErrVaultBusy", err)
	}
}
