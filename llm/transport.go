package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// captureKey carries a *respCapture in a request context, so the HTTP
// wrapper can hand the response headers (Retry-After) of one call back to it
// even though go-openai's errors do not carry headers.
type captureKey struct{}

type respCapture struct {
	mu sync.Mutex
	h  http.Header
	// done is set when the body carried the stream's "data: [DONE]" line,
	// which go-openai reports as io.EOF just like a closed connection.
	done atomic.Bool
}

func (c *respCapture) set(h http.Header) {
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
}

func (c *respCapture) header() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// doneWatcher notes the "[DONE]" sentinel line as the response body
// streams by ("data: [DONE]", with or without the space).
type doneWatcher struct {
	io.ReadCloser
	capt    *respCapture
	line    []byte // the start of the current, unfinished line (capped)
	lineLen int    // the length of the current line
}

const maxWatchedLine = 64

func (w *doneWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 && !w.capt.done.Load() {
		for _, b := range p[:n] {
			if b == '\n' {
				if isDoneLine(w.line) {
					w.capt.done.Store(true)
				}
				w.line, w.lineLen = w.line[:0], 0
				continue
			}
			if w.lineLen++; w.lineLen > maxStreamLine {
				return 0, &lineTooLongError{}
			}
			if len(w.line) < maxWatchedLine {
				w.line = append(w.line, b)
			}
		}
	}
	if err == io.EOF && isDoneLine(w.line) {
		w.capt.done.Store(true)
	}
	return n, err
}

func isDoneLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	return ok && string(bytes.TrimSpace(rest)) == "[DONE]"
}

// cancelOnClose releases the request's context with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// maxPlainCompletion caps the body of a non-streamed answer we convert.
const maxPlainCompletion = 32 << 20

// completionAsStream turns a plain chat.completion body (what servers that
// ignore "stream": true send) into the SSE stream go-openai expects: one
// chunk whose deltas are the messages, then [DONE]. It reports false when
// body is not a completion.
func completionAsStream(body []byte) ([]byte, bool) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return nil, false
	}
	choices, ok := m["choices"].([]any)
	if !ok {
		return nil, false
	}
	for _, c := range choices {
		ch, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		msg, _ := ch["message"].(map[string]any)
		if msg == nil {
			msg = map[string]any{}
		}
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, tc := range calls {
				if tcm, ok := tc.(map[string]any); ok {
					if _, has := tcm["index"]; !has {
						tcm["index"] = i
					}
				}
			}
		}
		delete(ch, "message")
		ch["delta"] = msg
		if _, has := ch["finish_reason"]; !has || ch["finish_reason"] == nil {
			ch["finish_reason"] = "stop"
		}
	}
	m["object"] = "chat.completion.chunk"
	chunk, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	var out bytes.Buffer
	out.WriteString("data: ")
	out.Write(chunk)
	out.WriteString("\n\ndata: [DONE]\n\n")
	return out.Bytes(), true
}

// plainCompletion reports a successful response that is a JSON document
// rather than an event stream.
func plainCompletion(resp *http.Response) bool {
	if resp.StatusCode != http.StatusOK {
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// firstByteError is a server that did not start answering in time.
type firstByteError struct {
	url   string
	after time.Duration
}

func (e *firstByteError) Error() string {
	return fmt.Sprintf("the model server at %s accepted the connection but sent no response within %s (first-byte timeout; raise it for a server that loads models slowly)", e.url, e.after)
}

// notOpenAIError is a successful answer that is not an API answer: a web
// page, usually because the base URL points at a web UI or a login proxy.
type notOpenAIError struct {
	url, contentType string
}

func (e *notOpenAIError) Error() string {
	return fmt.Sprintf("not an OpenAI-compatible endpoint: got %s from %s; check the base URL (most servers serve the API under /v1)", e.contentType, e.url)
}

// lineTooLongError is an event-stream line longer than maxStreamLine.
type lineTooLongError struct{}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("the model server sent a stream line longer than %d MiB; stopped reading", maxStreamLine>>20)
}

// htmlResponse reports a 200 answer in HTML.
func htmlResponse(resp *http.Response) (string, bool) {
	if resp.StatusCode != http.StatusOK {
		return "", false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt, err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// captureDoer is the openai.HTTPDoer that records response headers, turns
// plain JSON answers into streams, refuses web pages and bounds the wait
// for the first byte of a response.
type captureDoer struct {
	c         *http.Client
	firstByte time.Duration // <= 0: no bound but the call's timeout
	baseURL   string        // redacted, for errors
}

func (d captureDoer) Do(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	var timer *time.Timer
	if d.firstByte > 0 {
		timer = time.AfterFunc(d.firstByte, cancel)
	}
	resp, err := d.c.Do(req.WithContext(ctx))
	if timer != nil && !timer.Stop() && req.Context().Err() == nil {
		cancel()
		if resp != nil {
			resp.Body.Close()
		}
		return nil, &firstByteError{url: d.baseURL, after: d.firstByte}
	}
	if err != nil {
		cancel()
		return resp, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	if ct, ok := htmlResponse(resp); ok {
		resp.Body.Close()
		return nil, &notOpenAIError{url: d.baseURL, contentType: ct}
	}
	if resp != nil {
		if c, ok := req.Context().Value(captureKey{}).(*respCapture); ok {
			c.set(resp.Header.Clone())
			if plainCompletion(resp) {
				body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxPlainCompletion))
				resp.Body.Close()
				if rerr != nil {
					return nil, rerr
				}
				if sse, ok := completionAsStream(body); ok {
					body = sse
					resp.Header.Set("Content-Type", "text/event-stream")
				}
				resp.Body = io.NopCloser(bytes.NewReader(body))
			}
			resp.Body = &doneWatcher{ReadCloser: resp.Body, capt: c}
		}
	}
	return resp, err
}
