// Package llmtest is a fake OpenAI-compatible Chat Completions server for
// tests. It speaks the real wire format (SSE "data: {...}" lines ending with
// "data: [DONE]"), plays scripted replies and records every request, so tests
// can run the real llm.OpenAI provider against it and assert what it sent.
//
// It is test support only: nothing outside tests imports it.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted answer of the server.
type Reply struct {
	// Status defaults to 200. A non-200 status sends Body (or an OpenAI
	// error object made from Message) instead of a stream.
	Status  int
	Message string
	Body    string
	// Header is added to the response (e.g. Retry-After).
	Header map[string]string
	// Chunks are the JSON payloads sent as "data: <chunk>\n\n" events.
	Chunks []string
	// Cut ends the response after Chunks without "data: [DONE]".
	Cut bool
	// Abort drops the connection after Chunks (the client sees an
	// unexpected EOF).
	Abort bool
	// Plain, when set, is sent as a 200 application/json body instead of a
	// stream, as servers that ignore "stream": true do.
	Plain string
	// NoSpace writes "data:{...}" without the space after the colon.
	NoSpace bool
	// Hold, when set, is waited on after Chunks are sent (until it is closed
	// or the client goes away), for tests of cancellation and stop.
	Hold <-chan struct{}
	// Stall, when set, is waited on before anything is sent, headers
	// included (until it is closed or the client goes away): a server that
	// accepts the connection and never answers.
	Stall <-chan struct{}
	// ContentType, when set, replaces the stream's text/event-stream (with
	// Body sent as is when it is set), for servers that are not
	// OpenAI-compatible.
	ContentType string
}

// Script chooses the reply to call number n (0-based).
type Script func(n int, req Request) Reply

// Sequence plays replies in order. A call beyond the list fails the test and
// gets a 500.
func Sequence(t testing.TB, replies ...Reply) Script {
	return func(n int, _ Request) Reply {
		if n >= len(replies) {
			t.Errorf("llmtest: call %d but only %d replies scripted", n+1, len(replies))
			return Reply{Status: 500, Message: "llmtest: script exhausted"}
		}
		return replies[n]
	}
}

// Repeat answers every call with r.
func Repeat(r Reply) Script { return func(int, Request) Reply { return r } }

// Request is a recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Chat is Body decoded; zero when it did not decode.
	Chat ChatRequest
}

// ChatRequest is the part of a Chat Completions request tests assert on.
type ChatRequest struct {
	Model         string          `json:"model"`
	Messages      []ChatMessage   `json:"messages"`
	Tools         []ChatTool      `json:"tools"`
	Stream        bool            `json:"stream"`
	StreamOptions *StreamOptions  `json:"stream_options"`
	Temperature   *float64        `json:"temperature"`
	MaxTokens     int             `json:"max_tokens"`
	Raw           json.RawMessage `json:"-"`
}

// StreamOptions is stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatMessage is one message as sent on the wire.
type ChatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []WireToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
	Name       string         `json:"name"`
}

// WireToolCall is an assistant tool call as sent on the wire.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatTool is a tool definition as sent on the wire.
type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Server is a running fake endpoint.
type Server struct {
	// URL is the base URL to give the provider (it ends in /v1).
	URL string

	srv    *httptest.Server
	script Script

	mu     sync.Mutex
	reqs   []Request
	models []string
}

// SetModels sets what GET /v1/models lists (nothing by default).
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = ids
	s.mu.Unlock()
}

