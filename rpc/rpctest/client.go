// Package rpctest drives a vault-agent JSON-RPC server like a host does:
// over pipes, to the in-process server or to the built binary. It records
// notifications and waits for them with timeouts, and it can write raw
// bytes (garbage, oversized or malformed frames) that a real client
// library would never send.
package rpctest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Error is a JSON-RPC error response.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// Response is one response message.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Notification is one notification from the server, or one request from
// it (ID set: answer it with Respond).
type Notification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	ID     json.RawMessage `json:"id,omitempty"`
}

// Client speaks JSON-RPC over a byte stream with the header or line codec.
// It is safe for concurrent use.
type Client struct {
	codec string

	wmu sync.Mutex // guards w
	w   io.WriteCloser

	nextID atomic.Int64

	mu      sync.Mutex // guards the fields below
	pending map[string]chan *Response
	notes   []Notification
	stray   []*Response // responses nobody waits for (null id: parse errors)
	order   []string    // the ids of every response, in arrival order
	changed chan struct{}
	readErr error

	done chan struct{} // closed when the server's output ended
}

// NewClient starts reading r. codec is "header" or "line".
func NewClient(r io.Reader, w io.WriteCloser, codec string) *Client {
	if codec == "" {
		codec = "header"
	}
	c := &Client{
		codec:   codec,
		w:       w,
		pending: map[string]chan *Response{},
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	go c.read(bufio.NewReader(r))
	return c
}

// Done is closed when the server closed its output.
func (c *Client) Done() <-chan struct{} { return c.done }

// ReadErr is the error that ended reading (nil for a clean EOF).
func (c *Client) ReadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

func (c *Client) read(r *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := c.readFrame(r)
		if err != nil {
			c.mu.Lock()
			if err != io.EOF {
				c.readErr = err
			}
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = map[string]chan *Response{}
			c.broadcastLocked()
			c.mu.Unlock()
			return
		}
		var probe struct {
			Method *string          `json:"method"`
			ID     json.RawMessage  `json:"id"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &probe); err != nil {
			c.mu.Lock()
			c.readErr = fmt.Errorf("server sent invalid JSON: %w: %q", err, body)
			c.mu.Unlock()
			continue
		}
		c.mu.Lock()
		if probe.Method != nil {
			c.notes = append(c.notes, Notification{Method: *probe.Method, Params: probe.Params, ID: probe.ID})
		} else {
			var resp Response
			_ = json.Unmarshal(body, &resp)
			key := string(bytes.TrimSpace(resp.ID))
			c.order = append(c.order, key)
			if ch, ok := c.pending[key]; ok {
				delete(c.pending, key)
				ch <- &resp
			} else {
				c.stray = append(c.stray, &resp)
			}
		}
		c.broadcastLocked()
		c.mu.Unlock()
	}
}

func (c *Client) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) readFrame(r *bufio.Reader) ([]byte, error) {
	if c.codec == "line" {
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				return line, nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && length < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("server sent a bad header line %q", line)
		}
		if strings.EqualFold(name, "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil {
				return nil, fmt.Errorf("server sent a bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("server sent a header block without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// Frame wraps body in the client's framing.
func (c *Client) Frame(body []byte) []byte {
	if c.codec == "line" {
		return append(append([]byte(nil), body...), '\n')
	}
	return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
}

// WriteRaw writes bytes as they are, without framing.
func (c *Client) WriteRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(b)
	return err
}

// WriteMessage frames and writes one message body.
func (c *Client) WriteMessage(body []byte) error { return c.WriteRaw(c.Frame(body)) }

// Close closes the client's output: the server sees EOF.
func (c *Client) Close() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Close()
}

// Call is a pending request.
type Call struct {
	ID     json.RawMessage
	Method string
	ch     chan *Response
}

// Start sends a request without waiting for its response.
func (c *Client) Start(method string, params any) (*Call, error) {
	id := c.nextID.Add(1)
	return c.StartWithID(json.RawMessage(strconv.FormatInt(id, 10)), method, params)
}

// StartWithID sends a request with the given id (a JSON number or string).
func (c *Client) StartWithID(id json.RawMessage, method string, params any) (*Call, error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	call := &Call{ID: id, Method: method, ch: make(chan *Response, 1)}
	c.mu.Lock()
	c.pending[string(id)] = call.ch
	c.mu.Unlock()
	if err := c.WriteMessage(body); err != nil {
		c.mu.Lock()
		delete(c.pending, string(id))
		c.mu.Unlock()
		return nil, err
	}
	return call, nil
}

// Expect registers a waiter for a response with id without sending
// anything (for requests written with WriteMessage or WriteRaw).
func (c *Client) Expect(id json.RawMessage) *Call {
	call := &Call{ID: id, ch: make(chan *Response, 1)}
	c.mu.Lock()
	c.pending[string(id)] = call.ch
	c.mu.Unlock()
	return call
}

// Wait waits for the response.
func (call *Call) Wait(ctx context.Context) (*Response, error) {
	select {
	case r, ok := <-call.ch:
		if !ok {
			return nil, fmt.Errorf("%s #%s: connection closed before the response", call.Method, call.ID)
		}
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s #%s: no response: %w", call.Method, call.ID, ctx.Err())
	}
}

// Call sends a request and decodes its result into result (which may be
// nil). An error response is returned as *Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	call, err := c.Start(method, params)
	if err != nil {
		return err
	}
	resp, err := call.Wait(ctx)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	if result != nil {
		return json.Unmarshal(resp.Result, result)
	}
	return nil
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.WriteMessage(body)
}

// Cancel sends $/cancelRequest for call.
func (c *Client) Cancel(call *Call) error {
	return c.Notify("$/cancelRequest", map[string]any{"id": call.ID})
}

// Notifications returns the notifications received so far with method
// ("" for all).
func (c *Client) Notifications(method string) []Notification {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Notification
	for _, n := range c.notes {
		if method == "" || n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// AwaitNotification waits until a notification with method for which
// match returns true has arrived (match may be nil), and returns the first
// such one, including ones received before the call.
func (c *Client) AwaitNotification(ctx context.Context, method string, match func(params json.RawMessage) bool) (Notification, error) {
	seen := 0
	for {
		c.mu.Lock()
		for _, n := range c.notes[seen:] {
			if n.Method == method && (match == nil || match(n.Params)) {
				c.mu.Unlock()
				return n, nil
			}
		}
		seen = len(c.notes)
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-c.done:
			c.mu.Lock()
			n := len(c.notes)
			c.mu.Unlock()
			if n == seen {
				return Notification{}, fmt.Errorf("connection closed while waiting for %s", method)
			}
		case <-ctx.Done():
			return Notification{}, fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// ResponseOrder returns the ids (as JSON text: 1, "a", null) of the
// responses received so far, in the order they arrived.
func (c *Client) ResponseOrder() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.order...)
}

// AwaitStray waits for the n-th (1-based) response that matched no
// request: the answers to parse errors and refused messages.
func (c *Client) AwaitStray(ctx context.Context, n int) (*Response, error) {
	for {
		c.mu.Lock()
		if len(c.stray) >= n {
			r := c.stray[n-1]
			c.mu.Unlock()
			return r, nil
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-c.done:
			c.mu.Lock()
			ok := len(c.stray) >= n
			c.mu.Unlock()
			if !ok {
				return nil, errors.New("connection closed while waiting for an error response")
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for an error response: %w", ctx.Err())
		}
	}
}

// Respond answers a request the server sent (a Notification with an ID)
// with result, or with an error when rpcErr is set.
func (c *Client) Respond(id json.RawMessage, result any, rpcErr *Error) error {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.WriteMessage(body)
}
