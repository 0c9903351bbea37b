package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm/llmtest"
)

const testKey = "sk-test-SECRET123"

// sleepRecorder replaces the provider's Sleep and records the waits.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

type providerEnv struct {
	srv    *llmtest.Server
	model  *OpenAI
	sleeps *sleepRecorder
	logs   *bytes.Buffer
}

func newProvider(t *testing.T, script llmtest.Script, mod func(*OpenAIConfig)) providerEnv {
	t.Helper()
	srv := llmtest.NewServer(t, script)
	sr := &sleepRecorder{}
	logs := &bytes.Buffer{}
	cfg := OpenAIConfig{
		APIKey:  testKey,
		BaseURL: srv.URL,
		Model:   "test-model",
		Sleep:   sr.Sleep,
		Logger:  slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mod != nil {
		mod(&cfg)
	}
	m, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return providerEnv{srv: srv, model: m, sleeps: sr, logs: logs}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func collect() (func(string), func() []string) {
	var mu sync.Mutex
	var got []string
	return func(s string) {
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
		}, func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}
}

func simpleReq() Request {
	return Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
}

func TestOpenAITextStreaming(t *testing.T) {
	r := llmtest.Text("Hello", ", ", "world.")
	r.Chunks = append(r.Chunks, llmtest.UsageChunk(12, 3))
	env := newProvider(t, llmtest.Sequence(t, r), nil)
	onDelta, deltas := collect()
	temp := float32(0)
	req := Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "You are helpful."},
			{Role: RoleUser, Content: "Find sourdough notes"},
			{Role: RoleAssistant, Content: "Searching.", ToolCalls: []ToolCall{
				{ID: "call_a", Name: "localSearch", Arguments: `{"query":"sourdough"}`},
				{ID: "call_b", Name: "readNote", Arguments: `{"notePath":`},
			}},
			{Role: RoleTool, ToolCallID: "call_a", Name: "localSearch", Content: `{"results":[],"total":0}`},
			{Role: RoleTool, ToolCallID: "call_b", Name: "readNote", Content: `{"error":"bad json"}`},
		},
		Tools: []ToolDef{{
			Name: "localSearch", Description: "Search the vault",
			Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		}, {Name: "getFileTree", Description: "List files"}},
		Temperature: &temp,
		MaxTokens:   256,
	}
	resp, err := env.model.Chat(context.Background(), req, onDelta)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Content != "Hello, world." {
		t.Errorf("content = %q", resp.Content)
	}
	if got := strings.Join(deltas(), "|"); got != "Hello|, |world." {
		t.Errorf("deltas = %q", got)
	}
	if resp.FinishReason != "stop" || resp.Usage != (Usage{PromptTokens: 12, CompletionTokens: 3}) {
		t.Errorf("finish %q usage %+v", resp.FinishReason, resp.Usage)
	}
	if len(resp.ToolCalls) != 0 {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}

	reqs := env.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	got := reqs[0]
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", got.Path)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+testKey {
		t.Errorf("Authorization = %q", h)
	}
	c := got.Chat
	if c.Model != "test-model" || !c.Stream || c.StreamOptions == nil || !c.StreamOptions.IncludeUsage {
		t.Errorf("model %q stream %v options %+v", c.Model, c.Stream, c.StreamOptions)
	}
	if c.Temperature == nil || *c.Temperature > 1e-6 {
		t.Errorf("temperature = %v, want ~0 sent", c.Temperature)
	}
	if c.MaxTokens != 256 {
		t.Errorf("max_tokens = %d", c.MaxTokens)
	}
	roles := []string{}
	for _, m := range c.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool" {
		t.Errorf("roles = %v", roles)
	}
	asst := c.Messages[2]
	if len(asst.ToolCalls) != 2 || asst.ToolCalls[0].ID != "call_a" || asst.ToolCalls[0].Type != "function" ||
		asst.ToolCalls[0].Function.Name != "localSearch" || asst.ToolCalls[0].Function.Arguments != `{"query":"sourdough"}` {
		t.Errorf("assistant tool calls = %+v", asst.ToolCalls)
	}
	if !json.Valid([]byte(asst.ToolCalls[1].Function.Arguments)) ||
		!strings.Contains(asst.ToolCalls[1].Function.Arguments, `notePath`) {
		t.Errorf("malformed history arguments not made sendable: %q", asst.ToolCalls[1].Function.Arguments)
	}
	if c.Messages[3].ToolCallID != "call_a" || c.Messages[4].ToolCallID != "call_b" {
		t.Errorf("tool_call_ids = %q %q", c.Messages[3].ToolCallID, c.Messages[4].ToolCallID)
	}
	if len(c.Tools) != 2 || c.Tools[0].Type != "function" || c.Tools[0].Function.Name != "localSearch" ||
		c.Tools[0].Function.Description != "Search the vault" {
		t.Fatalf("tools = %+v", c.Tools)
	}
	var params map[string]any
	if err := json.Unmarshal(c.Tools[0].Function.Parameters, &params); err != nil || params["type"] != "object" {
		t.Errorf("parameters = %s (%v)", c.Tools[0].Function.Parameters, err)
	}
	if string(c.Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("empty parameters sent as %s", c.Tools[1].Function.Parameters)
	}
}

