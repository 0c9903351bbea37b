package acp

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/service"
)

// editClient is an editor that allows every edit and writes it through
// fs/write_text_file as some editors do: with a final newline added.
type editClient struct {
	fakeClient
	mu     sync.Mutex
	asked  []sdk.RequestPermissionRequest
	writes []sdk.WriteTextFileRequest
}

func (c *editClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	c.mu.Unlock()
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: optionAllow}}}, nil
}

func (c *editClient) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	c.writes = append(c.writes, p)
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content+"\n"), 0o644)
}

// editSession serves ACP with a real backend whose scripted model makes
// the given tool calls, and opens a session on a copy of a small vault.
func editSession(t *testing.T, client *editClient, calls ...llm.ScriptedToolCall) (ctx context.Context, conn *sdk.ClientSideConnection, sess sdk.SessionId, root, index string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "Inbox.md"), []byte("# Inbox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	index = filepath.Join(t.TempDir(), "index")
	turns := []llm.Turn{}
	for _, c := range calls {
		turns = append(turns, llm.Turn{ToolCalls: []llm.ScriptedToolCall{c}})
	}
	turns = append(turns, llm.Turn{Content: "Done."})
	on := true
	backend := NewBackend(service.Options{Index: index, Env: &service.Env{CacheDir: t.TempDir()}, Agent: true, Model: llm.NewScripted(turns)})
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), Config{Backend: backend, Defaults: service.Settings{AllowEdits: &on}, Version: "test"}, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		clientOut.Close()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Error("Serve did not end after the client went away")
		}
	})
	client.updates = map[sdk.SessionId][]sdk.SessionUpdate{}
	conn = sdk.NewClientSideConnection(client, clientOut, clientIn)
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if _, err := conn.Initialize(c, sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(c, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return c, conn, s.SessionId, root, index
}

// TestEditPermissionShowsHiddenCharacters: the diff of an edit whose text
// holds a carriage return, an escape sequence and a bidi override reaches
// the editor escaped, with a warning, while the note gets the text as is.
func TestEditPermissionShowsHiddenCharacters(t *testing.T) {
	const content = "pay alice\r\x1b[2Kpay \u202ebob"
	client := &editClient{}
	ctx, conn, sess, root, _ := editSession(t, client, llm.ScriptedToolCall{Name: agent.ToolCreateNote, Arguments: map[string]any{"path": "Pay.md", "content": content}})
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess, Prompt: []sdk.ContentBlock{sdk.TextBlock("write it")}}); err != nil {
		t.Fatal(err)
	}
	client.mu.Lock()
	defer client.mu.Unlock()
	if len(client.asked) != 1 {
		t.Fatalf("permission asked %d times", len(client.asked))
	}
	var shown []string
	for _, c := range client.asked[0].ToolCall.Content {
		switch {
		case c.Diff != nil:
			shown = append(shown, c.Diff.NewText)
			if c.Diff.OldText != nil {
				shown = append(shown, *c.Diff.OldText)
			}
		case c.Content != nil && c.Content.Content.Text != nil:
			shown = append(shown, c.Content.Content.Text.Text)
		}
	}
	all := strings.Join(shown, "\n")
	if strings.ContainsAny(all, "\r\x1b\u202e") || !strings.Contains(all, `pay alice\r\x1b[2Kpay \u202ebob`) || !strings.Contains(all, "escaped") {
		t.Fatalf("the editor was shown %q", all)
	}
	if len(client.writes) != 1 || client.writes[0].Content != content+"\n" {
		t.Fatalf("fs/write_text_file = %+v", client.writes)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "Pay.md")); string(b) != content+"\n\n" {
		t.Fatalf("note = %q", b)
	}
}

// TestEditThroughEditorIsUndoable: an editor whose fs/write_text_file adds
// a final newline leaves the note other than the edit meant; the journal
// records what is on disk, so undo restores the note.
func TestEditThroughEditorIsUndoable(t *testing.T) {
	client := &editClient{}
	ctx, conn, sess, root, index := editSession(t, client, llm.ScriptedToolCall{Name: agent.ToolAppendToNote, Arguments: map[string]any{"path": "Inbox.md", "content": "- call the plumber"}})
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess, Prompt: []sdk.ContentBlock{sdk.TextBlock("add a task")}}); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(root, "Inbox.md")
	if b, _ := os.ReadFile(note); string(b) != "# Inbox\n\n- call the plumber\n\n" {
		t.Fatalf("note after the editor's write = %q", b)
	}
	done, _, err := service.Undo(ctx, service.Options{Vault: root, Index: index, Env: &service.Env{}}, "")
	if err != nil || len(done) != 1 {
		t.Fatalf("undo = %+v, %v", done, err)
	}
	if b, _ := os.ReadFile(note); string(b) != "# Inbox\n" {
		t.Fatalf("note after undo = %q", b)
	}
}
