package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/service"
)

// Config configures a Server.
type Config struct {
	// Vault is the default vault folder, used when initialize has none.
	Vault string
	// Index is the default index folder; "" means the per-vault default
	// (service.Env.DefaultIndexPath).
	Index string
	// Codec is CodecHeader (default) or CodecLine.
	Codec string
	// MaxMessageBytes caps one incoming message (default 16 MiB). Larger
	// messages are skipped without being buffered and answered with -32600.
	MaxMessageBytes int64
	// Logger receives the server's logs (the command points it at stderr).
	// Warnings and errors are also forwarded to the host as
	// window/logMessage.
	Logger *slog.Logger
	// Version is reported in serverInfo.
	Version string
	// Settings are the defaults that initialize's settings override.
	Settings service.Settings
	// Env is the environment models and paths are made from (nil: the
	// process environment). Its API key never appears in logs, errors or
	// notifications.
	Env *service.Env
	// Model, when set, is the agent's default model instead of the one the
	// provider settings describe (tests, embedding). A run whose settings
	// name a provider, model or baseUrl still gets its own.
	Model llm.Model
	// InMemoryIndex keeps the index in memory instead of on disk (tests,
	// benchmarks).
	InMemoryIndex bool
	// LockWait is how long initialize waits for an index that another
	// process holds (a host restarting the sidecar) before refusing
	// (default 5s; negative: no wait).
	LockWait time.Duration
	// ShutdownTimeout bounds how long Serve waits for handlers and runs
	// to finish once the connection ends (default 10s).
	ShutdownTimeout time.Duration
}

// Server states.
const (
	stateNew = iota
	stateInitializing
	stateReady
	stateShutdown
)

// Server is the JSON-RPC server of one host connection. Create it with New
// and call Serve once. It implements protocol.Server: the methods of the
// protocol table dispatch to its typed methods.
type Server struct {
	cfg Config
	// log is the server's own logger; shared is handed to the packages the
	// server drives. Both forward warnings to the host.
	log    *slog.Logger
	shared *slog.Logger
	host   *hostLog
	// client sends notifications to the host.
	client protocol.Client

	served atomic.Bool
	// panics counts the handler panics recovered (see Panics).
	panics atomic.Int64

	// serveCtx lives as long as Serve; runsCtx, the context of every agent
	// run, derives from it until shutdown. Both are set before the
	// connection starts reading, never changed after.
	serveCtx   context.Context
	runsCtx    context.Context
	cancelRuns context.CancelFunc
	conn       *jsonrpc2.Conn

	cancels canceller
	queue   asyncQueue
	wg      sync.WaitGroup // handler goroutines

	exitOnce sync.Once
	exitCh   chan struct{}

	// mu guards the fields below.
	mu      sync.Mutex
	state   int
	opening *service.Opening // while initialize reconciles the index
	// progressHook, when set, sees the progress of initialize's index
	// before the host does, on the indexing goroutine (tests).
	progressHook func(done, total int)
	// openHook, when set, runs as initialize starts opening the vault
	// (tests only).
	openHook    func()
	gotShutdown bool
	svc         *service.Service // the open vault, once initialized

	// testHook, when set, is called by dispatch for methods whose name
	// starts with "test/" (tests only: panics, slow quick requests).
	testHook func(ctx context.Context, method string) (any, error)
	// beforeCall, when set, is called by dispatch before a method of the
	// table runs (tests only: a slow work method).
	beforeCall func(ctx context.Context, method string)
}