func TestOpenAINoKeyLocalServer(t *testing.T) {
	env := newProvider(t, llmtest.Sequence(t, llmtest.Text("ok")), func(c *OpenAIConfig) { c.APIKey = "" })
	if _, err := env.model.Chat(context.Background(), simpleReq(), nil); err != nil {
		t.Fatal(err)
	}
	if h, ok := env.srv.Requests()[0].Header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []ToolCall
		text   string
	}{
		{
			name: "split arguments",
			chunks: []string{
				llmtest.RoleChunk(),
				llmtest.TextChunk("Searching the vault."),
				llmtest.ToolCallChunk(0, "call_1", "localSearch", ""),
				llmtest.ToolCallChunk(0, "", "", `{"que`),
				llmtest.ToolCallChunk(0, "", "", `ry":"sour`),
				llmtest.ToolCallChunk(0, "", "", `dough"}`),
				llmtest.FinishChunk("tool_calls"),
			},
			text: "Searching the vault.",
			want: []ToolCall{{ID: "call_1", Name: "localSearch", Arguments: `{"query":"sourdough"}`}},
		},
		{
			name: "two calls interleaved by index",
			chunks: []string{
				llmtest.ToolCallChunk(0, "call_a", "readNote", `{"note`),
				llmtest.ToolCallChunk(1, "call_b", "readNote", `{"notePa`),
				llmtest.ToolCallChunk(0, "", "", `Path":"a.md"`),
				llmtest.ToolCallChunk(1, "", "", `th":"b.md"}`),
				llmtest.ToolCallChunk(0, "", "", `}`),
				llmtest.FinishChunk("tool_calls"),
			},
			want: []ToolCall{
				{ID: "call_a", Name: "readNote", Arguments: `{"notePath":"a.md"}`},
				{ID: "call_b", Name: "readNote", Arguments: `{"notePath":"b.md"}`},
			},
		},
		{
			name: "no index no id: order fallback and synthesized ids",
			chunks: []string{
				llmtest.ToolCallChunk(-1, "", "readNote", `{"notePath":`),
				llmtest.ToolCallChunk(-1, "", "", `"a.md"}`),
				llmtest.ToolCallChunk(-1, "", "getFileTree", ``),
				llmtest.FinishChunk("tool_calls"),
			},
			want: []ToolCall{
				{ID: "call_0", Name: "readNote", Arguments: `{"notePath":"a.md"}`},
				{ID: "call_1", Name: "getFileTree", Arguments: `{}`},
			},
		},
		{
			name: "malformed arguments passed through raw",
			chunks: []string{
				llmtest.ToolCallChunk(0, "call_x", "localSearch", `{"query": "unterminated`),
				llmtest.FinishChunk("tool_calls"),
			},
			want: []ToolCall{{ID: "call_x", Name: "localSearch", Arguments: `{"query": "unterminated`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newProvider(t, llmtest.Sequence(t, llmtest.Reply{Chunks: tt.chunks}), nil)
			resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.Content != tt.text {
				t.Errorf("content = %q", resp.Content)
			}
			if resp.FinishReason != "tool_calls" {
				t.Errorf("finish = %q", resp.FinishReason)
			}
			if len(resp.ToolCalls) != len(tt.want) {
				t.Fatalf("tool calls = %+v", resp.ToolCalls)
			}
			for i := range tt.want {
				if resp.ToolCalls[i] != tt.want[i] {
					t.Errorf("call %d = %+v, want %+v", i, resp.ToolCalls[i], tt.want[i])
				}
			}
		})
	}
}

