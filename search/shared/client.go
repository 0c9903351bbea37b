package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/search"
)

// following is the role of a process that reaches the index through the
// process holding it.
type following struct {
	x    *Index
	conn *jsonrpc2.Conn
	info helloResult

	next atomic.Int64
	// mu guards sinks: the progress of the calls in flight, by token.
	mu    sync.Mutex
	sinks map[int64]*sink

	closeOnce sync.Once
}

// sink receives the progress notifications of one call.
type sink struct {
	fn    Progress
	heard atomic.Int64 // unix nanoseconds of the last notification
}

// helloTimeout bounds the dial and the hello of a connection: a holder
// that accepts but does not answer is as good as none.
const helloTimeout = 5 * time.Second

// follow connects to the process holding the index.
func (x *Index) follow(ctx context.Context) (*following, error) {
	f := &following{x: x, sinks: map[int64]*sink{}}
	conn, res, err := connect(ctx, x.opts.Socket, min(helloTimeout, x.opts.CallTimeout), helloParams{
		Protocol: protocolVersion, Version: x.opts.Version, PID: os.Getpid(), FrontEnd: x.opts.FrontEnd, Vault: x.v.Root(),
	}, f, x.log)
	if err != nil {
		return nil, err
	}
	f.conn, f.info = conn, res
	if res.Protocol != protocolVersion {
		conn.Close()
		return nil, fmt.Errorf("%w: pid %d (%s) speaks version %d of the index protocol, this one %d: restart it with this vault-agent",
			ErrIncompatible, res.PID, res.Version, res.Protocol, protocolVersion)
	}
	if !sameFolder(res.Vault, x.v.Root()) {
		conn.Close()
		return nil, fmt.Errorf("%w: the index %s is the index of the vault %s (held by pid %d), not of %s; pass another --index",
			ErrIncompatible, x.opts.Path, res.Vault, res.PID, x.v.Root())
	}
	if emb := x.opts.Embedder; emb != nil && emb.Model() != res.EmbedModel {
		has := "none"
		if res.EmbedModel != "" {
			has = fmt.Sprintf("%q", res.EmbedModel)
		}
		x.log.Warn("semantic search is answered by the process holding the index, with its embedding model", "holder", res.PID, "frontEnd", res.FrontEnd, "its model", has, "this model", emb.Model())
	}
	x.log.Debug("reaching the index through the process holding it", "holder", res.PID, "frontEnd", res.FrontEnd, "index", x.opts.Path)
	x.mu.Lock()
	closed := x.closed
	if !closed {
		x.wg.Add(1)
	}
	x.mu.Unlock()
	if closed {
		conn.Close()
		return nil, search.ErrClosed
	}
	go func() {
		defer x.wg.Done()
		select {
		case <-conn.DisconnectNotify():
			x.lost(f)
		case <-x.bg.Done():
		}
	}()
	return f, nil
}

// connect dials the socket and says hello; h handles what the holder
// sends (nil: nothing is expected).
func connect(ctx context.Context, socket string, timeout time.Duration, hello helloParams, h jsonrpc2.Handler, log *slog.Logger) (*jsonrpc2.Conn, helloResult, error) {
	var res helloResult
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nc, err := dialSocket(dctx, socket)
	if err != nil {
		return nil, res, err
	}
	if h == nil {
		h = jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil })
	}
	conn := jsonrpc2.NewConn(context.WithoutCancel(ctx), jsonrpc2.NewBufferedStream(writeDeadline(nc), jsonrpc2.VSCodeObjectCodec{}), h, jsonrpc2.SetLogger(rpcLogger{log}))
	if err := conn.Call(dctx, methodHello, hello, &res); err != nil {
		conn.Close()
		if dctx.Err() != nil {
			return nil, res, fmt.Errorf("no answer from %s in %s", socket, timeout)
		}
		return nil, res, fmt.Errorf("hello to %s: %w", socket, err)
	}
	return conn, res, nil
}

// sameFolder reports whether a and b are one folder, symbolic links
// resolved.
func sameFolder(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Handle receives the holder's notifications, on the connection's read
// loop: it must not block.
func (f *following) Handle(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if !req.Notif {
		_ = conn.ReplyWithError(context.Background(), req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no such method: " + req.Method})
		return
	}
	if req.Params == nil {
		return
	}
	switch req.Method {
	case methodProgress:
		var p progressParams
		if json.Unmarshal(*req.Params, &p) != nil {
			return
		}
		f.mu.Lock()
		s := f.sinks[p.Token]
		f.mu.Unlock()
		if s == nil {
			return
		}
		s.heard.Store(time.Now().UnixNano())
		if s.fn != nil {
			s.fn(p.Done, p.Total, p.Phase)
		}
	case methodChanged:
		var p changedParams
		if json.Unmarshal(*req.Params, &p) != nil {
			return
		}
		changes := make([]search.NoteChange, len(p.Changes))
		for i, c := range p.Changes {
			changes[i] = search.NoteChange{Path: c.Path, Kind: c.Kind}
		}
		f.x.feeds.deliver(changes)
	}
}

// call makes one call to the holder. It fails with errConnLost when the
// connection closes first, with ErrNoAnswer when the holder does not
// answer within the call timeout (for a long call: is silent that long),
// and with the holder's error, its sentinels kept, when the operation
// failed there.
func (f *following) call(ctx context.Context, method string, params, result any, long bool, progress Progress) error {
	var opts []jsonrpc2.CallOption
	var s *sink
	if long || progress != nil {
		tok := f.next.Add(1)
		s = &sink{fn: progress}
		s.heard.Store(time.Now().UnixNano())
		f.mu.Lock()
		f.sinks[tok] = s
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.sinks, tok)
			f.mu.Unlock()
		}()
		opts = append(opts, jsonrpc2.Meta(callMeta{Token: tok}))
	}
	w, err := f.conn.DispatchCall(ctx, method, params, opts...)
	if err != nil {
		return fmt.Errorf("%w: %v", errConnLost, err)
	}
	timeout := f.x.opts.CallTimeout
	for {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		err = w.Wait(wctx, result)
		cancel()
		var je *jsonrpc2.Error
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if long {
				if silent := time.Since(time.Unix(0, s.heard.Load())); silent < timeout {
					continue
				}
			}
			return fmt.Errorf("%w: pid %d (%s) did not answer %s within %s; it may be hung (vault-agent status shows it), or stop it to let another process take the index over",
				ErrNoAnswer, f.info.PID, f.info.FrontEnd, method, timeout)
		case errors.As(err, &je):
			return fromWire(je)
		case errors.Is(err, jsonrpc2.ErrClosed):
			return errConnLost
		default:
			return fmt.Errorf("%s: %w", method, err)
		}
	}
}

func (f *following) close() error {
	f.closeOnce.Do(func() { _ = f.conn.Close() })
	return nil
}

// Inspect asks the process serving an index on socket who it is and how
// the index is, for `vault-agent status`. It fails when no process serves
// there.
func Inspect(ctx context.Context, socket string, timeout time.Duration) (Status, error) {
	var st Status
	if !socketsSupported {
		return st, errNoSockets
	}
	conn, _, err := connect(ctx, socket, timeout, helloParams{Protocol: protocolVersion, PID: os.Getpid(), Inspect: true}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return st, err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := conn.Call(cctx, opHolder.method, none{}, &st); err != nil {
		return st, fmt.Errorf("ask %s: %w", socket, err)
	}
	return st, nil
}