var _ protocol.Server = (*Server)(nil)

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = protocol.DefaultMaxMessageBytes
	}
	if cfg.Codec == "" {
		cfg.Codec = CodecHeader
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	switch {
	case cfg.LockWait == 0:
		cfg.LockWait = 5 * time.Second
	case cfg.LockWait < 0:
		cfg.LockWait = 0
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	s := &Server{
		cfg:    cfg,
		exitCh: make(chan struct{}),
	}
	s.client = protocol.NewClient(s.notify)
	s.host = newHostLog(s)
	s.shared = slog.New(teeHandler{inner: cfg.Logger.Handler(), host: s.host})
	s.log = s.shared.With("component", "rpc")
	s.cancels.requests = map[jsonrpc2.ID]*inflight{}
	return s
}

// Serve speaks JSON-RPC on in and out until the host sends exit, closes its
// end (EOF), stops reading our output, or ctx is done. It then cancels
// every request and run, waits for them (bounded by ShutdownTimeout),
// stops the watcher and closes the index.
//
// Serve returns nil after exit preceded by shutdown and on a closed
// connection, ErrExitWithoutShutdown after exit without shutdown, and an
// error when the codec is unknown or Serve was already called. Only
// protocol bytes are written to out.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.cfg.Codec != CodecHeader && s.cfg.Codec != CodecLine {
		return fmt.Errorf("rpc: unknown codec %q (want %s or %s)", s.cfg.Codec, CodecHeader, CodecLine)
	}
	if !s.served.CompareAndSwap(false, true) {
		return errors.New("rpc: Serve called twice")
	}
	serveCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.serveCtx = serveCtx
	s.runsCtx, s.cancelRuns = context.WithCancel(serveCtx)

	st := newStream(in, out, s.cfg.Codec, s.cfg.MaxMessageBytes, s.log.With("component", "rpc.stream"))
	broken := make(chan error, 1)
	st.onWriteError = func(err error) {
		select {
		case broken <- err:
		default:
		}
	}
	s.queue.wg = &s.wg
	s.queue.log = s.log
	s.queue.slow = func(method string) bool {
		m, ok := protocol.Lookup(method)
		return ok && m.Slow
	}
	chain := cancelHandler(&s.cancels, s.log,
		asyncHandler(&s.queue,
			mustReplyHandler(s.log, &s.panics, s.dispatch)))

	s.host.start()
	conn := jsonrpc2.NewConn(serveCtx, st, &connHandler{chain: chain, log: s.log},
		jsonrpc2.SetLogger(printfLogger{s.log.With("component", "jsonrpc2")}))
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	s.log.Info("serving", "codec", s.cfg.Codec, "version", s.cfg.Version)

	var result error
	select {
	case <-conn.DisconnectNotify():
		s.log.Info("host closed the connection; shutting down")
	case <-s.exitCh:
		s.mu.Lock()
		if !s.gotShutdown {
			result = ErrExitWithoutShutdown
		}
		s.mu.Unlock()
		s.log.Info("exit received", "afterShutdown", result == nil)
	case err := <-broken:
		s.log.Warn("cannot write to the host; shutting down", "error", err)
	case <-ctx.Done():
		s.log.Info("context done; shutting down", "error", ctx.Err())
	}

	// Stop everything: runs and requests see their contexts cancelled.
	cancel()
	s.stopRuns()
	s.queue.close()
	conn.Close()
	if !waitTimeout(&s.wg, s.cfg.ShutdownTimeout) {
		s.log.Error("handlers still running after the shutdown timeout; closing anyway", "timeout", s.cfg.ShutdownTimeout)
	}
	s.host.stop()
	s.closeResources()
	return result
}

// Panics returns how many panics in handlers were recovered so far. The
// server answers such a request with -32603 and keeps serving, but a panic
// is always a bug: tests assert that this stays zero.
func (s *Server) Panics() int64 { return s.panics.Load() }

// closeResources closes the open vault: its agent, watcher and index.
func (s *Server) closeResources() {
	s.mu.Lock()
	svc := s.svc
	s.svc = nil
	s.mu.Unlock()
	if svc != nil {
		if err := svc.Close(); err != nil {
			s.log.Warn("closing the vault", "error", err)
		}
	}
}

// stopRuns stops every run at its next phase boundary and cancels what
// they are waiting for.
func (s *Server) stopRuns() {
	s.mu.Lock()
	svc := s.svc
	s.mu.Unlock()
	if svc != nil && svc.Agent() != nil {
		svc.Agent().StopAll()
	}
	s.cancelRuns()
}