func TestOpenAIThinking(t *testing.T) {
	tests := []struct {
		name          string
		chunks        []string
		wantContent   string
		wantReasoning string
	}{
		{
			name: "think tags split across chunks",
			chunks: []string{
				llmtest.TextChunk("<thi"), llmtest.TextChunk("nk>The user wants"),
				llmtest.TextChunk(" bread.</th"), llmtest.TextChunk("ink>\n\nSourdough "),
				llmtest.TextChunk("needs a starter."), llmtest.FinishChunk("stop"),
			},
			wantContent:   "Sourdough needs a starter.",
			wantReasoning: "The user wants bread.",
		},
		{
			name: "reasoning_content field",
			chunks: []string{
				llmtest.ReasoningChunk("Let me think"), llmtest.ReasoningChunk(" about it."),
				llmtest.TextChunk("Answer."), llmtest.FinishChunk("stop"),
			},
			wantContent:   "Answer.",
			wantReasoning: "Let me think about it.",
		},
		{
			name: "reasoning field (Ollama style)",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"reasoning":"Hmm."},"finish_reason":null}]}`,
				llmtest.TextChunk("Done."), llmtest.FinishChunk("stop"),
			},
			wantContent:   "Done.",
			wantReasoning: "Hmm.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newProvider(t, llmtest.Sequence(t, llmtest.Reply{Chunks: tt.chunks}), nil)
			onDelta, deltas := collect()
			resp, err := env.model.Chat(context.Background(), simpleReq(), onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tt.wantContent || resp.Reasoning != tt.wantReasoning {
				t.Errorf("content %q reasoning %q", resp.Content, resp.Reasoning)
			}
			joined := strings.Join(deltas(), "")
			if joined != tt.wantContent {
				t.Errorf("onDelta got %q", joined)
			}
			if strings.Contains(joined, "think") || (tt.wantReasoning != "" && strings.Contains(joined, tt.wantReasoning)) {
				t.Errorf("thinking leaked to onDelta: %q", joined)
			}
		})
	}
}

func TestOpenAIRetries(t *testing.T) {
	t.Run("429 with Retry-After then success", func(t *testing.T) {
		env := newProvider(t, llmtest.Sequence(t,
			llmtest.Reply{Status: 429, Message: "rate limited", Header: map[string]string{"Retry-After": "1"}},
			llmtest.Text("ok"),
		), nil)
		resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "ok" || env.srv.Calls() != 2 {
			t.Errorf("content %q calls %d", resp.Content, env.srv.Calls())
		}
		if w := env.sleeps.Waits(); len(w) != 1 || w[0] != time.Second {
			t.Errorf("waits = %v, want [1s]", w)
		}
	})
	t.Run("500 then success", func(t *testing.T) {
		env := newProvider(t, llmtest.Sequence(t, llmtest.Error(500, "boom"), llmtest.Text("ok")), nil)
		if _, err := env.model.Chat(context.Background(), simpleReq(), nil); err != nil {
			t.Fatal(err)
		}
		w := env.sleeps.Waits()
		if len(w) != 1 || w[0] < backoffBase/2 || w[0] > backoffBase {
			t.Errorf("waits = %v, want one in [%v,%v]", w, backoffBase/2, backoffBase)
		}
	})
	t.Run("500 forever", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Error(503, "overloaded")), func(c *OpenAIConfig) { c.MaxRetries = 2 })
		_, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err == nil {
			t.Fatal("want error")
		}
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 503 || !strings.Contains(err.Error(), "503") ||
			!strings.Contains(err.Error(), "overloaded") || !strings.Contains(err.Error(), "3 attempts") {
			t.Errorf("err = %v", err)
		}
		if env.srv.Calls() != 3 {
			t.Errorf("calls = %d, want 3", env.srv.Calls())
		}
		w := env.sleeps.Waits()
		if len(w) != 2 || w[1] < backoffBase || w[1] > 2*backoffBase {
			t.Errorf("waits = %v", w)
		}
	})
	t.Run("400 is not retried", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Error(400, "bad tools")), nil)
		_, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err == nil || !strings.Contains(err.Error(), "400") || env.srv.Calls() != 1 {
			t.Errorf("err %v calls %d", err, env.srv.Calls())
		}
	})
	t.Run("Retry-After too long is not waited for", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Reply{Status: 429, Message: "quota",
			Header: map[string]string{"Retry-After": "3600"}}), nil)
		_, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err == nil || env.srv.Calls() != 1 || len(env.sleeps.Waits()) != 0 {
			t.Errorf("err %v calls %d waits %v", err, env.srv.Calls(), env.sleeps.Waits())
		}
	})
	t.Run("cut before any text is retried", func(t *testing.T) {
		env := newProvider(t, llmtest.Sequence(t,
			llmtest.Reply{Chunks: []string{llmtest.RoleChunk()}, Cut: true},
			llmtest.Text("ok"),
		), nil)
		resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err != nil || resp.Content != "ok" {
			t.Errorf("resp %+v err %v", resp, err)
		}
	})
}

func TestOpenAIStreamInterrupted(t *testing.T) {
	for _, abort := range []bool{false, true} {
		name := map[bool]string{false: "clean EOF without finish", true: "connection dropped"}[abort]
		t.Run(name, func(t *testing.T) {
			env := newProvider(t, llmtest.Repeat(llmtest.Reply{
				Chunks: []string{llmtest.RoleChunk(), llmtest.TextChunk("Half an ans")},
				Cut:    !abort, Abort: abort,
			}), nil)
			onDelta, deltas := collect()
			_, err := env.model.Chat(context.Background(), simpleReq(), onDelta)
			if !errors.Is(err, ErrStreamInterrupted) || !strings.Contains(err.Error(), "stream interrupted after") {
				t.Fatalf("err = %v", err)
			}
			if env.srv.Calls() != 1 {
				t.Errorf("retried after text was delivered: %d calls", env.srv.Calls())
			}
			if got := strings.Join(deltas(), ""); got != "Half an ans" {
				t.Errorf("deltas = %q", got)
			}
		})
	}
}

// Some OpenAI-compatible servers end a stream with [DONE] but never send a
// finish reason: that is a complete answer, not an interrupted stream.
func TestOpenAIDoneWithoutFinishReason(t *testing.T) {
	env := newProvider(t, llmtest.Repeat(llmtest.Reply{
		Chunks: []string{llmtest.RoleChunk(), llmtest.TextChunk("A whole "), llmtest.TextChunk("answer.")},
	}), nil)
	resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
	if err != nil || resp.Content != "A whole answer." {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

func TestOpenAICancelAndTimeout(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	t.Run("cancel", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Reply{Chunks: []string{llmtest.TextChunk("x")}, Hold: hold}), nil)
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		var once sync.Once
		errc := make(chan error, 1)
		go func() {
			_, err := env.model.Chat(ctx, simpleReq(), func(string) { once.Do(func() { close(started) }) })
			errc <- err
		}()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("no delta")
		}
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Chat did not return after cancel")
		}
	})
	t.Run("timeout", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Reply{Hold: hold}), func(c *OpenAIConfig) {
			c.Timeout = 50 * time.Millisecond
			c.MaxRetries = 1
		})
		_, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err == nil || !strings.Contains(err.Error(), "timed out") || env.srv.Calls() != 2 {
			t.Errorf("err %v calls %d", err, env.srv.Calls())
		}
	})
}

func TestOpenAIKeyNeverLeaks(t *testing.T) {
	echo := "Incorrect API key provided: " + testKey + ". See https://x/" + testKey
	scripts := map[string]llmtest.Script{
		"401 echoing key":      llmtest.Repeat(llmtest.Error(401, echo)),
		"500 forever":          llmtest.Repeat(llmtest.Error(500, echo)),
		"non-json error body":  llmtest.Repeat(llmtest.Reply{Status: 502, Body: "<html>" + echo + "</html>"}),
		"error event":          llmtest.Repeat(llmtest.Reply{Chunks: []string{llmtest.TextChunk("a"), `{"error":{"message":"` + echo + `"}}`}}),
		"cut":                  llmtest.Repeat(llmtest.Reply{Chunks: []string{llmtest.TextChunk("a")}, Cut: true}),
		"abort":                llmtest.Repeat(llmtest.Reply{Abort: true}),
		"429 with date":        llmtest.Repeat(llmtest.Reply{Status: 429, Message: echo, Header: map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}}),
		"success (debug logs)": llmtest.Repeat(llmtest.Text("fine")),
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			env := newProvider(t, script, func(c *OpenAIConfig) { c.MaxRetries = 1 })
			_, err := env.model.Chat(context.Background(), simpleReq(), nil)
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks key: %v", err)
			}
			if strings.Contains(env.logs.String(), testKey) {
				t.Errorf("logs leak key: %s", env.logs.String())
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Text("x")), nil)
		m, err := NewOpenAI(OpenAIConfig{APIKey: testKey, BaseURL: "http://127.0.0.1:1/v1?k=" + testKey,
			Model: "m", Sleep: env.sleeps.Sleep, Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: env.logs}, nil))})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Chat(context.Background(), simpleReq(), nil)
		if err == nil || strings.Contains(err.Error(), testKey) || strings.Contains(env.logs.String(), testKey) {
			t.Errorf("err %v logs %s", err, env.logs.String())
		}
		if len(env.sleeps.Waits()) != DefaultOpenAIMaxRetries {
			t.Errorf("connection errors not retried: %v", env.sleeps.Waits())
		}
	})
	t.Run("config printing", func(t *testing.T) {
		cfg := OpenAIConfig{APIKey: testKey, Model: "m"}
		var b bytes.Buffer
		slog.New(slog.NewJSONHandler(&b, nil)).Info("cfg", "config", cfg)
		for _, s := range []string{cfg.String(), b.String(), sprintfAll(cfg)} {
			if strings.Contains(s, testKey) {
				t.Errorf("config printing leaks key: %s", s)
			}
		}
	})
	t.Run("bad base url", func(t *testing.T) {
		_, err := NewOpenAI(OpenAIConfig{APIKey: testKey, BaseURL: "ftp://" + testKey, Model: "m"})
		if err == nil || strings.Contains(err.Error(), testKey) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNewOpenAIErrors(t *testing.T) {
	if _, err := NewOpenAI(OpenAIConfig{APIKey: "k"}); !errors.Is(err, ErrNoModel) {
		t.Errorf("missing model: %v", err)
	}
	if _, err := NewOpenAI(OpenAIConfig{Model: "m"}); !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("missing key: %v", err)
	}
	m, err := NewOpenAI(OpenAIConfig{BaseURL: "http://localhost:11434/v1", Model: "qwen3:8b"})
	if err != nil || m.Name() != "openai/qwen3:8b" {
		t.Errorf("base url without a key: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    map[string]string
		want time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"ms header wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			if got := parseRetryAfter(h, now); got != tt.want {
				t.Errorf("got %v want %v", got, tt.want)
			}
		})
	}
}

func sprintfAll(v any) string {
	return fmt.Sprintf("%v %+v %#v %s", v, v, v, v)
}

// Servers differ in how they end and frame a stream: "data:" without the
// space, and [DONE] as the only end marker. A cut stream in the same framing
// is still an interruption.
func TestOpenAIDataWithoutSpace(t *testing.T) {
	env := newProvider(t, llmtest.Sequence(t, llmtest.Reply{
		NoSpace: true,
		Chunks:  []string{llmtest.RoleChunk(), llmtest.TextChunk("Tight "), llmtest.TextChunk("framing.")},
	}, llmtest.Reply{
		NoSpace: true, Cut: true,
		Chunks: []string{llmtest.TextChunk("cut")},
	}), func(c *OpenAIConfig) { c.MaxRetries = -1 })
	resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
	if err != nil || resp.Content != "Tight framing." {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	if _, err := env.model.Chat(context.Background(), simpleReq(), nil); !errors.Is(err, ErrStreamInterrupted) {
		t.Fatalf("cut stream: err = %v, want ErrStreamInterrupted", err)
	}
}

// A server that ignores "stream": true and answers with one JSON document
// is read like a one-chunk stream: text, tool calls (which carry no index
// there), finish reason and usage.
func TestOpenAIPlainJSONAnswer(t *testing.T) {
	env := newProvider(t, llmtest.Sequence(t, llmtest.Reply{
		Plain: `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,
			"message":{"role":"assistant","content":"Let me look.","tool_calls":[
				{"id":"call_1","type":"function","function":{"name":"localSearch","arguments":"{\"query\":\"rye\"}"}},
				{"id":"call_2","type":"function","function":{"name":"readNote","arguments":"{\"notePath\":\"a.md\"}"}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":7,"completion_tokens":5}}`,
	}, llmtest.Reply{
		Plain: `{"choices":[{"index":0,"message":{"role":"assistant","content":"<think>hmm</think>Rye it is."},"finish_reason":"stop"}]}`,
	}), nil)
	onDelta, deltas := collect()
	resp, err := env.model.Chat(context.Background(), simpleReq(), onDelta)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "call_1", Name: "localSearch", Arguments: `{"query":"rye"}`},
		{ID: "call_2", Name: "readNote", Arguments: `{"notePath":"a.md"}`},
	}
	if resp.Content != "Let me look." || !reflect.DeepEqual(resp.ToolCalls, want) || resp.FinishReason != "tool_calls" ||
		resp.Usage.PromptTokens != 7 || resp.Usage.CompletionTokens != 5 {
		t.Errorf("resp = %+v", resp)
	}
	if got := strings.Join(deltas(), ""); got != "Let me look." {
		t.Errorf("deltas = %q", got)
	}
	resp, err = env.model.Chat(context.Background(), simpleReq(), nil)
	if err != nil || resp.Content != "Rye it is." || resp.Reasoning != "hmm" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