// NewServer starts a fake server playing script; it is closed when the test
// ends.
func NewServer(t testing.TB, script Script) *Server {
	t.Helper()
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Calls returns how many chat requests arrived.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		s.mu.Lock()
		data := []any{}
		for _, id := range s.models {
			data = append(data, map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": "llmtest"})
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, &rec.Chat); err == nil {
		rec.Chat.Raw = body
	}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()

	reply := s.script(n, rec)
	if reply.Stall != nil {
		select {
		case <-reply.Stall:
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		b := reply.Body
		if b == "" {
			e, _ := json.Marshal(map[string]any{"error": map[string]any{
				"message": reply.Message, "type": "server_error", "code": nil}})
			b = string(e)
		}
		_, _ = w.Write([]byte(b))
		return
	}
	if reply.Plain != "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(reply.Plain))
		return
	}
	if reply.ContentType != "" && reply.Body != "" {
		w.Header().Set("Content-Type", reply.ContentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(reply.Body))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if reply.ContentType != "" {
		w.Header().Set("Content-Type", reply.ContentType)
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	prefix := "data: "
	if reply.NoSpace {
		prefix = "data:"
	}
	for _, c := range reply.Chunks {
		_, _ = fmt.Fprintf(w, "%s%s\n\n", prefix, c)
		if fl != nil {
			fl.Flush()
		}
	}
	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			return
		}
	}
	if reply.Abort {
		panic(http.ErrAbortHandler)
	}
	if !reply.Cut {
		_, _ = fmt.Fprintf(w, "%s[DONE]\n\n", prefix)
	}
}

// Chunk builders. Each returns one chat.completion.chunk JSON payload.

func chunk(delta map[string]any, finish any) string {
	m := map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000,
		"model":   "llmtest",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// RoleChunk is the first chunk OpenAI sends: the assistant role, no content.
func RoleChunk() string { return chunk(map[string]any{"role": "assistant", "content": ""}, nil) }

// TextChunk carries a content delta.
func TextChunk(s string) string { return chunk(map[string]any{"content": s}, nil) }

// ReasoningChunk carries a reasoning_content delta (DeepSeek, llama.cpp).
func ReasoningChunk(s string) string { return chunk(map[string]any{"reasoning_content": s}, nil) }

// ToolCallChunk carries one tool-call delta. id and name are omitted when
// empty; index < 0 omits the index (as some servers do).
func ToolCallChunk(index int, id, name, args string) string {
	tc := map[string]any{"function": map[string]any{"arguments": args}}
	if index >= 0 {
		tc["index"] = index
	}
	if id != "" {
		tc["id"] = id
		tc["type"] = "function"
	}
	if name != "" {
		tc["function"].(map[string]any)["name"] = name
	}
	return chunk(map[string]any{"tool_calls": []any{tc}}, nil)
}

// FinishChunk carries the finish reason ("stop", "tool_calls", "length").
func FinishChunk(reason string) string { return chunk(map[string]any{}, reason) }

// UsageChunk is the final usage chunk sent with stream_options.include_usage.
func UsageChunk(prompt, completion int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "llmtest", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion,
			"total_tokens": prompt + completion},
	})
	return string(b)
}

// Text is a complete streamed text answer made of deltas.
func Text(deltas ...string) Reply {
	chunks := []string{RoleChunk()}
	for _, d := range deltas {
		chunks = append(chunks, TextChunk(d))
	}
	chunks = append(chunks, FinishChunk("stop"))
	return Reply{Chunks: chunks}
}

// Call is a tool call for ToolCalls.
type Call struct {
	ID, Name, Arguments string
}

// ToolCalls is a complete streamed turn calling tools, each call's
// arguments split into three pieces, calls one after another.
func ToolCalls(text string, calls ...Call) Reply {
	chunks := []string{RoleChunk()}
	if text != "" {
		chunks = append(chunks, TextChunk(text))
	}
	for i, c := range calls {
		chunks = append(chunks, ToolCallChunk(i, c.ID, c.Name, ""))
		for _, p := range split3(c.Arguments) {
			chunks = append(chunks, ToolCallChunk(i, "", "", p))
		}
	}
	chunks = append(chunks, FinishChunk("tool_calls"))
	return Reply{Chunks: chunks}
}

// Error is an HTTP error answer with an OpenAI error body.
func Error(status int, message string) Reply { return Reply{Status: status, Message: message} }

func split3(s string) []string {
	if len(s) < 3 {
		return []string{s}
	}
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}
