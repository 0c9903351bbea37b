package llm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm/llmtest"
)

// leaks reports whether s holds the test key or a telling part of it.
func leaks(s string) bool {
	return strings.Contains(s, "sk-test") || strings.Contains(s, "SECRET") || strings.Contains(s, "CRET123")
}

// The server's message is longer than what an error keeps, and the key it
// echoes spans the cut: cutting first and redacting after kept the key's
// first part.
func TestOpenAIKeyAtTruncationCut(t *testing.T) {
	for _, pad := range []int{285, 290, 295, 299} {
		msg := strings.Repeat("x", pad) + testKey + " and more"
		env := newProvider(t, llmtest.Repeat(llmtest.Error(400, msg)), nil)
		_, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err == nil || leaks(err.Error()) {
			t.Errorf("pad %d: error %q keeps part of the key", pad, err)
		}
	}
}

// A model server that echoes the key (in an answer split across deltas,
// in its reasoning or in tool arguments) must not get it past the provider.
func TestOpenAIRedactsEchoedKey(t *testing.T) {
	t.Run("answer", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.Text("your key is sk-te", "st-SECR", "ET123, and the end: sk-test-SE")), nil)
		var mu sync.Mutex
		var deltas []string
		resp, err := env.model.Chat(context.Background(), simpleReq(), func(s string) {
			mu.Lock()
			deltas = append(deltas, s)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		streamed := strings.Join(deltas, "")
		for what, s := range map[string]string{"content": resp.Content, "streamed": streamed} {
			if leaks(s) || !strings.Contains(s, "your key is [REDACTED], and the end: [REDACTED]") {
				t.Errorf("%s = %q", what, s)
			}
		}
		for _, d := range deltas {
			if leaks(d) {
				t.Errorf("delta %q leaks", d)
			}
		}
	})
	t.Run("reasoning", func(t *testing.T) {
		r := llmtest.Reply{Chunks: []string{llmtest.RoleChunk(), llmtest.ReasoningChunk("the key sk-test-"), llmtest.ReasoningChunk("SECRET123 is"),
			llmtest.TextChunk("<think>also sk-test-SECRET123</think>answer"), llmtest.FinishChunk("stop")}}
		env := newProvider(t, llmtest.Repeat(r), nil)
		resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if leaks(resp.Reasoning) || resp.Content != "answer" {
			t.Errorf("reasoning %q, content %q", resp.Reasoning, resp.Content)
		}
	})
	t.Run("tool arguments", func(t *testing.T) {
		env := newProvider(t, llmtest.Repeat(llmtest.ToolCalls("", llmtest.Call{ID: "c1", Name: "localSearch",
			Arguments: `{"query":"key sk-test-SECRET123 here"}`})), nil)
		resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"query":"key [REDACTED] here"}` {
			t.Errorf("tool calls = %+v", resp.ToolCalls)
		}
	})
}

// A 200 answer in HTML (a proxy's login page, a web UI's URL instead of its
// API) is no stream to retry.
func TestOpenAIHTMLEndpoint(t *testing.T) {
	env := newProvider(t, llmtest.Repeat(llmtest.Reply{ContentType: "text/html; charset=utf-8",
		Body: "<!doctype html><html><body>Sign in</body></html>"}), nil)
	_, err := env.model.Chat(context.Background(), simpleReq(), nil)
	if err == nil || !strings.Contains(err.Error(), "not an OpenAI-compatible endpoint: got text/html") {
		t.Fatalf("err = %v", err)
	}
	if env.srv.Calls() != 1 || errors.Is(err, ErrStreamInterrupted) {
		t.Errorf("%d calls, err %v: an HTML page must not be retried as a cut stream", env.srv.Calls(), err)
	}
}

// A server that accepts the connection and never answers gets a clear
// error after the first-byte timeout, not three silent retries of the
// whole call timeout.
func TestOpenAIFirstByteTimeout(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	env := newProvider(t, llmtest.Repeat(llmtest.Reply{Stall: stall}), func(c *OpenAIConfig) {
		c.Timeout = time.Minute
		c.FirstByteTimeout = 100 * time.Millisecond
	})
	_, err := env.model.Chat(context.Background(), simpleReq(), nil)
	if err == nil || !strings.Contains(err.Error(), "sent no response within 100ms") {
		t.Fatalf("err = %v", err)
	}
	if env.srv.Calls() != 1 {
		t.Errorf("%d calls: a silent server must not be retried", env.srv.Calls())
	}
}

// A model that never stops talking is cut at the documented limits, and
// the response says so.
func TestOpenAIOutputIsCapped(t *testing.T) {
	t.Run("answer", func(t *testing.T) {
		piece := strings.Repeat("blah ", 200) // 1,000 bytes
		chunks := []string{llmtest.RoleChunk()}
		for range DefaultMaxAnswerBytes/len(piece) + 500 {
			chunks = append(chunks, llmtest.TextChunk(piece))
		}
		env := newProvider(t, llmtest.Repeat(llmtest.Reply{Chunks: append(chunks, llmtest.FinishChunk("stop"))}), nil)
		streamed := 0
		resp, err := env.model.Chat(context.Background(), simpleReq(), func(s string) { streamed += len(s) })
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Content) > DefaultMaxAnswerBytes+200 || streamed != len(resp.Content) {
			t.Errorf("content %d bytes, streamed %d, want at most about %d", len(resp.Content), streamed, DefaultMaxAnswerBytes)
		}
		if !strings.Contains(resp.Cut, "answer") || !strings.HasSuffix(resp.Content, "]") || resp.FinishReason != "length" {
			t.Errorf("cut %q, finish %q, content ends %q", resp.Cut, resp.FinishReason, resp.Content[len(resp.Content)-80:])
		}
	})
	t.Run("tool arguments", func(t *testing.T) {
		chunks := []string{llmtest.RoleChunk(), llmtest.ToolCallChunk(0, "c1", "localSearch", `{"query":"`)}
		for range DefaultMaxToolArgumentBytes/1000 + 100 {
			chunks = append(chunks, llmtest.ToolCallChunk(0, "", "", strings.Repeat("a", 1000)))
		}
		chunks = append(chunks, llmtest.ToolCallChunk(0, "", "", `"}`), llmtest.FinishChunk("tool_calls"))
		env := newProvider(t, llmtest.Repeat(llmtest.Reply{Chunks: chunks}), nil)
		resp, err := env.model.Chat(context.Background(), simpleReq(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) != 1 || len(resp.ToolCalls[0].Arguments) > DefaultMaxToolArgumentBytes {
			t.Fatalf("tool calls: %d, arguments %d bytes", len(resp.ToolCalls), len(resp.ToolCalls[0].Arguments))
		}
		if !strings.Contains(resp.Cut, "localSearch") {
			t.Errorf("cut = %q", resp.Cut)
		}
	})
}
