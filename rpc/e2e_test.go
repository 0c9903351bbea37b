package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/search"
)

// fixtureVault is the shared fixture vault (read-only: copy it before
// mutating).
var fixtureVault = fixture.Vault()

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noLeaks checks, after every later cleanup (the server's) ran, that the
// test left no goroutines behind.
func noLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() { rpctest.CheckGoroutines(t, before) })
}

// start runs an in-process server with an in-memory index.
func start(t *testing.T, cfg rpc.Config, setup ...func(*rpc.Server)) *rpctest.Session {
	t.Helper()
	cfg.InMemoryIndex = true
	return rpctest.StartInProcessWith(t, cfg, setup...)
}

// initialize sends initialize and fails the test on error.
func initialize(t *testing.T, s *rpctest.Session, params map[string]any) protocol.InitializeResult {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["vault"]; !ok {
		params["vault"] = fixtureVault
	}
	var res protocol.InitializeResult
	if err := s.Call(ctxT(t), "initialize", params, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// wantCode asserts err is an RPC error with code whose message contains
// every fragment.
func wantCode(t *testing.T, err error, code int64, fragments ...string) *rpctest.Error {
	t.Helper()
	var re *rpctest.Error
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want rpc error %d", err, code)
	}
	if re.Code != code {
		t.Fatalf("got code %d (%s), want %d", re.Code, re.Message, code)
	}
	for _, f := range fragments {
		if !strings.Contains(re.Message, f) {
			t.Errorf("message %q does not mention %q", re.Message, f)
		}
	}
	return re
}

func TestLifecycle(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{Version: "1.2.3"})
	ctx := ctxT(t)

	err := s.Call(ctx, "vault/status", nil, nil)
	wantCode(t, err, protocol.CodeServerNotInitialized, "initialize")

	err = s.Call(ctx, "initialize", map[string]any{}, nil)
	wantCode(t, err, -32602, "vault")
	err = s.Call(ctx, "initialize", map[string]any{"vault": filepath.Join(t.TempDir(), "missing")}, nil)
	wantCode(t, err, -32602, "missing")
	err = s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "settings": map[string]any{"maxIterations": "ten"}}, nil)
	wantCode(t, err, -32602, "settings.maxIterations", "integer")
	err = s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "settings": map[string]any{"mode": "fast"}}, nil)
	wantCode(t, err, -32602, "settings.mode", "react")
	err = s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault, "settings": []int{1}}, nil)
	wantCode(t, err, -32602, "settings")
	err = s.Call(ctx, "initialize", map[string]any{"rootUri": "https://example.com/notes"}, nil)
	wantCode(t, err, -32602, "rootUri", "file://")

	res := initialize(t, s, map[string]any{
		"settings":   map[string]any{"colour": "red", "maxIterations": 4},
		"clientInfo": map[string]any{"name": "test-host", "version": "0.0.1"},
	})
	if res.ServerInfo.Name != "vault-agent" || res.ServerInfo.Version != "1.2.3" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	if res.Index.Notes < 50 {
		t.Errorf("index notes = %d, want the fixture's ~60", res.Index.Notes)
	}
	if !slices.Equal(res.UnknownSettings, []string{"colour"}) {
		t.Errorf("unknownSettings = %v, want [colour]", res.UnknownSettings)
	}
	for _, m := range []string{"initialize", "shutdown", "vault/search", "vault/readNote", "vault/status", "vault/reindex", "agent/run", "agent/stop", "agent/input"} {
		if !slices.Contains(res.Capabilities.Methods, m) {
			t.Errorf("capabilities.methods lacks %s: %v", m, res.Capabilities.Methods)
		}
	}
	if len(res.Tools) == 0 || res.Tools[0].Name == "" || res.Tools[0].Description == "" {
		t.Errorf("tools = %+v", res.Tools)
	}
	if _, err := s.AwaitNotification(ctx, "window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "colour")
	}); err != nil {
		t.Error(err)
	}
	last := s.Notifications("vault/indexProgress")
	if len(last) == 0 {
		t.Fatal("no vault/indexProgress notification")
	}
	var prog protocol.IndexProgressParams
	json.Unmarshal(last[len(last)-1].Params, &prog)
	if prog.Done != prog.Total || prog.Total != res.Index.Notes {
		t.Errorf("final progress = %+v, want done == total == %d", prog, res.Index.Notes)
	}

	err = s.Call(ctx, "initialize", map[string]any{"vault": fixtureVault}, nil)
	wantCode(t, err, -32600, "already initialized")

	var st protocol.StatusResult
	if err := s.Call(ctx, "vault/status", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.Notes != res.Index.Notes || !st.Watching || st.LastIndexedAt == 0 {
		t.Errorf("status = %+v", st)
	}

	call, err := s.Start("shutdown", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := call.Wait(ctx)
	if err != nil || resp.Error != nil || string(resp.Result) != "null" {
		t.Fatalf("shutdown = %+v, %v; want result null", resp, err)
	}
	err = s.Call(ctx, "vault/status", nil, nil)
	wantCode(t, err, -32600, "shutdown")

	if err := s.Notify("exit", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("Serve after shutdown+exit = %v, want nil", err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("server output not closed after exit")
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, nil)
	s.Notify("exit", nil)
	if err := s.Wait(ctxT(t)); !errors.Is(err, rpc.ErrExitWithoutShutdown) {
		t.Fatalf("Serve = %v, want ErrExitWithoutShutdown", err)
	}
}

// TestEOF closes the host's end: Serve returns nil and the on-disk index is
// closed (its lock released, so it opens again).
func TestEOF(t *testing.T) {
	noLeaks(t)
	indexDir := filepath.Join(t.TempDir(), "index")
	s := rpctest.StartInProcessWith(t, rpc.Config{})
	initialize(t, s, map[string]any{"index": indexDir})
	s.Close()
	if err := s.Wait(ctxT(t)); err != nil {
		t.Fatalf("Serve after EOF = %v, want nil", err)
	}
	v := openVault(t, fixtureVault)
	idx, err := search.Open(ctxT(t), search.Options{Path: indexDir, Vault: v})
	if err != nil {
		t.Fatalf("index still locked after EOF: %v", err)
	}
	idx.Close()
}

func TestMethodNotFound(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, nil)
	err := s.Call(ctxT(t), "vault/serch", map[string]any{"query": "x"}, nil)
	wantCode(t, err, -32601, `"vault/serch"`, "vault/search", "agent/run")
}

func TestSearch(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, nil)
	ctx := ctxT(t)

	var res search.Results
	if err := s.Call(ctx, "vault/search", map[string]any{"query": "sourdough", "limit": 3}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || len(res.Results) > 3 || res.Total < len(res.Results) {
		t.Fatalf("results = %+v", res)
	}
	for _, r := range res.Results {
		if r.Path == "" || r.Title == "" || r.MTime == 0 {
			t.Errorf("result lacks fields: %+v", r)
		}
	}
	if !strings.Contains(strings.ToLower(res.Results[0].Path), "sourdough") {
		t.Errorf("top result %s, want a sourdough note", res.Results[0].Path)
	}

	// A time range in the future matches nothing.
	future := time.Now().Add(24 * time.Hour).UnixMilli()
	var none search.Results
	if err := s.Call(ctx, "vault/search", map[string]any{"query": "sourdough", "timeRange": map[string]any{"startTime": future}}, &none); err != nil {
		t.Fatal(err)
	}
	if len(none.Results) != 0 {
		t.Errorf("future time range matched %d notes", len(none.Results))
	}

	errCases := []struct {
		name      string
		params    any
		fragments []string
	}{
		{"limit wrong type", map[string]any{"query": "x", "limit": "5"}, []string{`"limit"`, "integer"}},
		{"negative limit", map[string]any{"query": "x", "limit": -1}, []string{"limit"}},
		{"unknown field", map[string]any{"qurey": "x"}, []string{`"qurey"`, "valid fields", "query"}},
		{"params array", []any{"sourdough"}, []string{"object"}},
		{"tags wrong type", map[string]any{"query": "x", "tags": "recipe"}, []string{`"tags"`, "array"}},
		{"timeRange nested type", map[string]any{"query": "x", "timeRange": map[string]any{"startTime": "yesterday"}}, []string{"timeRange.startTime"}},
		{"timeRange reversed", map[string]any{"query": "x", "timeRange": map[string]any{"startTime": 2000, "endTime": 1000}}, []string{"timeRange"}},
		{"empty query", map[string]any{"query": "  "}, []string{"vault/search"}},
		{"bad query", map[string]any{"query": `tag:`}, []string{"vault/search", "tag"}},
		{"only OR", map[string]any{"query": "OR"}, []string{"OR joins two things"}},
		{"query too long", map[string]any{"query": strings.Repeat("x", search.MaxQueryBytes+1)}, []string{"query too large", "at most 4096"}},
		{"too many words", map[string]any{"query": strings.Repeat("word ", search.MaxQueryTerms+1)}, []string{"query too large", "65 words, at most 64"}},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Call(ctx, "vault/search", tc.params, nil)
			wantCode(t, err, -32602, tc.fragments...)
		})
	}
}

