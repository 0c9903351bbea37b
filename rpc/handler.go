package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/rpc/protocol"
)

// replyFunc sends the one reply of a request (a no-op for notifications).
// err may be any error: it is converted to a *jsonrpc2.Error at the
// boundary (connHandler).
type replyFunc func(ctx context.Context, result any, err error) error

// handlerFunc handles one incoming message. The chain is
//
//	cancelHandler -> asyncHandler -> mustReplyHandler -> Server.dispatch
//
// cancelHandler and asyncHandler run on jsonrpc2's read loop and never
// block; everything after asyncHandler runs on a goroutine per message.
type handlerFunc func(ctx context.Context, reply replyFunc, req *jsonrpc2.Request) error

// maxErrorRunes caps the message of an error reply.
const maxErrorRunes = protocol.MaxErrorMessageRunes

// connHandler adapts a handlerFunc chain to jsonrpc2.Handler. Its Handle
// runs on the read loop.
type connHandler struct {
	chain handlerFunc
	log   *slog.Logger
}

func (h *connHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	reply := func(ctx context.Context, result any, err error) error {
		if req.Notif {
			return nil
		}
		// The reply must go out even when the request was cancelled.
		ctx = context.WithoutCancel(ctx)
		if err != nil {
			e := toRPCError(req.Method, err)
			// An error may echo its input (a 15 MiB path): cut it.
			e.Message = truncate.Runes(e.Message, maxErrorRunes)
			return conn.ReplyWithError(ctx, req.ID, e)
		}
		return conn.Reply(ctx, req.ID, result)
	}
	if err := h.chain(ctx, reply, req); err != nil {
		h.log.Warn("handler failed", "method", req.Method, "error", err)
	}
}

// inflight is one request that $/cancelRequest can cancel.
type inflight struct {
	method    string
	cancel    context.CancelFunc
	cancelled atomic.Bool
	// done is closed once the request's reply was written (or could not
	// be): shutdown waits on it for the requests received before it.
	done chan struct{}
}

// stop cancels the request; it is answered with -32800.
func (fl *inflight) stop() {
	fl.cancelled.Store(true)
	fl.cancel()
}

// canceller tracks in-flight requests by id.
type canceller struct {
	mu       sync.Mutex // guards requests and shutdownSeen
	requests map[jsonrpc2.ID]*inflight
	// shutdownSeen is set when shutdown arrives on the read loop: the
	// requests read before it are still served, those after it refused.
	shutdownSeen bool
}

func (c *canceller) cancel(id jsonrpc2.ID) bool {
	c.mu.Lock()
	fl := c.requests[id]
	c.mu.Unlock()
	if fl == nil {
		return false
	}
	fl.stop()
	return true
}

// inFlight returns the requests in flight now.
func (c *canceller) inFlight() []*inflight {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*inflight, 0, len(c.requests))
	for _, fl := range c.requests {
		out = append(out, fl)
	}
	return out
}

type priorRequestsKey struct{}

type beforeShutdownKey struct{}

// receivedBeforeShutdown reports whether the request of ctx was read before
// shutdown was: its handler may start after shutdown (the queue orders
// handlers, not their checks), and it is served all the same.
func receivedBeforeShutdown(ctx context.Context) bool {
	b, _ := ctx.Value(beforeShutdownKey{}).(bool)
	return b
}

// priorRequests returns the requests that were in flight when the request
// of ctx (shutdown) arrived.
func priorRequests(ctx context.Context) []*inflight {
	prior, _ := ctx.Value(priorRequestsKey{}).([]*inflight)
	return prior
}

