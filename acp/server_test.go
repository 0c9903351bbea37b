package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/service"
)

// fakeVault answers at once, except a message containing BLOCK, which runs
// until its context is cancelled.
type fakeVault struct {
	root    string
	started chan string // run ids of BLOCK runs, once they wait

	released atomic.Int32

	mu   sync.Mutex
	reqs []service.RunRequest
}

func (v *fakeVault) Root() string { return v.root }

func (v *fakeVault) Run(ctx context.Context, req service.RunRequest, sink agent.Sink) (*agent.Result, error) {
	v.mu.Lock()
	v.reqs = append(v.reqs, req)
	v.mu.Unlock()
	sink.Emit(agent.Event{EventType: agent.EventRunStarted, Payload: agent.RunStartedPayload{Mode: req.Settings.Mode}})
	if strings.Contains(req.Message, "BLOCK") {
		v.started <- req.RunID
		select {
		case <-ctx.Done():
		case <-req.Stop:
		}
		sink.Emit(agent.Event{EventType: agent.EventRunTerminated, Payload: agent.RunTerminatedPayload{StopReason: agent.StopStopped}})
		return &agent.Result{StopReason: agent.StopStopped}, nil
	}
	answer := "Answer to " + req.Message
	sink.Emit(agent.Event{EventType: agent.EventRunTerminated, Payload: agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer, Answer: answer}})
	return &agent.Result{StopReason: agent.StopFinalAnswer, Answer: answer}, nil
}

func (v *fakeVault) ReadNote(name string, max int) (*Note, error) {
	if name == "notes/A.md" {
		return &Note{Path: name, Title: "A", Text: "alpha on disk"}, nil
	}
	return nil, fmt.Errorf("note %q: not found", name)
}

func (v *fakeVault) Release() { v.released.Add(1) }

func (v *fakeVault) last() service.RunRequest {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.reqs[len(v.reqs)-1]
}

type fakeBackend struct {
	v      *fakeVault
	closed atomic.Bool
}

func (b *fakeBackend) Open(ctx context.Context, root string) (Vault, error) {
	if root != b.v.root {
		return nil, fmt.Errorf("%w: %s", ErrNotAVault, root)
	}
	return b.v, nil
}

func (b *fakeBackend) Close() error { b.closed.Store(true); return nil }

// fakeClient records updates and answers fs/read_text_file like an editor
// with unsaved edits.
type fakeClient struct {
	mu      sync.Mutex
	updates map[sdk.SessionId][]sdk.SessionUpdate
	reads   []string
}

func (c *fakeClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates[n.SessionId] = append(c.updates[n.SessionId], n.Update)
	return nil
}

func (c *fakeClient) take(id sdk.SessionId) []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates[id]
	delete(c.updates, id)
	return u
}

func (c *fakeClient) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	c.reads = append(c.reads, p.Path)
	c.mu.Unlock()
	return sdk.ReadTextFileResponse{Content: "alpha with unsaved edits"}, nil
}

var errNo = errors.New("not offered by this test client")

func (c *fakeClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNo
}
func (c *fakeClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, errNo
}
func (c *fakeClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNo
}
func (c *fakeClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNo
}
func (c *fakeClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNo
}
func (c *fakeClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNo
}
func (c *fakeClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNo
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != code {
		t.Fatalf("error = %v, want code %d", err, code)
	}
}

