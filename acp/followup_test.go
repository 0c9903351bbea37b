package acp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/service"
)

// TestFollowUpsOverACP: over a real session with the offline model, the
// session's history reaches the model as prompt.go builds it; a prompt
// naming its own subject searches only its own words, an elliptic one
// ("and on iOS?") inherits the topic, and no agent_message_chunk holds
// the model's progress text, even when the notes' long paths make it
// longer than the agent holds back.
func TestFollowUpsOverACP(t *testing.T) {
	root := fixture.ConversationVault(t)
	backend := NewBackend(service.Options{InMemoryIndex: true, Env: &service.Env{}, Agent: true})
	client := &fakeClient{updates: map[sdk.SessionId][]sdk.SessionUpdate{}}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), Config{Backend: backend, Version: "test"}, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		clientOut.Close()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Error("the server did not end")
		}
	})
	conn := sdk.NewClientSideConnection(client, clientOut, clientIn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(text string) (query, answer string) {
		t.Helper()
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s: %+v, %v", text, res, err)
		}
		var b strings.Builder
		for _, u := range client.take(sess.SessionId) {
			if tc := u.ToolCall; tc != nil && tc.Kind == sdk.ToolKindSearch && query == "" {
				if in, ok := tc.RawInput.(map[string]any); ok {
					query, _ = in["query"].(string)
				}
			}
			if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil {
				b.WriteString(m.Content.Text.Text)
			}
		}
		for _, p := range []string{"Reading the most relevant notes", "Searching the vault for", "reading the neighbouring part"} {
			if strings.Contains(b.String(), p) {
				t.Errorf("%s: the answer shown holds progress text %q:\n%s", text, p, b.String())
			}
		}
		return strings.ToLower(query), strings.TrimSpace(b.String())
	}

	if q, a := prompt("which plugins help with spaced repetition?"); !strings.Contains(q, "spaced") || !strings.Contains(a, "[[Spaced Repetition Plugins") {
		t.Fatalf("first prompt: search %q, answer:\n%s", q, a)
	}
	q, a := prompt("What is the Obsidian Hub?")
	if strings.Contains(q, "spaced") || strings.Contains(q, "repetition") || !strings.Contains(q, "hub") {
		t.Errorf("a prompt naming its own subject searched %q", q)
	}
	if !strings.HasPrefix(a, "The Obsidian Hub is a community wiki") {
		t.Errorf("answer:\n%s", a)
	}
	prompt("how do I sync my vault on Android?")
	q, a = prompt("and on iOS?")
	if !strings.Contains(q, "ios") || !strings.Contains(q, "sync") {
		t.Errorf("an elliptic follow-up searched %q, without the earlier topic", q)
	}
	if !strings.Contains(a, "[[Sync on iOS") {
		t.Errorf("answer:\n%s", a)
	}
	if _, a = prompt("what is the retry budget?"); !strings.HasPrefix(a, "The retry budget caps") {
		t.Errorf("answer:\n%s", a)
	}
}