// cancelHandler handles $/cancelRequest before the queue, so that a cancel
// is never stuck behind the request it cancels, and gives every request a
// cancellable context. A request cancelled by the host is answered with
// -32800 whatever its handler returned.
func cancelHandler(c *canceller, log *slog.Logger, next handlerFunc) handlerFunc {
	return func(ctx context.Context, reply replyFunc, req *jsonrpc2.Request) error {
		if req.Method == protocol.MethodCancelRequest {
			var p protocol.CancelParams
			if req.Params != nil {
				_ = json.Unmarshal(*req.Params, &p)
			}
			var id jsonrpc2.ID
			if len(p.ID) == 0 || json.Unmarshal(p.ID, &id) != nil {
				log.Warn("ignoring $/cancelRequest without a valid id")
			} else if !c.cancel(id) {
				log.Debug("$/cancelRequest for a request that is not in flight", "id", id.String())
			}
			return reply(ctx, nil, nil)
		}
		if req.Notif {
			return next(ctx, reply, req)
		}
		if req.Method == protocol.MethodShutdown {
			// Taken on the read loop, so it holds exactly the requests
			// received before shutdown.
			ctx = context.WithValue(ctx, priorRequestsKey{}, c.inFlight())
			c.mu.Lock()
			c.shutdownSeen = true
			c.mu.Unlock()
		} else {
			c.mu.Lock()
			before := !c.shutdownSeen
			c.mu.Unlock()
			ctx = context.WithValue(ctx, beforeShutdownKey{}, before)
		}
		ctx, cancel := context.WithCancel(ctx)
		fl := &inflight{method: req.Method, cancel: cancel, done: make(chan struct{})}
		c.mu.Lock()
		if _, dup := c.requests[req.ID]; dup {
			c.mu.Unlock()
			cancel()
			return reply(ctx, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: id %s is already in use by a request in flight", req.ID)})
		}
		c.requests[req.ID] = fl
		c.mu.Unlock()
		wrapped := func(rctx context.Context, result any, err error) error {
			c.mu.Lock()
			if c.requests[req.ID] == fl {
				delete(c.requests, req.ID)
			}
			c.mu.Unlock()
			defer close(fl.done)
			defer cancel()
			if fl.cancelled.Load() {
				err = cancelledError(req.Method, result)
			}
			return reply(rctx, result, err)
		}
		return next(ctx, wrapped, req)
	}
}

// asyncHandler runs each message on its own goroutine, in arrival order:
// a message starts once the one before it has finished or released the
// queue. Slow methods release the queue as soon as they start, so they run
// concurrently with everything after them, while notifications and quick
// requests keep their order. Handle is called from the read loop only, so
// next needs no lock.
type asyncQueue struct {
	next chan struct{}
	wg   *sync.WaitGroup
	slow func(method string) bool
	log  *slog.Logger

	// mu orders wg.Add against close: once closed, no handler starts, so
	// waiting on wg after close cannot race with a late message from the
	// read loop (which may outlive Serve's select when the host is gone).
	mu     sync.Mutex
	closed bool
}

// close stops the queue from starting handlers; messages that arrive
// afterwards are dropped (the connection is going away).
func (q *asyncQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

func asyncHandler(q *asyncQueue, next handlerFunc) handlerFunc {
	q.next = make(chan struct{})
	close(q.next)
	return func(ctx context.Context, reply replyFunc, req *jsonrpc2.Request) error {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			q.log.Debug("dropping a message that arrived during shutdown", "method", req.Method)
			return nil
		}
		q.wg.Add(1)
		q.mu.Unlock()
		waitFor := q.next
		release := make(chan struct{})
		q.next = release
		var once sync.Once
		releaseFn := func() { once.Do(func() { close(release) }) }
		go func() {
			defer q.wg.Done()
			defer releaseFn()
			<-waitFor
			if q.slow(req.Method) {
				releaseFn()
			}
			if err := next(ctx, reply, req); err != nil {
				if errors.Is(err, jsonrpc2.ErrClosed) {
					// The host closed the connection (EOF, exit) while the
					// request ran: there is nobody left to answer.
					q.log.Debug("reply not sent: the connection is closed", "method", req.Method)
				} else {
					q.log.Warn("reply failed", "method", req.Method, "error", err)
				}
			}
		}()
		return nil
	}
}

// mustReplyHandler makes sure every request gets exactly one reply, and
// turns a panic in a handler into a -32603 reply so the server keeps
// serving. Every recovered panic is counted in panics: it is a bug, and
// tests fail on it (Server.Panics).
func mustReplyHandler(log *slog.Logger, panics *atomic.Int64, next handlerFunc) handlerFunc {
	return func(ctx context.Context, reply replyFunc, req *jsonrpc2.Request) (err error) {
		var replied atomic.Bool
		once := func(ctx context.Context, result any, rerr error) error {
			if !replied.CompareAndSwap(false, true) {
				log.Error("second reply dropped", "method", req.Method)
				return nil
			}
			return reply(ctx, result, rerr)
		}
		defer func() {
			if p := recover(); p != nil {
				panics.Add(1)
				log.Error("panic in handler", "method", req.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = once(ctx, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError,
					Message: fmt.Sprintf("%s: internal error: the handler panicked: %v", req.Method, p)})
				return
			}
			if !req.Notif && !replied.Load() {
				log.Error("handler returned without replying", "method", req.Method)
				err = once(ctx, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: req.Method + ": internal error: no reply"})
			}
		}()
		return next(ctx, once, req)
	}
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
