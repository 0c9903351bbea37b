package rpc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/benchvault"

	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/search"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error

	// cleanupDirs are removed when the test binary ends.
	cleanupDirs []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchvault.Cleanup()
	for _, d := range append(cleanupDirs, binDir) {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// binary builds ./cmd/vault-agent once per test process.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "vault-agent-rpc-test")
		if binErr == nil {
			binPath, binErr = rpctest.BuildBinary("..", binDir)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// TestBinary drives the built binary over its stdin and stdout like a host.
func TestBinary(t *testing.T) {
	bin := binary(t)

	t.Run("header session exits 0 after shutdown", func(t *testing.T) {
		s := rpctest.StartBinary(t, bin, "header", "serve", "--index", filepath.Join(t.TempDir(), "idx"))
		ctx := ctxT(t)
		res := initialize(t, s, nil)
		if res.Index.Notes == 0 {
			t.Errorf("index = %+v", res.Index)
		}
		if len(s.Notifications("vault/indexProgress")) == 0 {
			t.Error("no vault/indexProgress")
		}
		var found search.Results
		if err := s.Call(ctx, "vault/search", map[string]any{"query": "sourdough starter"}, &found); err != nil || len(found.Results) == 0 {
			t.Fatalf("search = %+v, %v", found, err)
		}
		var note search.NoteChunk
		if err := s.Call(ctx, "vault/readNote", map[string]any{"path": found.Results[0].Path}, &note); err != nil || note.Content == "" {
			t.Fatalf("readNote = %+v, %v", note, err)
		}
		wantCode(t, s.Call(ctx, "vault/readNote", map[string]any{"path": "../outside.md"}, nil), -32602)
		if err := s.Call(ctx, "shutdown", nil, nil); err != nil {
			t.Fatal(err)
		}
		s.Notify("exit", nil)
		if err := s.Wait(ctx); exitCode(err) != 0 {
			t.Fatalf("exit status: %v", err)
		}
		if err := s.ReadErr(); err != nil {
			t.Fatalf("stdout carried something other than protocol: %v", err)
		}
	})

	t.Run("line session exits 1 without shutdown", func(t *testing.T) {
		s := rpctest.StartBinary(t, bin, "line", "serve", "--codec", "line", "--vault", fixtureVault, "--index", filepath.Join(t.TempDir(), "idx"))
		ctx := ctxT(t)
		var res protocol.InitializeResult
		if err := s.Call(ctx, "initialize", map[string]any{}, &res); err != nil {
			t.Fatalf("initialize with the --vault default: %v", err)
		}
		if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
			t.Fatal(err)
		}
		s.Notify("exit", nil)
		if err := s.Wait(ctx); exitCode(err) != 1 {
			t.Fatalf("exit status: %v, want 1", err)
		}
	})

	t.Run("stdin EOF ends cleanly", func(t *testing.T) {
		s := rpctest.StartBinary(t, bin, "header", "serve", "--index", filepath.Join(t.TempDir(), "idx"))
		initialize(t, s, nil)
		s.Close()
		if err := s.Wait(ctxT(t)); exitCode(err) != 0 {
			t.Fatalf("exit status after EOF: %v\n%s", err, s.Stderr())
		}
	})

	// printf '{...initialize...}\n' | vault-agent serve --codec line: the
	// input ends while initialize runs.
	t.Run("stdin EOF during initialize ends cleanly", func(t *testing.T) {
		s := rpctest.StartBinary(t, bin, "line", "serve", "--codec", "line", "--index", filepath.Join(t.TempDir(), "idx"))
		if _, err := s.Start("initialize", map[string]any{"vault": fixtureVault}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := s.Wait(ctxT(t)); exitCode(err) != 0 {
			t.Fatalf("exit status after EOF: %v\n%s", err, s.Stderr())
		}
		if strings.Contains(s.Stderr(), "level=WARN") || strings.Contains(s.Stderr(), "level=ERROR") {
			t.Errorf("a clean EOF logged a warning or an error:\n%s", s.Stderr())
		}
	})

	// A host reloading closes the old sidecar's stdin and spawns a new one
	// at once, on the same index: the new one shares the old one's index
	// at once, and takes it over when the old one exits.
	t.Run("restarted sidecar shares the old one's index, then takes it over", func(t *testing.T) {
		idx := filepath.Join(t.TempDir(), "idx")
		old := rpctest.StartBinary(t, bin, "header", "serve", "--index", idx)
		initialize(t, old, nil)
		s := rpctest.StartBinary(t, bin, "header", "serve", "--index", idx)
		if res := initialize(t, s, nil); res.Index.Notes == 0 {
			t.Fatalf("initialize of the second sidecar = %+v", res)
		}
		ctx := ctxT(t)
		search := func() {
			t.Helper()
			var found search.Results
			if err := s.Call(ctx, "vault/search", map[string]any{"query": "sourdough starter"}, &found); err != nil || len(found.Results) == 0 {
				t.Fatalf("vault/search = %+v, %v", found, err)
			}
		}
		search()
		old.Close()
		if err := old.Wait(ctx); exitCode(err) != 0 {
			t.Fatalf("old sidecar exit status: %v", err)
		}
		search()
		// The new holder reconciles the index with the disk before it
		// watches (status says Indexing meanwhile): ask until it watches.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var st protocol.StatusResult
			err := s.Call(ctx, "vault/status", nil, &st)
			if err != nil || st.Notes == 0 {
				t.Fatalf("vault/status after the takeover = %+v, %v", st, err)
			}
			if st.Watching {
				break
			}
			if !st.Indexing {
				t.Fatalf("vault/status after the takeover: neither indexing nor watching: %+v", st)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("not watching the vault after the takeover: %+v", st)
			case <-tick.C:
			}
		}
	})

	t.Run("garbage then EOF", func(t *testing.T) {
		s := rpctest.StartBinary(t, bin, "header", "serve")
		s.WriteRaw([]byte("\x00\x01garbage\r\n"))
		if _, err := s.AwaitStray(ctxT(t), 1); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.Call(ctxT(t), "vault/status", nil, nil), protocol.CodeServerNotInitialized)
		s.Close()
		if err := s.Wait(context.Background()); exitCode(err) != 0 {
			t.Fatalf("exit status: %v", err)
		}
	})
}