func TestReadNote(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, nil)
	ctx := ctxT(t)

	for _, name := range []string{"Home.md", "Home", "[[Home]]", "home", "kb/go/Context Cancellation", "go/Context Cancellation.md"} {
		var c search.NoteChunk
		if err := s.Call(ctx, "vault/readNote", map[string]any{"path": name}, &c); err != nil {
			t.Errorf("readNote %q: %v", name, err)
			continue
		}
		if c.Path == "" || c.ChunkCount < 1 || c.Content == "" || c.MTime == 0 || c.Headings == nil || c.Links == nil {
			t.Errorf("readNote %q = %+v", name, c)
		}
	}
	var home search.NoteChunk
	s.Call(ctx, "vault/readNote", map[string]any{"path": "Home"}, &home)
	if home.ChunkCount > 1 {
		var next search.NoteChunk
		if err := s.Call(ctx, "vault/readNote", map[string]any{"path": "Home", "chunkIndex": 1}, &next); err != nil || next.ChunkIndex != 1 || next.Content == home.Content {
			t.Errorf("chunk 1 = %+v, %v", next, err)
		}
	}

	errCases := []struct {
		name      string
		params    map[string]any
		fragments []string
	}{
		{"missing path", map[string]any{}, []string{`"path"`}},
		{"escape", map[string]any{"path": "../../etc/passwd"}, nil},
		{"absolute", map[string]any{"path": "/etc/passwd"}, nil},
		{"not found", map[string]any{"path": "No Such Note Anywhere"}, []string{"No Such Note"}},
		{"chunk out of range", map[string]any{"path": "Home", "chunkIndex": 999}, []string{"999"}},
		{"negative chunk", map[string]any{"path": "Home", "chunkIndex": -1}, []string{"chunkIndex"}},
		{"chunk wrong type", map[string]any{"path": "Home", "chunkIndex": "1"}, []string{"chunkIndex", "integer"}},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, s.Call(ctx, "vault/readNote", tc.params, nil), -32602, tc.fragments...)
		})
	}
	t.Run("ambiguous", func(t *testing.T) {
		re := wantCode(t, s.Call(ctx, "vault/readNote", map[string]any{"path": "Meeting Notes"}, nil), -32602, "Meeting Notes")
		var data struct{ Candidates []string }
		json.Unmarshal(re.Data, &data)
		if len(data.Candidates) != 2 {
			t.Errorf("candidates = %v, want the two Meeting Notes", data.Candidates)
		}
	})
}

