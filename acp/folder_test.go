package acp

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/service"
)

// startTest serves backend in process and returns a connected,
// initialized client.
func startTest(t *testing.T, backend Backend, cfg Config) (*sdk.ClientSideConnection, *fakeClient, context.Context) {
	t.Helper()
	client := &fakeClient{updates: map[sdk.SessionId][]sdk.SessionUpdate{}}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	cfg.Backend, cfg.Version = backend, "test"
	go func() {
		served <- Serve(context.Background(), cfg, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		clientOut.Close()
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return after EOF")
		}
	})
	conn := sdk.NewClientSideConnection(client, clientOut, clientIn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	return conn, client, ctx
}

// A session whose folder does not look like a vault (no .obsidian folder
// and few notes, or the home folder) is warned in its first update, once;
// a vault is not.
func TestFolderWarning(t *testing.T) {
	write := func(dir string, files ...string) {
		for _, f := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("# x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	home := t.TempDir()
	tests := []struct {
		name  string
		files []string
		home  bool
		warn  string
	}{
		{name: "a folder of code", files: []string{"main.go", "README.md"}, warn: "has no .obsidian folder and 1 markdown notes"},
		{name: "the home folder", files: []string{"a.md", "b.md", "c.md", "d.md", "e.md", "f.md"}, home: true, warn: "it is your home folder"},
		{name: "an Obsidian vault", files: []string{".obsidian/app.json", "Note.md"}},
		{name: "many notes", files: []string{"a.md", "b.md", "c.md", "d.md", "e/f.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.home {
				dir = home
			}
			write(dir, tt.files...)
			v := &fakeVault{root: dir, started: make(chan string, 1)}
			conn, client, ctx := startTest(t, &fakeBackend{v: v}, Config{Home: home, Defaults: service.Settings{Mode: "react"}})
			sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			for turn := range 2 {
				if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hello")}}); err != nil {
					t.Fatal(err)
				}
				updates := client.take(sess.SessionId)
				first := ""
				if len(updates) > 0 && updates[0].AgentMessageChunk != nil && updates[0].AgentMessageChunk.Content.Text != nil {
					first = updates[0].AgentMessageChunk.Content.Text.Text
				}
				warned := strings.HasPrefix(first, "Note: "+dir+" may not be the vault you meant")
				switch {
				case tt.warn != "" && turn == 0 && (!warned || !strings.Contains(first, tt.warn)):
					t.Errorf("first update %q, want a warning saying %q", first, tt.warn)
				case (tt.warn == "" || turn > 0) && warned:
					t.Errorf("turn %d warned: %q", turn, first)
				}
			}
		})
	}
}

// _meta's numbers are range-checked before they become durations.
func TestMetaNumbers(t *testing.T) {
	for _, v := range []any{9e15, -1.0, 86_400_001.0, 2.5, "soon"} {
		s := service.Settings{}
		_, err := applyMeta(&s, map[string]any{MetaKey: map[string]any{"timeoutMs": v}})
		if err == nil || !strings.Contains(err.Error(), "_meta.vaultAgent.timeoutMs") {
			t.Errorf("timeoutMs %v: %v", v, err)
		}
		if s.Timeout != 0 {
			t.Errorf("timeoutMs %v set %s", v, s.Timeout)
		}
	}
	s := service.Settings{}
	_, err := applyMeta(&s, map[string]any{MetaKey: map[string]any{"timeoutMs": 9e15}})
	if err == nil || !strings.Contains(err.Error(), "from 1 to 86400000 ms") {
		t.Errorf("the error does not give the range: %v", err)
	}
	if _, err := applyMeta(&s, map[string]any{MetaKey: map[string]any{"timeoutMs": 120000.0}}); err != nil || s.Timeout != 2*time.Minute {
		t.Errorf("timeoutMs 120000: %v %s", err, s.Timeout)
	}
}
