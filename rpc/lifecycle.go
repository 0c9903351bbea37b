package rpc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// initialize opens the vault and its index, starts the watcher and the
// agent. A failed initialize may be retried; a successful one may not.
func (s *Server) initialize(ctx context.Context, p *InitializeParams) (*InitializeResult, error) {
	s.mu.Lock()
	switch s.state {
	case stateNew:
		s.state = stateInitializing
	case stateInitializing:
		s.mu.Unlock()
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "initialize: already in progress"}
	default:
		s.mu.Unlock()
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: "initialize: the server is already initialized (initialize may be sent once per process)"}
	}
	s.mu.Unlock()

	res, st, err := s.openAll(ctx, p)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.state == stateInitializing {
			s.state = stateNew // the host may fix the params and retry
		}
		return nil, err
	}
	if s.state != stateInitializing || s.serveCtx.Err() != nil {
		// shutdown or the end of the connection came meanwhile.
		st.close()
		return nil, errShutDown
	}
	s.state = stateReady
	s.vault, s.index, s.agent, s.settings = st.vault, st.index, st.agent, st.settings
	return res, nil
}

// opened are the resources initialize built, owned by it until stored.
type opened struct {
	vault    *vault.Vault
	index    *search.Index
	agent    *agent.Agent
	settings Settings
}

func (o *opened) close() {
	if o.agent != nil {
		o.agent.Close()
	}
	if o.index != nil {
		o.index.Close()
	}
}

func (s *Server) openAll(ctx context.Context, p *InitializeParams) (res *InitializeResult, st *opened, err error) {
	start := time.Now()
	const method = MethodInitialize

	if u := unknownFields(ctx); len(u) > 0 {
		s.log.Warn("initialize: unknown params ignored", "fields", strings.Join(u, ", "))
	}
	settings := s.cfg.DefaultSettings.merge(p.Settings)
	unknown := p.Settings.Unknown()
	if len(unknown) > 0 {
		// Sent synchronously so that it reaches the host before the result.
		s.notify(NotifyLogMessage, LogMessageParams{Type: LogWarning,
			Message: fmt.Sprintf("initialize: unknown settings ignored: %s (known settings: %s)", strings.Join(unknown, ", "), strings.Join(settingsKeys(), ", "))})
		s.cfg.Logger.Warn("unknown settings ignored", "component", "rpc", "settings", unknown)
	}

	root := p.Vault
	if root == "" && p.RootPath != "" {
		root = p.RootPath
	}
	if root == "" && p.RootURI != "" {
		u, err := url.Parse(p.RootURI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			return nil, nil, invalidParams("invalid params for %s: rootUri %q is not a file:// URI of the vault folder", method, p.RootURI)
		}
		root = filepath.FromSlash(u.Path)
	}
	if root == "" {
		root = s.cfg.Vault
	}
	if root == "" {
		return nil, nil, required(method, "vault", "the vault folder, e.g. {\"vault\": \"/home/me/Notes\"}")
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, nil, invalidParams("invalid params for %s: vault %q: %v", method, p.Vault, err)
	}
	if err := settings.validate(root); err != nil {
		return nil, nil, err
	}

	v, err := vault.Open(root, vault.Options{
		Excludes:               settings.Excludes,
		IgnoreObsidianExcludes: settings.ObsidianExcludes != nil && !*settings.ObsidianExcludes,
		Logger:                 s.shared,
	})
	if err != nil {
		return nil, nil, invalidParams("invalid params for %s: vault %q cannot be opened: %v", method, root, err)
	}

	indexPath := p.Index
	switch {
	case indexPath != "":
	case s.cfg.InMemoryIndex:
	case s.cfg.Index != "":
		indexPath = s.cfg.Index
	default:
		if indexPath, err = s.env.DefaultIndexPath(root); err != nil {
			return nil, nil, err
		}
	}

	st = &opened{vault: v, settings: settings}
	defer func() {
		if err != nil {
			st.close()
		}
	}()
	st.index, err = search.Open(ctx, search.Options{Path: indexPath, Vault: v, Logger: s.shared})
	if err != nil {
		if errors.Is(err, search.ErrLocked) {
			return nil, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError,
				Message: fmt.Sprintf("initialize: the index %s is in use by another vault-agent process; stop it or pass another \"index\" folder", indexPath)}
		}
		return nil, nil, invalidParams("invalid params for %s: index %q cannot be opened: %v", method, indexPath, err)
	}
	prog := s.newProgress()
	stats, err := st.index.Sync(ctx, prog.report)
	prog.finish(st.index.Count())
	if err != nil {
		return nil, nil, fmt.Errorf("index the vault: %w", err)
	}
	if err := st.index.Watch(s.serveCtx); err != nil {
		// Search still works on a stale index: warn, don't fail.
		s.log.Warn("the vault watcher could not start; the index will not follow changes until vault/reindex", "error", err)
	}

	model := s.cfg.Model
	if model == nil {
		if model, err = s.newModel(ctx, settings); err != nil {
			return nil, nil, err
		}
	}
	reviews := ""
	if indexPath != "" {
		reviews = filepath.Clean(indexPath) + "-reviews.db"
	}
	st.agent, err = agent.New(agent.Deps{Model: model, Index: st.index, Logger: s.shared, ReviewStorePath: reviews})
	if err != nil {
		return nil, nil, fmt.Errorf("start the agent: %w", err)
	}

	name := "unknown host"
	if p.ClientInfo != nil && p.ClientInfo.Name != "" {
		name = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info("initialized", "host", strings.TrimSpace(name), "vault", root, "index", indexPath,
		"notes", st.index.Count(), "rebuilt", stats.Rebuilt, "took", time.Since(start))

	res = &InitializeResult{
		ServerInfo: ServerInfo{Name: "vault-agent", Version: s.cfg.Version},
		Capabilities: Capabilities{
			Methods:         methodNames(),
			Notifications:   notificationNames(),
			Modes:           validModes,
			Providers:       validProviders,
			Planner:         true,
			MaxMessageBytes: s.cfg.MaxMessageBytes,
		},
		Tools: toolInfos(st.agent.Tools()),
		Index: IndexInfo{
			Notes:   st.index.Count(),
			TookMs:  millis(time.Since(start)),
			Rebuilt: stats.Rebuilt,
			Reason:  stats.Reason,
		},
		UnknownSettings: unknown,
	}
	return res, st, nil
}

