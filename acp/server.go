package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/service"
)

// Config configures Serve.
type Config struct {
	// Backend opens the vault each session's cwd names.
	Backend Backend
	// Defaults are the settings of a new session (mode, planner, max
	// iterations, timeout), over the vault's.
	Defaults service.Settings
	Logger   *slog.Logger
	// Version is reported as agentInfo.version.
	Version string
	// ShutdownTimeout bounds the wait for running prompt turns when the
	// client goes away (default 10s).
	ShutdownTimeout time.Duration
	// Home is the user's home folder: a session on it is warned that it
	// may not be the vault meant.
	Home string
}

// Serve speaks ACP on in and out until in ends or ctx is done, then cancels
// every running turn, waits for them (bounded) and closes the backend.
// Nothing but protocol messages is written to out.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	cfg.Defaults = sessionDefaults(cfg.Defaults)
	log := cfg.Logger.With("component", "acp")
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	s := &server{cfg: cfg, log: log, sessions: map[sdk.SessionId]*session{}, closing: make(chan struct{})}
	conn := sdk.NewAgentSideConnection(s, w, pr)
	conn.SetLogger(log)
	s.conn = conn
	go filterInput(in, pw, w, log)

	select {
	case <-conn.Done():
		log.Info("the client closed the connection")
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	}
	pr.CloseWithError(io.EOF)
	s.mu.Lock()
	close(s.closing) // under mu, so no turn starts after the Wait below
	s.mu.Unlock()
	s.stopAll()
	done := make(chan struct{})
	go func() { s.turns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.ShutdownTimeout):
		log.Warn("prompt turns still running at shutdown", "waited", cfg.ShutdownTimeout)
	}
	return cfg.Backend.Close()
}

// server implements the SDK's Agent interface. The SDK runs each request on
// its own goroutine and notifications (session/cancel) one after another.
type server struct {
	cfg  Config
	log  *slog.Logger
	conn *sdk.AgentSideConnection
	// closing is closed when the connection ends; turns waits for the
	// running prompt turns.
	closing chan struct{}
	turns   sync.WaitGroup

	// mu guards the fields below.
	mu          sync.Mutex
	initialized bool
	clientFS    sdk.FileSystemCapabilities
	sessions    map[sdk.SessionId]*session
}

var (
	_ sdk.Agent = (*server)(nil)
)

// session is one ACP session: a vault, settings and a conversation.
type session struct {
	id    sdk.SessionId
	cwd   string // the vault folder as the client named it
	vault Vault
	// turn admits one prompt turn at a time.
	turn chan struct{}

	// mu guards the fields below.
	mu       sync.Mutex
	settings service.Settings
	// warning, when set, is said in the session's first update: the
	// folder does not look like a vault.
	warning string
	history []llm.Message
	runs    int
	active  *activeTurn
	closed  bool

	releaseOnce sync.Once
}

// activeTurn is the running prompt turn of a session.
type activeTurn struct {
	// stop stops the turn's run (service.RunRequest.Stop); stopOnce
	// guards the close.
	stop      chan struct{}
	stopOnce  sync.Once
	cancelled bool
}

// maxHistory caps the messages of earlier turns kept for the next one.
const maxHistory = 20

func (s *server) session(method string, id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized {
		return nil, rpcError(codeInvalidRequest, "%s: send initialize first", method)
	}
	ss, ok := s.sessions[id]
	if !ok {
		return nil, unknownSession(method, id)
	}
	return ss, nil
}

// recoverTo turns a panic in a handler into an internal error, so one bad
// request never ends the process.
func (s *server) recoverTo(method string, err *error) {
	if r := recover(); r != nil {
		s.log.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
		*err = rpcError(codeInternal, "%s: internal error: %v", method, r)
	}
}