func TestReindex(t *testing.T) {
	noLeaks(t)
	dir := fixture.Copy(t)
	s := start(t, rpc.Config{})
	res := initialize(t, s, map[string]any{"vault": dir})
	ctx := ctxT(t)

	if err := os.WriteFile(filepath.Join(dir, "Fresh Note.md"), []byte("# Fresh\nzanzibar quokka\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r protocol.ReindexResult
	if err := s.Call(ctx, "vault/reindex", map[string]any{}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Notes != res.Index.Notes+1 {
		t.Errorf("reindex notes = %d, want %d", r.Notes, res.Index.Notes+1)
	}
	var found search.Results
	if err := s.Call(ctx, "vault/search", map[string]any{"query": "quokka"}, &found); err != nil || len(found.Results) != 1 {
		t.Errorf("search after reindex = %+v, %v", found, err)
	}
	before := len(s.Notifications("vault/indexProgress"))
	if err := s.Call(ctx, "vault/reindex", map[string]any{"full": true}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Notes != res.Index.Notes+1 {
		t.Errorf("full reindex notes = %d", r.Notes)
	}
	after := s.Notifications("vault/indexProgress")
	if len(after) <= before {
		t.Fatal("full reindex sent no progress")
	}
	var prog protocol.IndexProgressParams
	json.Unmarshal(after[len(after)-1].Params, &prog)
	if prog.Done != prog.Total || prog.Total == 0 {
		t.Errorf("final progress = %+v", prog)
	}
	wantCode(t, s.Call(ctx, "vault/reindex", map[string]any{"full": "yes"}, nil), -32602, `"full"`, "boolean")
}

// TestMalformedInput sends what no client library would: garbage, invalid
// JSON, batches, oversized messages. Each gets an error reply where one is
// possible, and the server keeps serving.
func TestMalformedInput(t *testing.T) {
	for _, codec := range []string{rpc.CodecHeader, rpc.CodecLine} {
		t.Run(codec, func(t *testing.T) {
			noLeaks(t)
			s := start(t, rpc.Config{Codec: codec, MaxMessageBytes: 4096})
			initialize(t, s, nil)
			ctx := ctxT(t)
			stray := 0
			expectStray := func(code int64) {
				t.Helper()
				stray++
				r, err := s.AwaitStray(ctx, stray)
				if err != nil {
					t.Fatal(err)
				}
				if r.Error == nil || r.Error.Code != code || string(r.ID) != "null" {
					t.Fatalf("stray response %d = %+v, want code %d with id null", stray, r, code)
				}
			}
			alive := func() {
				t.Helper()
				if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
					t.Fatalf("server not serving after bad input: %v", err)
				}
			}

			if codec == rpc.CodecHeader {
				s.WriteRaw([]byte("this is not a header\r\n"))
			} else {
				s.WriteRaw([]byte("this is not json\n"))
			}
			expectStray(-32700)
			alive()

			s.WriteMessage([]byte(`{"jsonrpc":"2.0","id":5,"method":`))
			expectStray(-32700)
			s.WriteMessage([]byte(`[{"jsonrpc":"2.0","id":6,"method":"vault/status"}]`))
			expectStray(-32600)
			alive()

			bad := s.Expect(json.RawMessage("8"))
			s.WriteMessage([]byte(`{"jsonrpc":"2.0","id":8,"method":true}`))
			r, err := bad.Wait(ctx)
			if err != nil || r.Error == nil || r.Error.Code != -32600 {
				t.Fatalf("method of wrong type: %+v, %v", r, err)
			}

			big := s.Expect(json.RawMessage("77"))
			s.WriteMessage([]byte(`{"jsonrpc":"2.0","id":77,"method":"vault/search","params":{"query":"` + strings.Repeat("a", 10000) + `"}}`))
			r, err = big.Wait(ctx)
			if err != nil || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "4096") {
				t.Fatalf("oversized message: %+v, %v", r, err)
			}
			alive()

			// Binary noise with a valid message after it.
			s.WriteRaw([]byte{0, 1, 2, 0xff, 0xfe, '\n'})
			expectStray(-32700)
			alive()
			if err := s.ReadErr(); err != nil {
				t.Fatalf("server wrote something that is not protocol: %v", err)
			}
		})
	}
}

// TestUnresyncable: input that cannot be framed ends the connection
// cleanly.
func TestUnresyncable(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, nil)
	go s.WriteRaw([]byte(strings.Repeat("x", 64<<10)))
	if err := s.Wait(ctxT(t)); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	select {
	case <-s.Done():
	case <-ctxT(t).Done():
		t.Fatal("output not closed")
	}
}

func TestPanicRecovered(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{}, func(srv *rpc.Server) {
		rpc.SetTestHook(srv, func(ctx context.Context, method string) (any, error) {
			if method == "test/panic" {
				var m map[string]int
				m["boom"]++ // nil map write
			}
			return "ok", nil
		})
	})
	s.AllowPanics(1)
	initialize(t, s, nil)
	ctx := ctxT(t)
	wantCode(t, s.Call(ctx, "test/panic", nil, nil), -32603, "test/panic", "panicked")
	if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
		t.Fatalf("server not serving after a panic: %v", err)
	}
}

