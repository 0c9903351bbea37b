package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/shared"
	"github.com/vault-agent/vault-agent/service"
)

// Config configures a Server.
type Config struct {
	// Vault is the vault being opened (service.Start, with the watcher):
	// tools, resources and prompts wait for it (required).
	Vault Opening
	// Ask offers ask_vault, which runs the vault's agent (open the vault
	// with service.Options.Agent); Model describes the agent's model.
	Ask   bool
	Model ModelInfo
	// Semantic offers related_notes and search_notes' semantic and hybrid
	// modes: the vault is opened with an embedding model.
	Semantic bool
	// AllowEdits offers the edit tools (create_note, append_to_note,
	// replace_in_note, set_properties), annotated destructive so that
	// clients ask their user before each call. Off by default: read-only.
	AllowEdits bool
	// VaultName names the vault in the server's instructions, e.g. the
	// folder name.
	VaultName string
	// Version is the server version announced to clients.
	Version string
	// Logger receives the server's logs (never the protocol stream).
	Logger *slog.Logger
	// Now is the clock of time expressions; nil means time.Now.
	Now func() time.Time
	// HTTP configures ServeHTTP: a bearer token, the cap on sessions and
	// their idle timeout, the read timeouts.
	HTTP HTTP
}

// Opening is a vault being opened: *service.Opening.
type Opening interface {
	// Wait returns the open vault, reporting the progress of a first
	// indexing to progress (which may be nil) while it waits.
	Wait(ctx context.Context, progress search.ProgressFunc) (*service.Service, error)
	// Index is the vault's index, open (and searchable, with the notes it
	// holds) while its reconcile with the disk runs.
	Index() *shared.Index
}

// ModelInfo describes the agent's model.
type ModelInfo struct {
	Name string
	// Offline is true for the built-in extractive model, which never
	// touches the network.
	Offline bool
}

// Server is the MCP server of one vault. One Server may serve several
// sessions at once (over HTTP); each tool call runs on its own goroutine.
type Server struct {
	cfg Config
	log *slog.Logger
	srv *sdk.Server
	// argHints describes each tool's arguments (written while tools are
	// added, read-only after).
	argHints map[string]string

	followOnce sync.Once
	// listed is closed once follow watches the index's changes:
	// resources/list waits for it.
	listed chan struct{}
	// sessions caps the sessions over HTTP; undelivered counts the
	// notifications the SDK could not deliver (quietSDK).
	sessions    *sessions
	undelivered atomic.Int64
}

// New builds the server: tools, resources, prompts.
func New(cfg Config) *Server {
	if cfg.Vault == nil {
		panic("mcp.New: Config.Vault is nil")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "mcp")
	cfg.HTTP = cfg.HTTP.withDefaults()
	s := &Server{cfg: cfg, log: log, argHints: map[string]string{}, listed: make(chan struct{})}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "vault-agent", Title: "vault-agent", Version: version}, &sdk.ServerOptions{
		Instructions: s.instructions(),
		Logger:       slog.New(quietSDK{log.With("component", "mcp-sdk").Handler(), &s.undelivered}),
		// Subscriptions are tracked by the SDK; these only accept them.
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{},
			Prompts:   &sdk.PromptCapabilities{},
			Resources: &sdk.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
	s.sessions = &sessions{max: cfg.HTTP.MaxSessions, log: log, srv: s.srv, seen: map[*sdk.ServerSession]*sessionUse{}}
	s.srv.AddReceivingMiddleware(s.hintArguments, s.sessions.track, s.listResources)
	s.addTools()
	s.addResourceTemplate()
	s.addPrompts()
	return s
}

func (s *Server) instructions() string {
	name := s.cfg.VaultName
	if name == "" {
		name = "the person's"
	} else {
		name = fmt.Sprintf("the person's %q", name)
	}
	access := "read-only"
	if s.cfg.AllowEdits {
		access = "read and, with create_note, append_to_note, replace_in_note and set_properties, write"
	}
	text := fmt.Sprintf("Tools over %s markdown notes vault (Obsidian-style), %s. ", name, access) +
		"Find notes with search_notes (ranked, with a snippet and the chunk to read), then read_note with that chunk " +
		"(or a heading) rather than whole notes. list_notes, list_tags and notes_in_range browse; links shows a note's " +
		"links and backlinks. Cite notes by path."
	if s.cfg.Ask {
		text += " ask_vault runs vault-agent's own agent when you want a ready answer with citations."
	}
	return text
}

// Run serves one session over t (stdio: &sdk.StdioTransport{}) until the
// client disconnects or ctx ends, following the vault's changes meanwhile.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	s.startFollowing(ctx)
	return s.srv.Run(ctx, t)
}

// handler returns the Streamable HTTP handler of the server. The SDK
// refuses requests to a loopback address that name another host (DNS
// rebinding); cross-origin requests from browsers are refused too, so a web
// page cannot read the vault through a local server. With a token, every
// request must carry it.
func (s *Server) handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, &sdk.StreamableHTTPOptions{
		Logger: slog.New(quietSDK{s.log.With("component", "mcp-http").Handler(), &s.undelivered}),
		// A client that went away without closing its session does not
		// keep it long; the cap (sessions.track) bounds how many are kept.
		SessionTimeout: s.cfg.HTTP.SessionIdle,
	})
	var out http.Handler = http.NewCrossOriginProtection().Handler(h)
	if s.cfg.HTTP.Token != "" {
		out = requireToken(s.cfg.HTTP.Token, out)
	}
	return out
}

// ServeHTTP serves Streamable HTTP sessions at /mcp on ln until ctx ends.
// A listener other machines can reach needs Config.HTTP.Token.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener) error {
	if s.cfg.HTTP.Token == "" && !isLoopbackListener(ln) {
		return fmt.Errorf("serve MCP on %s: %w: a bearer token is required to serve other machines", ln.Addr(), ErrNotLoopback)
	}
	s.startFollowing(ctx)
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "vault-agent: the MCP endpoint is /mcp", http.StatusNotFound)
	})
	hs := &http.Server{
		Handler: mux,
		// A client trickling its headers or body, or keeping idle
		// connections open, holds nothing for long. There is no write
		// timeout: responses stream (notifications, a long ask_vault).
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.cfg.HTTP.ReadTimeout,
		IdleTimeout:       s.cfg.HTTP.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.With("component", "mcp-http").Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	}
}

// startFollowing starts, once, the goroutine that mirrors the index's
// changes into resources and notifications.
func (s *Server) startFollowing(ctx context.Context) {
	s.followOnce.Do(func() { go s.follow(ctx) })
}

// vault waits for the vault, reporting the progress of its indexing to the
// client when the request carries a progress token.
func (s *Server) vault(ctx context.Context, ss *sdk.ServerSession, token any) (*service.Service, error) {
	var progress func(done, total int)
	if token != nil && ss != nil {
		progress = func(done, total int) {
			_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(done), Total: float64(total),
				Message: fmt.Sprintf("indexing the vault: %d of %d notes", done, total),
			})
		}
	}
	svc, err := s.cfg.Vault.Wait(ctx, progress)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("the vault's index is not available: %v", err)
	}
	return svc, nil
}

// index waits for the vault (see vault) and returns its index.
func (s *Server) index(ctx context.Context, req *sdk.CallToolRequest) (*shared.Index, error) {
	svc, err := s.vault(ctx, req.Session, req.Params.GetProgressToken())
	if err != nil {
		return nil, err
	}
	return svc.Index(), nil
}