// Initialize negotiates protocol version 1 and advertises what vault-agent
// supports: text, resource links and embedded resources in prompts (no
// images or audio), session/close, and no session loading.
func (s *server) Initialize(ctx context.Context, p sdk.InitializeRequest) (res sdk.InitializeResponse, err error) {
	defer s.recoverTo("initialize", &err)
	s.mu.Lock()
	s.initialized = true
	s.clientFS = p.ClientCapabilities.Fs
	s.mu.Unlock()
	client := "unknown client"
	if p.ClientInfo != nil {
		client = strings.TrimSpace(p.ClientInfo.Name + " " + p.ClientInfo.Version)
	}
	if p.ProtocolVersion != sdk.ProtocolVersionNumber {
		s.log.Warn("the client asked for another protocol version; answering with the one vault-agent speaks", "asked", p.ProtocolVersion, "answered", sdk.ProtocolVersionNumber)
	}
	s.log.Info("initialized", "client", client, "readTextFile", p.ClientCapabilities.Fs.ReadTextFile)
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:         false,
			PromptCapabilities:  sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
		},
		AgentInfo:   &sdk.Implementation{Name: "vault-agent", Title: sdk.Ptr("vault-agent"), Version: s.cfg.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate fails: vault-agent offers no auth methods (model keys come
// from the environment).
func (s *server) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, invalidParams("authenticate: vault-agent needs no authentication and offers no auth methods (got methodId %q); set OPENAI_API_KEY in the agent's environment to use a model that needs a key", p.MethodId)
}

// NewSession opens the vault the cwd names (indexing it on first use) and
// starts a session on it.
func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (res sdk.NewSessionResponse, err error) {
	const method = "session/new"
	defer s.recoverTo(method, &err)
	s.mu.Lock()
	ready := s.initialized
	s.mu.Unlock()
	if !ready {
		return res, rpcError(codeInvalidRequest, "%s: send initialize first", method)
	}
	if !filepath.IsAbs(p.Cwd) {
		return res, invalidParams("%s: cwd must be the absolute path of the vault folder, got %q", method, p.Cwd)
	}
	if len(p.McpServers) > 0 {
		names := make([]string, 0, len(p.McpServers))
		for _, m := range p.McpServers {
			names = append(names, mcpName(m))
		}
		s.log.Warn("session/new: MCP servers are not used by vault-agent; ignored", "servers", strings.Join(names, ", "))
	}
	if len(p.AdditionalDirectories) > 0 {
		s.log.Warn("session/new: additional directories are not used; the session's vault is its cwd", "ignored", strings.Join(p.AdditionalDirectories, ", "))
	}
	settings := s.cfg.Defaults
	unknown, err := applyMeta(&settings, p.Meta)
	if err != nil {
		return res, invalidParams("%s: %v", method, err)
	}
	if len(unknown) > 0 {
		s.log.Warn("session/new: unknown vault-agent settings ignored", "keys", strings.Join(unknown, ", "))
	}
	cwd := filepath.Clean(p.Cwd)
	v, err := s.cfg.Backend.Open(ctx, cwd)
	if err != nil {
		return res, toRequestError(method, err)
	}
	ss := &session{id: sdk.SessionId("sess_" + randomHex()), cwd: cwd, vault: v, settings: settings, turn: make(chan struct{}, 1),
		warning: s.folderWarning(cwd)}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	s.log.Info("session started", "session", ss.id, "vault", cwd, "mode", settings.Mode)
	return sdk.NewSessionResponse{
		SessionId:     ss.id,
		Modes:         modeState(settings.Mode),
		ConfigOptions: configOptions(settings),
	}, nil
}

// folderWarning says, for a session on the folder cwd that does not look
// like a vault (no .obsidian folder and few notes, or the home folder), what
// it is and how to open the vault instead; "" for a vault.
func (s *server) folderWarning(cwd string) string {
	sig, err := service.InspectFolder(cwd, s.cfg.Home)
	if err != nil || !sig.Doubtful() {
		return ""
	}
	s.log.Warn("the session's folder does not look like a vault", "folder", cwd, "obsidian", sig.Obsidian, "notes", sig.Notes, "home", sig.Home)
	return fmt.Sprintf("Note: %s may not be the vault you meant: %s. vault-agent searches the session's folder; "+
		"to search your notes, open the vault's folder as the project (the session's working directory).\n\n", cwd, sig.Describe())
}

func mcpName(m sdk.McpServer) string {
	switch {
	case m.Stdio != nil:
		return m.Stdio.Name
	case m.Http != nil:
		return m.Http.Name
	case m.Sse != nil:
		return m.Sse.Name
	}
	return "(unnamed)"
}

// SetSessionMode switches the session's agent loop; it applies from the
// next prompt turn on.
func (s *server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (res sdk.SetSessionModeResponse, err error) {
	const method = "session/set_mode"
	defer s.recoverTo(method, &err)
	ss, err := s.session(method, p.SessionId)
	if err != nil {
		return res, err
	}
	st, err := ss.update(func(st *service.Settings) error { return setOption(st, optMode, string(p.ModeId)) })
	if err != nil {
		return res, invalidParams("%s: %v", method, err)
	}
	s.notifySettings(ss, st, true)
	return res, nil
}

// SetSessionConfigOption sets the mode, the planner or the max iterations.
func (s *server) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (res sdk.SetSessionConfigOptionResponse, err error) {
	const method = "session/set_config_option"
	defer s.recoverTo(method, &err)
	var sid sdk.SessionId
	var id, value string
	switch {
	case p.ValueId != nil:
		sid, id, value = p.ValueId.SessionId, string(p.ValueId.ConfigId), string(p.ValueId.Value)
	case p.Boolean != nil:
		sid, id, value = p.Boolean.SessionId, string(p.Boolean.ConfigId), fmt.Sprint(p.Boolean.Value)
	default:
		return res, invalidParams("%s: a sessionId, configId and value are required", method)
	}
	ss, err := s.session(method, sid)
	if err != nil {
		return res, err
	}
	st, err := ss.update(func(st *service.Settings) error { return setOption(st, id, value) })
	if err != nil {
		return res, invalidParams("%s: %v", method, err)
	}
	if id == optMode {
		s.notifySettings(ss, st, false)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: configOptions(st)}, nil
}

// notifySettings tells the client about a mode change in both vocabularies:
// current_mode_update for clients that use session modes, and, when the
// change came through session/set_mode, config_option_update for clients
// that use config options.
func (s *server) notifySettings(ss *session, st service.Settings, options bool) {
	s.send(ss.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{SessionUpdate: "current_mode_update", CurrentModeId: sdk.SessionModeId(st.Mode)}})
	if options {
		s.send(ss.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: configOptions(st)}})
	}
}