// open returns the open vault, or an error once the server stopped.
func (s *Server) open() (*service.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svc == nil {
		return nil, errShutDown
	}
	return s.svc, nil
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// notify sends a notification to the host; the typed protocol.Client
// (s.client) calls it. Errors (a closed connection) are logged and
// dropped: notifications are best effort.
func (s *Server) notify(ctx context.Context, method string, params any) error {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return nil
	}
	err := conn.Notify(context.WithoutCancel(ctx), method, params)
	if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		s.cfg.Logger.Debug("notification not sent", "method", method, "error", err)
	}
	return err
}

// checkState refuses requests the lifecycle does not allow. A request read
// before shutdown (early) is served even when its handler starts after
// shutdown's: shutdown promises to answer those first.
func (s *Server) checkState(method string, early bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateNew, stateInitializing:
		if method == protocol.MethodInitialize || method == protocol.MethodShutdown {
			return nil
		}
		if s.opening != nil && (method == protocol.MethodVaultStatus || method == protocol.MethodVaultSearch) {
			return nil // answered while the first index is built (indexing.go)
		}
		if s.state == stateInitializing {
			return fmt.Errorf("%w: initialize is still running; wait for its response before sending %s", errNotInitialized, method)
		}
		return fmt.Errorf("%w: send initialize with {\"vault\": \"/path/to/vault\"} before %s", errNotInitialized, method)
	case stateShutdown:
		if early && method != protocol.MethodShutdown && method != protocol.MethodInitialize {
			return nil
		}
		return fmt.Errorf("%w: %s refused after shutdown; send exit", errShutDown, method)
	}
	return nil
}

// dispatch runs a message through the protocol table: a method's entry
// decodes its params and calls its typed handler. It runs on the request's
// own goroutine (see asyncHandler).
func (s *Server) dispatch(ctx context.Context, reply replyFunc, req *jsonrpc2.Request) error {
	m, known := protocol.Lookup(req.Method)
	var unknown []string
	ctx = context.WithValue(ctx, unknownFieldsKey{}, &unknown)
	decode := func(p any) error {
		u, err := decodeParams(req.Method, req.Params, p, m.Lenient)
		unknown = u
		return err
	}
	if known && m.Notification && m.Handled() {
		// A host notification (exit) has nobody to tell about bad params,
		// so they are ignored; sent as a request, it is answered null.
		lax := func(p any) error {
			_, _ = decodeParams(req.Method, req.Params, p, true)
			return nil
		}
		_, err := m.Call(ctx, s, lax)
		if req.Notif {
			if err != nil {
				s.log.Warn("notification failed", "method", req.Method, "error", err)
			}
			return nil
		}
		return reply(ctx, nil, err)
	}
	if req.Notif {
		switch {
		case req.Method == "initialized":
			// LSP clients send it after initialize; there is nothing to do.
		case known && !m.Notification:
			s.log.Warn("request sent as a notification (no id) was ignored: add an id to get a reply", "method", req.Method)
		case !strings.HasPrefix(req.Method, "$/"):
			s.log.Warn("unknown notification ignored", "method", truncate.Runes(req.Method, 80))
		}
		return nil
	}
	if known || strings.HasPrefix(req.Method, "test/") {
		if err := s.checkState(req.Method, receivedBeforeShutdown(ctx)); err != nil {
			return reply(ctx, nil, err)
		}
	}
	if known && m.Handled() {
		if s.beforeCall != nil {
			s.beforeCall(ctx, req.Method)
		}
		res, err := m.Call(ctx, s, decode)
		return reply(ctx, res, err)
	}
	if s.testHook != nil && strings.HasPrefix(req.Method, "test/") {
		res, err := s.testHook(ctx, req.Method)
		return reply(ctx, res, err)
	}
	return reply(ctx, nil, methodNotFound(req.Method))
}

type unknownFieldsKey struct{}

// unknownFields returns the params of the request of ctx that its method
// did not know (only lenient methods accept them).
func unknownFields(ctx context.Context) []string {
	if u, _ := ctx.Value(unknownFieldsKey{}).(*[]string); u != nil {
		return *u
	}
	return nil
}