// TestOrdering: quick requests run one after another in arrival order.
func TestOrdering(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var order []string
	s := start(t, rpc.Config{}, func(srv *rpc.Server) {
		rpc.SetTestHook(srv, func(ctx context.Context, method string) (any, error) {
			mu.Lock()
			order = append(order, method)
			mu.Unlock()
			runtime.Gosched()
			return nil, nil
		})
	})
	initialize(t, s, nil)
	ctx := ctxT(t)
	var calls []*rpctest.Call
	var want []string
	for i := range 50 {
		m := "test/q" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		want = append(want, m)
		c, err := s.Start(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	for _, c := range calls {
		if _, err := c.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, want) {
		t.Errorf("execution order\n%v\nwant\n%v", order, want)
	}
}

func TestCancelQuickRequest(t *testing.T) {
	noLeaks(t)
	started := make(chan struct{})
	s := start(t, rpc.Config{}, func(srv *rpc.Server) {
		rpc.SetTestHook(srv, func(ctx context.Context, method string) (any, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	})
	initialize(t, s, nil)
	ctx := ctxT(t)
	call, _ := s.Start("test/block", nil)
	<-started
	if err := s.Cancel(call); err != nil {
		t.Fatal(err)
	}
	resp, err := call.Wait(ctx)
	if err != nil || resp.Error == nil || resp.Error.Code != protocol.CodeRequestCancelled {
		t.Fatalf("cancelled request = %+v, %v; want -32800", resp, err)
	}
	// Cancelling something unknown is harmless.
	s.Notify("$/cancelRequest", map[string]any{"id": 424242})
	s.Notify("$/cancelRequest", map[string]any{"id": "nope"})
	s.Notify("$/cancelRequest", map[string]any{})
	if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// blockingModel never answers: each call waits until its context ends, so
// runs on it last until they are stopped or cancelled.
type blockingModel struct{}

func (blockingModel) Chat(ctx context.Context, _ llm.Request, _ func(string)) (*llm.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockingModel) Name() string { return "test/blocking" }

func slowModel() llm.Model { return blockingModel{} }

// TestAgentStopNotBlocked: while a run is busy, quick requests and
// agent/stop are served; the run ends stopped with agent_stopped then
// agent_completion.
func TestAgentStopNotBlocked(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{Model: slowModel()})
	initialize(t, s, nil)
	ctx := ctxT(t)

	run, err := s.Start("agent/run", map[string]any{"message": "wait for it", "runId": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AwaitNotification(ctx, "agent/update", updateIs("r1", "agent_turn_start")); err != nil {
		t.Fatal(err)
	}
	if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
		t.Fatalf("status during a run: %v", err)
	}
	var in protocol.AgentInputResult
	if err := s.Call(ctx, "agent/input", map[string]any{"runId": "other", "content": "x"}, &in); err != nil || in.Accepted {
		t.Fatalf("agent/input for an unknown run = %+v, %v", in, err)
	}
	var stop protocol.AgentStopResult
	if err := s.Call(ctx, "agent/stop", map[string]any{"runId": "r1"}, &stop); err != nil || !stop.Stopped {
		t.Fatalf("agent/stop = %+v, %v", stop, err)
	}
	res, _ := waitRun(t, run)
	if res.StopReason != agent.StopStopped || res.RunID != "r1" {
		t.Errorf("result = %+v, want stopped r1", res)
	}
	types := updateTypes(s, "r1")
	if !slices.Contains(types, "agent_stopped") || types[len(types)-1] != "agent_completion" {
		t.Errorf("updates = %v, want agent_stopped then agent_completion last", types)
	}
	if err := s.Call(ctx, "agent/stop", map[string]any{"runId": "r1"}, &stop); err != nil || stop.Stopped {
		t.Errorf("second agent/stop = %+v, %v; want stopped false", stop, err)
	}
	wantCode(t, s.Call(ctx, "agent/stop", map[string]any{}, nil), -32602, "runId")
}

// TestAgentRunCancel: $/cancelRequest on agent/run stops the run and the
// reply is -32800 carrying the result.
func TestAgentRunCancel(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{Model: slowModel()})
	initialize(t, s, nil)
	ctx := ctxT(t)
	run, _ := s.Start("agent/run", map[string]any{"message": "wait", "runId": "c1"})
	if _, err := s.AwaitNotification(ctx, "agent/update", updateIs("c1", "agent_turn_start")); err != nil {
		t.Fatal(err)
	}
	s.Cancel(run)
	resp, err := run.Wait(ctx)
	if err != nil || resp.Error == nil || resp.Error.Code != protocol.CodeRequestCancelled {
		t.Fatalf("cancelled run = %+v, %v; want -32800", resp, err)
	}
	var res protocol.AgentRunResult
	if err := json.Unmarshal(resp.Error.Data, &res); err != nil || res.StopReason != agent.StopStopped {
		t.Errorf("error data = %s (%v), want the result with stopReason stopped", resp.Error.Data, err)
	}
	if types := updateTypes(s, "c1"); !slices.Contains(types, "agent_stopped") {
		t.Errorf("updates = %v, want agent_stopped", types)
	}
}

// TestConcurrentRuns: several runs at once; stopping one leaves the other.
func TestConcurrentRuns(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{Model: slowModel()})
	initialize(t, s, nil)
	ctx := ctxT(t)
	a, _ := s.Start("agent/run", map[string]any{"message": "a", "runId": "a"})
	b, _ := s.Start("agent/run", map[string]any{"message": "b", "runId": "b"})
	for _, id := range []string{"a", "b"} {
		if _, err := s.AwaitNotification(ctx, "agent/update", updateIs(id, "agent_turn_start")); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, s.Call(ctx, "agent/run", map[string]any{"message": "dup", "runId": "a"}, nil), -32602, "already active")
	s.Call(ctx, "agent/stop", map[string]any{"runId": "a"}, nil)
	if _, err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(updateTypes(s, "b"), "agent_completion") {
		t.Fatal("stopping a ended b")
	}
	s.Call(ctx, "agent/stop", map[string]any{"runId": "b"}, nil)
	if _, err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownStopsRuns: shutdown ends active runs.
func TestShutdownStopsRuns(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{Model: slowModel()})
	initialize(t, s, nil)
	ctx := ctxT(t)
	run, _ := s.Start("agent/run", map[string]any{"message": "a", "runId": "s1"})
	if _, err := s.AwaitNotification(ctx, "agent/update", updateIs("s1", "agent_turn_start")); err != nil {
		t.Fatal(err)
	}
	if err := s.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	s.Notify("exit", nil)
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

var hostMarker = regexp.MustCompile(`<!--AGENT_REASONING:(\w+):(\d+):(.+?)-->`)

// TestAgentRunOffline runs the offline model over the fixture and reads the
// notifications the way a host does.
func TestAgentRunOffline(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, map[string]any{"settings": map[string]any{"provider": "offline"}})
	ctx := ctxT(t)
	var res protocol.AgentRunResult
	err := s.Call(ctx, "agent/run", map[string]any{
		"message":  "How do I keep a sourdough starter alive?",
		"history":  []map[string]any{{"role": "user", "content": "hi"}, {"role": "assistant", "content": "<!--AGENT_REASONING:complete:1:[\"x\"]-->\n\nhello"}},
		"settings": map[string]any{"maxIterations": 6, "reasoningWindow": 3, "whatever": 1},
	}, &res)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == "" || res.StopReason != agent.StopFinalAnswer || res.Answer == "" || res.Iterations == 0 {
		t.Fatalf("result = %+v", res)
	}
	if !slices.Equal(res.UnknownSettings, []string{"whatever"}) {
		t.Errorf("unknownSettings = %v", res.UnknownSettings)
	}
	m := hostMarker.FindStringSubmatch(res.Content)
	if m == nil || m[1] != "complete" {
		t.Fatalf("content %q has no complete marker", res.Content)
	}
	var steps []string
	if err := json.Unmarshal([]byte(m[3]), &steps); err != nil || len(steps) == 0 {
		t.Errorf("steps %q: %v", m[3], err)
	}
	if !strings.HasSuffix(res.Content, res.Answer) {
		t.Errorf("content does not end with the answer")
	}
	msgs := s.Notifications("agent/message")
	if len(msgs) == 0 {
		t.Fatal("no agent/message")
	}
	var lastMsg protocol.AgentMessageParams
	json.Unmarshal(msgs[len(msgs)-1].Params, &lastMsg)
	if lastMsg.RunID != res.RunID || lastMsg.Content != res.Content {
		t.Errorf("last agent/message = %+v, want the result content", lastMsg)
	}
	types := updateTypes(s, res.RunID)
	if len(types) < 4 || types[0] != "agent_start" || types[len(types)-1] != "agent_completion" ||
		!slices.Contains(types, "tool_start") || !slices.Contains(types, "tool_complete") {
		t.Errorf("update types = %v", types)
	}
	for _, n := range s.Notifications("agent/update") {
		var raw map[string]json.RawMessage
		json.Unmarshal(n.Params, &raw)
		if _, ok := raw["step"]; !ok || raw["runId"] == nil {
			t.Errorf("update without runId/step: %s", n.Params)
		}
	}

	errCases := []struct {
		name      string
		params    map[string]any
		fragments []string
	}{
		{"missing message", map[string]any{}, []string{`"message"`}},
		{"bad history role", map[string]any{"message": "x", "history": []map[string]any{{"role": "robot", "content": "x"}}}, []string{"history[0].role"}},
		{"bad setting type", map[string]any{"message": "x", "settings": map[string]any{"enableAgentPlannerV0": "yes"}}, []string{"settings.enableAgentPlannerV0", "boolean"}},
		{"trace inside vault", map[string]any{"message": "x", "settings": map[string]any{"trace": filepath.Join(fixtureVault, "t.jsonl")}}, []string{"settings.trace", "outside the vault"}},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, s.Call(ctx, "agent/run", tc.params, nil), -32602, tc.fragments...)
		})
	}
}