func (ss *session) update(f func(*service.Settings) error) (service.Settings, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := ss.settings
	if err := f(&st); err != nil {
		return ss.settings, err
	}
	ss.settings = st
	return st, nil
}

// Cancel stops the session's running turn; its session/prompt then answers
// with stopReason "cancelled". Other sessions go on.
func (s *server) Cancel(ctx context.Context, p sdk.CancelNotification) (err error) {
	defer s.recoverTo("session/cancel", &err)
	s.mu.Lock()
	ss := s.sessions[p.SessionId]
	s.mu.Unlock()
	if ss == nil {
		s.log.Debug("session/cancel for an unknown session", "session", p.SessionId)
		return nil
	}
	ss.cancel()
	return nil
}

// cancel stops the session's running turn, if any.
func (ss *session) cancel() {
	ss.mu.Lock()
	t := ss.active
	ss.mu.Unlock()
	if t != nil {
		ss.cancelTurn(t)
	}
}

// cancelTurn stops the turn t, which then answers "cancelled".
func (ss *session) cancelTurn(t *activeTurn) {
	ss.mu.Lock()
	t.cancelled = true
	ss.mu.Unlock()
	t.end()
}

// end stops the turn's run.
func (t *activeTurn) end() { t.stopOnce.Do(func() { close(t.stop) }) }

// CloseSession cancels the session's turn and forgets the session.
func (s *server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (res sdk.CloseSessionResponse, err error) {
	const method = "session/close"
	defer s.recoverTo(method, &err)
	ss, err := s.session(method, p.SessionId)
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	delete(s.sessions, p.SessionId)
	s.mu.Unlock()
	ss.mu.Lock()
	ss.closed = true
	busy := ss.active != nil
	ss.mu.Unlock()
	ss.cancel()
	if !busy {
		ss.release() // else the turn releases it as it ends
	}
	return res, nil
}

// release gives the session's vault back (Vault.Release), once.
func (ss *session) release() { ss.releaseOnce.Do(ss.vault.Release) }

// ListSessions is not offered (sessionCapabilities.list is not advertised).
func (s *server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, rpcError(codeMethodNotFound, "session/list is not supported: vault-agent keeps sessions in memory only")
}

// ResumeSession is not offered (sessionCapabilities.resume is not
// advertised).
func (s *server) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, rpcError(codeMethodNotFound, "session/resume is not supported: vault-agent keeps sessions in memory only; start a new session")
}

// send sends one session update. Sends are not tied to a request's context:
// a cancelled turn still reports how it ended.
func (s *server) send(id sdk.SessionId, u sdk.SessionUpdate) {
	if err := s.conn.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
		s.log.Debug("session/update not sent", "session", id, "error", err)
	}
}

// stopAll cancels every running turn (the connection ended).
func (s *server) stopAll() {
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.cancel()
	}
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