// Shutdown stops every run, refuses later requests, and replies once every
// request received before it has been answered: runs end stopped, an
// initialize in progress is cancelled (-32800), and the rest finish, or are
// cancelled once ShutdownTimeout has passed.
func (s *Server) Shutdown(ctx context.Context, _ *protocol.NoParams) (*protocol.Null, error) {
	s.mu.Lock()
	s.state = stateShutdown
	s.gotShutdown = true
	s.mu.Unlock()
	s.log.Info("shutdown received")
	prior := priorRequests(ctx)
	for _, fl := range prior {
		if fl.method == protocol.MethodInitialize {
			fl.stop() // its vault would be closed at once anyway
		}
	}
	s.stopRuns()
	if !s.awaitRequests(ctx, prior, s.cfg.ShutdownTimeout) {
		s.log.Warn("requests still running at shutdown after the timeout; cancelling them", "timeout", s.cfg.ShutdownTimeout)
		for _, fl := range prior {
			fl.stop()
		}
		if !s.awaitRequests(ctx, prior, s.cfg.ShutdownTimeout) {
			s.log.Error("requests still running after being cancelled; replying to shutdown anyway")
		}
	}
	return nil, nil
}

// awaitRequests waits until every request of reqs has been answered, for
// at most d or until ctx is done. It reports whether they all were.
func (s *Server) awaitRequests(ctx context.Context, reqs []*inflight, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, fl := range reqs {
		select {
		case <-fl.done:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Exit ends Serve.
func (s *Server) Exit(ctx context.Context, _ *protocol.NoParams) (*protocol.Null, error) {
	s.exitOnce.Do(func() { close(s.exitCh) })
	return nil, nil
}

// printfLogger adapts slog to jsonrpc2.Logger.
type printfLogger struct{ log *slog.Logger }

func (l printfLogger) Printf(format string, v ...any) {
	l.log.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// hostLog forwards warnings and errors to the host as window/logMessage,
// from its own goroutine so that logging never blocks on (or re-enters)
// the connection. Messages beyond its buffer are dropped.
type hostLog struct {
	s    *Server
	ch   chan protocol.LogMessageParams
	done chan struct{}
	// mu guards running.
	mu      sync.Mutex
	running bool
}

func newHostLog(s *Server) *hostLog {
	return &hostLog{s: s, ch: make(chan protocol.LogMessageParams, 64), done: make(chan struct{})}
}

func (h *hostLog) start() {
	h.mu.Lock()
	h.running = true
	h.mu.Unlock()
	go func() {
		defer close(h.done)
		for m := range h.ch {
			_ = h.s.client.LogMessage(context.Background(), &m)
		}
	}()
}

func (h *hostLog) send(m protocol.LogMessageParams) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return
	}
	select {
	case h.ch <- m:
	default:
	}
}

func (h *hostLog) stop() {
	h.mu.Lock()
	was := h.running
	h.running = false
	if was {
		close(h.ch)
	}
	h.mu.Unlock()
	if was {
		<-h.done
	}
}

// teeHandler logs to inner and forwards records at Warn and above to the
// host.
type teeHandler struct {
	inner slog.Handler
	host  *hostLog
	attrs []slog.Attr
}

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || t.inner.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if t.inner.Enabled(ctx, r.Level) {
		err = t.inner.Handle(ctx, r)
	}
	if r.Level >= slog.LevelWarn {
		typ := protocol.LogWarning
		if r.Level >= slog.LevelError {
			typ = protocol.LogError
		}
		var b strings.Builder
		b.WriteString(r.Message)
		add := func(a slog.Attr) bool {
			if a.Key == "component" || a.Key == "stack" {
				return true
			}
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		}
		for _, a := range t.attrs {
			add(a)
		}
		r.Attrs(add)
		t.host.send(protocol.LogMessageParams{Type: typ, Message: b.String()})
	}
	return err
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{inner: t.inner.WithAttrs(as), host: t.host, attrs: append(append([]slog.Attr(nil), t.attrs...), as...)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{inner: t.inner.WithGroup(name), host: t.host, attrs: t.attrs}
}