// TestServer drives Serve in process with the Go SDK's client over pipes.
func TestServer(t *testing.T) {
	const root = "/vaults/notes"
	v := &fakeVault{root: root, started: make(chan string, 1)}
	backend := &fakeBackend{v: v}
	client := &fakeClient{updates: map[sdk.SessionId][]sdk.SessionUpdate{}}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), Config{Backend: backend, Defaults: service.Settings{Planner: sdk.Ptr(true)}, Version: "test"}, serverIn, serverOut)
		serverOut.Close()
	}()
	conn := sdk.NewClientSideConnection(client, clientOut, clientIn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	wantCode(t, err, codeInvalidRequest) // before initialize

	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: "x"})
	wantCode(t, err, codeInvalidParams)
	_, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative/notes", McpServers: []sdk.McpServer{}})
	wantCode(t, err, codeInvalidParams)
	_, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/elsewhere", McpServers: []sdk.McpServer{}})
	wantCode(t, err, codeInvalidParams)

	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{},
		Meta: map[string]any{MetaKey: map[string]any{"mode": "par", "maxIterations": 7}}})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Modes.CurrentModeId != "par" {
		t.Errorf("mode from _meta = %s", sess.Modes.CurrentModeId)
	}

	t.Run("mentions are read first, through the client when it can", func(t *testing.T) {
		res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{
			sdk.TextBlock("what is alpha?"),
			sdk.ResourceLinkBlock("A.md", "file://"+root+"/notes/A.md"),
			sdk.ResourceLinkBlock("secret", "file:///etc/passwd"),
			sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///tmp/selection.md", Text: "selected text"}}),
		}})
		if err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt = %+v, %v", res, err)
		}
		req := v.last()
		if req.Message != "what is alpha?" || req.Settings.Mode != "par" || req.Settings.MaxIterations != 7 || !isTrue(req.Settings.Planner) {
			t.Errorf("run request = %+v", req)
		}
		attachedMsg := req.History[len(req.History)-1].Content
		for _, want := range []string{`path="notes/A.md"`, "alpha with unsaved edits", "selected text"} {
			if !strings.Contains(attachedMsg, want) {
				t.Errorf("attached notes lack %q:\n%s", want, attachedMsg)
			}
		}
		if strings.Contains(attachedMsg, "passwd") {
			t.Errorf("a file outside the vault was attached:\n%s", attachedMsg)
		}
		var statuses []string
		for _, u := range client.take(sess.SessionId) {
			if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status != sdk.ToolCallStatusInProgress {
				statuses = append(statuses, string(*u.ToolCallUpdate.Status))
			}
		}
		if got := strings.Join(statuses, ","); got != "completed,failed,completed" {
			t.Errorf("mention outcomes = %s", got)
		}
		if len(client.reads) != 1 || client.reads[0] != root+"/notes/A.md" {
			t.Errorf("fs/read_text_file calls = %v", client.reads)
		}
	})

	t.Run("the next turn has the conversation so far", func(t *testing.T) {
		if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("and beta?")}}); err != nil {
			t.Fatal(err)
		}
		h := v.last().History
		if len(h) != 2 || h[0].Content != "what is alpha?\n\n(attached: notes/A.md, file:///tmp/selection.md)" || !strings.HasPrefix(h[1].Content, "Answer to what is alpha?") {
			t.Errorf("history = %+v", h)
		}
	})

	t.Run("images, audio and empty prompts are refused", func(t *testing.T) {
		for _, p := range [][]sdk.ContentBlock{{sdk.ImageBlock("aGk=", "image/png")}, {sdk.AudioBlock("aGk=", "audio/wav")}, {sdk.TextBlock("  ")}} {
			_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: p})
			wantCode(t, err, codeInvalidParams)
		}
	})

	t.Run("config options", func(t *testing.T) {
		res, err := conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: sess.SessionId, ConfigId: optMaxIterations, Value: "20"}})
		if err != nil || len(res.ConfigOptions) != 3 {
			t.Fatalf("set maxIterations = %+v, %v", res, err)
		}
		_, err = conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: sess.SessionId, ConfigId: optPlanner, Value: "sometimes"}})
		wantCode(t, err, codeInvalidParams)
		if _, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "roa"}); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}}); err != nil {
			t.Fatal(err)
		}
		if st := v.last().Settings; st.Mode != "roa" || st.MaxIterations != 20 {
			t.Errorf("settings = %+v", st)
		}
		var modeUpdates int
		for _, u := range client.take(sess.SessionId) {
			if u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "roa" {
				modeUpdates++
			}
		}
		if modeUpdates != 1 {
			t.Errorf("current_mode_update to roa sent %d times", modeUpdates)
		}
	})

	t.Run("cancel stops one session's turn only", func(t *testing.T) {
		other, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan sdk.PromptResponse, 1)
		go func() {
			res, _ := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("BLOCK")}})
			done <- res
		}()
		select {
		case <-v.started:
		case <-ctx.Done():
			t.Fatal("the blocking run never started")
		}
		if res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: other.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("meanwhile")}}); err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("the other session: %+v, %v", res, err)
		}
		if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
			t.Fatal(err)
		}
		select {
		case res := <-done:
			if res.StopReason != sdk.StopReasonCancelled {
				t.Errorf("stop reason = %s", res.StopReason)
			}
		case <-ctx.Done():
			t.Fatal("the cancelled turn never answered")
		}
	})

	t.Run("close forgets the session", func(t *testing.T) {
		if _, err := conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: sess.SessionId}); err != nil {
			t.Fatal(err)
		}
		_, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}})
		wantCode(t, err, codeResourceNotFound)
	})

	clientOut.Close() // EOF
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve did not return after EOF")
	}
	if !backend.closed.Load() {
		t.Error("the backend was not closed")
	}
}