func TestAgentRunTrace(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, nil)
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	var res protocol.AgentRunResult
	if err := s.Call(ctxT(t), "agent/run", map[string]any{"message": "running plan", "settings": map[string]any{"trace": trace}}, &res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(b), `"RunTerminated"`) {
		t.Fatalf("trace = %q, %v", b, err)
	}
}

func updateIs(runID, typ string) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool {
		var u protocol.AgentUpdateParams
		json.Unmarshal(p, &u)
		return u.RunID == runID && u.UpdateType == typ
	}
}

func updateTypes(s *rpctest.Session, runID string) []string {
	var out []string
	for _, n := range s.Notifications("agent/update") {
		var u protocol.AgentUpdateParams
		json.Unmarshal(n.Params, &u)
		if u.RunID == runID {
			out = append(out, u.UpdateType)
		}
	}
	return out
}

// TestAgentRequestInput: a roa run asks the host a question
// (agent_request_input), agent/input answers it, and the run resumes.
func TestAgentRequestInput(t *testing.T) {
	noLeaks(t)
	model := llm.NewScripted([]llm.Turn{
		{Content: "```json\n{\"plan\": \"Ask which starter.\", \"tools_to_consider\": [], \"finish\": false}\n```"},
		{ToolCalls: []llm.ScriptedToolCall{{Name: "request_input", Arguments: map[string]any{"question": "Rye or wheat?"}}}},
		{Content: `{"observation": "The user means rye.", "should_continue": false, "final_answer": "Feed the rye starter daily."}`},
	})
	s := start(t, rpc.Config{Model: model})
	initialize(t, s, map[string]any{"settings": map[string]any{"mode": "roa"}})
	ctx := ctxT(t)
	run, _ := s.Start("agent/run", map[string]any{"message": "starter help", "runId": "in1"})
	n, err := s.AwaitNotification(ctx, "agent/update", updateIs("in1", "agent_request_input"))
	if err != nil {
		t.Fatal(err)
	}
	var u protocol.AgentUpdateParams
	json.Unmarshal(n.Params, &u)
	if u.Question != "Rye or wheat?" {
		t.Errorf("question = %q", u.Question)
	}
	var in protocol.AgentInputResult
	if err := s.Call(ctx, "agent/input", map[string]any{"runId": "in1", "content": "rye, please"}, &in); err != nil || !in.Accepted {
		t.Fatalf("agent/input = %+v, %v", in, err)
	}
	res, _ := waitRun(t, run)
	if res.Answer != "Feed the rye starter daily." || res.StopReason != agent.StopFinalAnswer {
		t.Errorf("result = %+v", res)
	}
	types := updateTypes(s, "in1")
	for _, want := range []string{"agent_reason", "agent_observe", "tool_start", "tool_complete"} {
		if !slices.Contains(types, want) {
			t.Errorf("updates %v lack %s", types, want)
		}
	}
	if err := s.Call(ctx, "agent/input", map[string]any{"runId": "in1", "content": "late"}, &in); err != nil || in.Accepted {
		t.Errorf("agent/input after the run = %+v, %v", in, err)
	}
}