func notificationNames() []string {
	out := make([]string, len(notifications))
	for i, n := range notifications {
		out[i] = n.Name
	}
	return out
}

func toolInfos(defs []llm.ToolDef) []ToolInfo {
	out := make([]ToolInfo, 0, len(defs))
	for _, d := range defs {
		out = append(out, ToolInfo{Name: d.Name, Description: d.Description})
	}
	return out
}

func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// newModel builds the model of settings. A bad provider configuration is
// reported against the settings keys.
func (s *Server) newModel(ctx context.Context, settings Settings) (llm.Model, error) {
	m, err := service.NewModel(ctx, service.Settings{Provider: settings.Provider, Model: settings.Model, BaseURL: settings.BaseURL}, s.env, s.shared)
	if err != nil {
		return nil, &paramError{field: "settings.provider", msg: fmt.Sprintf("model %q cannot be used: %v", settings.Provider, err)}
	}
	return m, nil
}

// progressThrottle is the minimum gap between vault/indexProgress
// notifications (the final one is always sent).
const progressThrottle = 100 * time.Millisecond

// progressReporter sends throttled vault/indexProgress notifications.
type progressReporter struct {
	s *Server
	// mu guards the fields below; report may be called from the indexing
	// goroutine.
	mu    sync.Mutex
	last  time.Time
	total int
	seen  bool
}

func (s *Server) newProgress() *progressReporter { return &progressReporter{s: s} }

// report is a search.ProgressFunc. The notification write is the only
// thing it waits on.
func (p *progressReporter) report(done, total int) {
	p.mu.Lock()
	p.total, p.seen = total, true
	now := time.Now()
	send := done < total && now.Sub(p.last) >= progressThrottle
	if send {
		p.last = now
	}
	p.mu.Unlock()
	if send {
		p.s.notify(NotifyIndexProgress, IndexProgressParams{Done: done, Total: total})
	}
}

// finish sends the closing notification with done == total; count is the
// total when indexing reported no progress at all.
func (p *progressReporter) finish(count int) {
	p.mu.Lock()
	total := count
	if p.seen {
		total = p.total
	}
	p.mu.Unlock()
	p.s.notify(NotifyIndexProgress, IndexProgressParams{Done: total, Total: total})
}