func TestCompletionAsStreamRejectsOtherJSON(t *testing.T) {
	for _, body := range []string{`{"error":{"message":"nope"}}`, `[1,2]`, `not json`, `{"choices":[1]}`} {
		if _, ok := completionAsStream([]byte(body)); ok {
			t.Errorf("%s: converted, want refused", body)
		}
	}
}

// A strict server that refuses stream_options gets the request again
// without it, and later calls leave it out from the start.
func TestOpenAIServerRefusesStreamOptions(t *testing.T) {
	env := newProvider(t, func(n int, req llmtest.Request) llmtest.Reply {
		if req.Chat.StreamOptions != nil {
			return llmtest.Reply{Status: 400, Message: "Unrecognized request argument supplied: stream_options"}
		}
		return llmtest.Text("fine")
	}, nil)
	for i := range 2 {
		resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err != nil || resp.Content != "fine" {
			t.Fatalf("call %d: resp = %+v, err = %v", i, resp, err)
		}
	}
	if n := env.srv.Calls(); n != 3 {
		t.Errorf("server saw %d requests, want 3 (refused, retried, then without stream_options)", n)
	}
	// A validation error that names the field (pydantic style), refused
	// again without it: the first error is returned.
	env = newProvider(t, llmtest.Repeat(llmtest.Reply{Status: 422,
		Body: `{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]}`}), nil)
	_, err := env.model.Chat(context.Background(), simpleReq(), nil)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 422 || !strings.Contains(err.Error(), "extra_forbidden") {
		t.Errorf("err = %v", err)
	}
	if n := env.srv.Calls(); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

// Without a model name, FirstModel asks a local server for the first model
// it lists; a server that lists none gets a clear error. NewOpenAI itself
// makes no request.
func TestOpenAIModelDefault(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Repeat(llmtest.Text("ok")))
	if _, err := FirstModel(context.Background(), OpenAIConfig{BaseURL: srv.URL}); !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "lists no models") {
		t.Errorf("no models listed: err = %v", err)
	}
	if _, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL}); !errors.Is(err, ErrNoModel) {
		t.Errorf("NewOpenAI without a model: %v", err)
	}
	srv.SetModels("qwen2.5-7b-instruct", "other")
	name, err := FirstModel(context.Background(), OpenAIConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL, Model: name})
	if err != nil || m.Name() != "openai/qwen2.5-7b-instruct" {
		t.Fatalf("first listed model: %v, %v", m, err)
	}
	if _, err := m.Chat(context.Background(), simpleReq(), nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].Chat.Model; got != "qwen2.5-7b-instruct" {
		t.Errorf("sent model %q", got)
	}
}

// Tool-call arguments sent as a JSON object rather than a string holding
// one are kept as that object's text.
func TestOpenAIArgumentsAsObject(t *testing.T) {
	env := newProvider(t, llmtest.Sequence(t, llmtest.Reply{Chunks: []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"readNote","arguments":{"notePath":"a.md"}}}]},"finish_reason":null}]}`,
		llmtest.FinishChunk("tool_calls"),
	}}), nil)
	resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "c1", Name: "readNote", Arguments: `{"notePath":"a.md"}`}}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
}
