package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/search"
)

// server serves the holder's index on the socket: every connection is one
// process of the vault (or a `vault-agent status` looking).
type server struct {
	h  *holding
	ln net.Listener

	// mu guards peers and closed.
	mu     sync.Mutex
	peers  map[*peer]struct{}
	closed bool
	wg     sync.WaitGroup
}

// peer is one connected process.
type peer struct {
	s    *server
	conn *jsonrpc2.Conn
	// hello is what the process said of itself; nil before its hello.
	hello atomicHello

	// mu guards pending: the notes changed since the last notification
	// sent to it, coalesced as a Changes subscription does.
	mu      sync.Mutex
	pending map[string]search.ChangeKind
	wake    chan struct{}
}

type atomicHello struct {
	mu sync.Mutex
	p  *helloParams
}

func (a *atomicHello) get() *helloParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.p
}

func (a *atomicHello) set(p *helloParams) {
	a.mu.Lock()
	a.p = p
	a.mu.Unlock()
}

// serve listens on the socket and serves the holder's index there.
func serve(h *holding) (*server, error) {
	ln, err := listenSocket(h.x.opts.Socket)
	if err != nil {
		return nil, err
	}
	s := &server{h: h, ln: ln, peers: map[*peer]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		if err := checkPeer(nc); err != nil {
			s.h.x.log.Warn("refused a connection to the index socket", "error", err)
			nc.Close()
			continue
		}
		p := &peer{s: s, pending: map[string]search.ChangeKind{}, wake: make(chan struct{}, 1)}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		// The connection is made before the peer is registered, under
		// the lock: close reads p.conn of every registered peer.
		p.conn = jsonrpc2.NewConn(s.h.ctx, jsonrpc2.NewBufferedStream(writeDeadline(nc), jsonrpc2.VSCodeObjectCodec{}), p, jsonrpc2.SetLogger(rpcLogger{s.h.x.log}))
		s.peers[p] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go p.run()
	}
}

// run sends the peer its change notifications until it disconnects.
func (p *peer) run() {
	defer p.s.wg.Done()
	defer func() {
		p.s.mu.Lock()
		delete(p.s.peers, p)
		p.s.mu.Unlock()
	}()
	for {
		select {
		case <-p.conn.DisconnectNotify():
			return
		case <-p.wake:
		}
		p.mu.Lock()
		pending := p.pending
		p.pending = map[string]search.ChangeKind{}
		p.mu.Unlock()
		if len(pending) == 0 {
			continue
		}
		params := changedParams{Changes: make([]change, 0, len(pending))}
		for path, kind := range pending {
			params.Changes = append(params.Changes, change{Path: path, Kind: kind})
		}
		sort.Slice(params.Changes, func(i, j int) bool { return params.Changes[i].Path < params.Changes[j].Path })
		if err := p.conn.Notify(context.Background(), methodChanged, params); err != nil {
			p.conn.Close() // a process that does not read is dropped; it reconnects
		}
	}
}

// Handle answers one request of the peer on a goroutine of its own (the
// requests of a process are independent), which close waits for.
func (p *peer) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		return
	}
	s := p.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		res, err := p.handle(ctx, conn, req)
		if err != nil {
			_ = conn.ReplyWithError(context.Background(), req.ID, toWire(err))
			return
		}
		_ = conn.Reply(context.Background(), req.ID, res)
	}()
}

func (p *peer) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var raw json.RawMessage
	if req.Params != nil {
		raw = *req.Params
	}
	h := p.s.h
	if req.Method == methodHello {
		var hello helloParams
		if err := json.Unmarshal(raw, &hello); err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", methodHello, err)}
		}
		p.hello.set(&hello)
		if !hello.Inspect {
			h.x.log.Debug("a process reaches the index through this one", "pid", hello.PID, "frontEnd", hello.FrontEnd)
		}
		res := helloResult{Protocol: protocolVersion, Version: h.x.opts.Version, PID: os.Getpid(), FrontEnd: h.x.opts.FrontEnd,
			Vault: h.x.v.Root(), Created: h.ix.Created()}
		if h.sem != nil {
			res.EmbedModel = h.sem.Model()
		}
		return res, nil
	}
	if p.hello.get() == nil {
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "the first request must be " + methodHello}
	}
	run := handlers[req.Method]
	if run == nil {
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no such method: " + req.Method}
	}
	var meta callMeta
	if req.Meta != nil {
		_ = json.Unmarshal(*req.Meta, &meta)
	}
	var progress Progress
	if meta.Token != 0 {
		r := &reporter{conn: conn, last: progressParams{Token: meta.Token}}
		stop := r.heartbeat()
		defer stop()
		progress = r.report
	}
	return run(ctx, h, raw, progress)
}

// broadcast queues changes for every connected process that follows the
// index, without waiting for any of them.
func (s *server) broadcast(changes []search.NoteChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.peers {
		if hello := p.hello.get(); hello == nil || hello.Inspect {
			continue
		}
		p.mu.Lock()
		for _, c := range changes {
			p.pending[c.Path] = mergeKind(p.pending[c.Path], c.Kind)
			if p.pending[c.Path] == "" {
				delete(p.pending, c.Path)
			}
		}
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// clients counts the connected processes that follow the index.
func (s *server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p := range s.peers {
		if hello := p.hello.get(); hello != nil && !hello.Inspect {
			n++
		}
	}
	return n
}

// close stops listening (removing the socket) and closes every connection,
// which tells the connected processes that the holder is going.
func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	peers := make([]*peer, 0, len(s.peers))
	for p := range s.peers {
		peers = append(peers, p)
	}
	s.mu.Unlock()
	_ = s.ln.Close()
	for _, p := range peers {
		_ = p.conn.Close()
	}
	s.wg.Wait()
}

// reporter sends the progress notifications of one long call: at most ten
// a second, the last one always, and the latest again every second while
// the call runs, so that the caller knows the holder is alive.
type reporter struct {
	conn *jsonrpc2.Conn
	// mu guards last and sent.
	mu   sync.Mutex
	last progressParams
	sent time.Time
}

const (
	progressEvery  = 100 * time.Millisecond
	heartbeatEvery = time.Second
)

func (r *reporter) report(done, total int, phase string) {
	r.mu.Lock()
	r.last.Done, r.last.Total, r.last.Phase = done, total, phase
	now := time.Now()
	send := now.Sub(r.sent) >= progressEvery || done == total
	if send {
		r.sent = now
	}
	p := r.last
	r.mu.Unlock()
	if send {
		_ = r.conn.Notify(context.Background(), methodProgress, p)
	}
}

func (r *reporter) heartbeat() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.mu.Lock()
				p := r.last
				r.sent = time.Now()
				r.mu.Unlock()
				if err := r.conn.Notify(context.Background(), methodProgress, p); errors.Is(err, jsonrpc2.ErrClosed) {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