// TestDeadHost: when the host stops reading (its end of our stdout is
// closed), the first failed write ends Serve cleanly.
func TestDeadHost(t *testing.T) {
	noLeaks(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := rpc.New(rpc.Config{InMemoryIndex: true})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), inR, outW) }()
	c := rpctest.NewClient(outR, inW, "header")
	if err := c.Call(ctxT(t), "vault/status", nil, nil); err == nil {
		t.Fatal("want not initialized")
	}
	outR.Close() // the host is gone: our writes fail
	c.Notify("vault/status", nil)
	c.Start("vault/status", nil)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	case <-ctxT(t).Done():
		t.Fatal("Serve did not end after the host went away")
	}
	inW.Close()
}

// An LSP-minded host may name the vault with rootUri or rootPath.
func TestInitializeWithRootURI(t *testing.T) {
	for _, params := range []map[string]any{
		{"rootUri": (&url.URL{Scheme: "file", Path: filepath.ToSlash(fixtureVault)}).String()},
		{"rootPath": fixtureVault},
	} {
		s := start(t, rpc.Config{})
		var res protocol.InitializeResult
		if err := s.Call(ctxT(t), "initialize", params, &res); err != nil {
			t.Fatalf("initialize %v: %v", params, err)
		}
		var st struct{ Notes int }
		if err := s.Call(ctxT(t), "vault/status", nil, &st); err != nil || st.Notes == 0 {
			t.Errorf("%v: status %+v, %v", params, st, err)
		}
	}
}

// PROTOCOL.md states the query limits the search package enforces.
func TestQueryLimitsDocumented(t *testing.T) {
	b, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("at most %d bytes and %d words", search.MaxQueryBytes, search.MaxQueryTerms); !strings.Contains(string(b), want) {
		t.Errorf("PROTOCOL.md does not say %q", want)
	}
}
