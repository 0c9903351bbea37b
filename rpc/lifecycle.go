package rpc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// Initialize opens the vault (service.Open: its index, reconciled with the
// disk while vault/indexProgress reports it, the watcher and the agent). A
// failed initialize may be retried; a successful one may not.
func (s *Server) Initialize(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
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

	res, svc, err := s.openVaultRecovered(ctx, p)

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
		svc.Close()
		return nil, errShutDown
	}
	s.state = stateReady
	s.svc = svc
	return res, nil
}

// openVaultRecovered is openVault with a panic turned into an internal
// error here rather than in the handler chain, so that Initialize still
// leaves the initializing state and the host can retry.
func (s *Server) openVaultRecovered(ctx context.Context, p *protocol.InitializeParams) (res *protocol.InitializeResult, svc *service.Service, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("initialize: opening the vault panicked", "panic", r, "stack", string(debug.Stack()))
			res, svc = nil, nil
			err = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: fmt.Sprintf("initialize: internal error while opening the vault: %v", r)}
		}
	}()
	if s.openHook != nil {
		s.openHook()
	}
	return s.openVault(ctx, p)
}

func (s *Server) openVault(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, *service.Service, error) {
	start := time.Now()
	const method = protocol.MethodInitialize

	if u := unknownFields(ctx); len(u) > 0 {
		s.log.Warn("initialize: unknown params ignored", "fields", strings.Join(u, ", "))
	}
	unknown := p.Settings.Unknown()
	if len(unknown) > 0 {
		// Sent synchronously so that it reaches the host before the result.
		_ = s.client.LogMessage(ctx, &protocol.LogMessageParams{Type: protocol.LogWarning,
			Message: fmt.Sprintf("initialize: unknown settings ignored: %s (known settings: %s)", strings.Join(unknown, ", "), strings.Join(protocol.SettingsKeys(), ", "))})
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
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, invalidParams("invalid params for %s: vault %q: %v", method, p.Vault, err)
	}
	index := p.Index
	if index == "" && !s.cfg.InMemoryIndex {
		index = s.cfg.Index
	}

	if err := checkNumbers(p.Settings); err != nil {
		return nil, nil, err
	}
	settings := s.cfg.Settings.Merge(settingsOf(p.Settings).Named(hostName))
	prog := s.newProgress()
	embedProg := &progressReporter{s: s, phase: "embed"}
	svc, err := s.openService(ctx, service.Options{
		Vault:         root,
		Index:         index,
		InMemoryIndex: s.cfg.InMemoryIndex,
		Settings:      settings,
		Model:         s.cfg.Model,
		Env:           s.cfg.Env,
		Logger:        s.shared,
		Progress:      prog.report,
		EmbedProgress: embedProg.report,
		Watch:         true,
		Agent:         true,
		Sessions:      true,
		FrontEnd:      "serve",
		LockWait:      s.cfg.LockWait,
	})
	var oe *service.OpenError
	switch {
	case err == nil:
		prog.finish()
	case errors.As(err, &oe):
		return nil, nil, openError(oe, root, s.cfg.LockWait, prog)
	default:
		return nil, nil, err
	}

	name := "unknown host"
	if p.ClientInfo != nil && p.ClientInfo.Name != "" {
		name = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	synced := svc.Synced()
	s.log.Info("initialized", "host", strings.TrimSpace(name), "vault", root, "index", svc.IndexPath(),
		"notes", svc.Index().Count(), "created", svc.Index().Created(), "rebuilt", synced.Rebuilt, "took", time.Since(start))

	res := &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: "vault-agent", Version: s.cfg.Version},
		Capabilities: protocol.Capabilities{
			Methods:         protocol.MethodNames(),
			Notifications:   protocol.NotificationNames(),
			Modes:           service.Modes,
			Providers:       service.Providers,
			Planner:         true,
			MaxMessageBytes: s.cfg.MaxMessageBytes,
		},
		Tools: toolInfos(offered(svc.Agent().Tools(), svc.Settings())),
		Index: protocol.IndexInfo{
			Notes:   svc.Index().Count(),
			TookMs:  millis(time.Since(start)),
			Rebuilt: synced.Rebuilt,
			Reason:  synced.Reason,
			Created: svc.Index().Created(),
		},
		UnknownSettings: unknown,
	}
	return res, svc, nil
}

// hostName is how a host spells a setting, for messages that say what to
// change: settings.model.
func hostName(k service.Key) string { return "settings." + k.Setting }

// checkNumbers refuses the number settings of p out of their range, before
// they are made durations (a huge timeoutMs would overflow into a negative
// one), as -32602 naming the setting and its range.
func checkNumbers(p *protocol.Settings) error {
	if p == nil {
		return nil
	}
	for key, v := range map[string]int64{
		"maxIterations":         int64(p.MaxIterations),
		"timeoutMs":             p.TimeoutMs,
		"requestInputTimeoutMs": p.RequestInputTimeoutMs,
		"reasoningWindow":       int64(p.ReasoningWindow),
		"maxPlanContinuations":  int64(p.MaxPlanContinuations),
		"planReminderInterval":  int64(p.PlanReminderInterval),
	} {
		var se *service.SettingError
		if err := service.CheckNumber(key, float64(v)); errors.As(err, &se) {
			return fieldError("settings."+key, "%s", se.Msg)
		}
	}
	return nil
}

// offered keeps the tools a run with settings s is offered: the edit tools
// only with allowEdits, the planner's only with the planner on.
func offered(defs []llm.ToolDef, s service.Settings) []llm.ToolDef {
	cfg := s.RunConfig()
	var out []llm.ToolDef
	for _, d := range defs {
		if agent.IsEditTool(d.Name) && !cfg.AllowEdits || planner.IsPlannerTool(d.Name) && !cfg.Planner {
			continue
		}
		out = append(out, d)
	}
	return out
}

// openError says which part of opening the vault failed, in the terms of
// initialize's params.
func openError(oe *service.OpenError, root string, lockWait time.Duration, prog *progressReporter) error {
	const method = protocol.MethodInitialize
	switch oe.Part {
	case service.PartVault:
		return invalidParams("invalid params for %s: vault %q cannot be opened: %v", method, oe.Path, oe.Err)
	case service.PartIndex:
		if errors.Is(oe.Err, search.ErrLocked) {
			return &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError,
				Message: fmt.Sprintf("initialize: index in use by another process: %s is still locked after waiting %s; stop the other vault-agent or pass another \"index\" folder", oe.Path, lockWait)}
		}
		if errors.Is(oe.Err, search.ErrIndexInVault) {
			return invalidParams("invalid params for %s: index must be outside the vault (the vault is read-only): %s is inside %s; pass a folder outside it, or none for the default", method, oe.Path, root)
		}
		if oe.Path == "" {
			return oe.Err
		}
		return invalidParams("invalid params for %s: index %q cannot be opened: %v", method, oe.Path, oe.Err)
	case service.PartSync:
		prog.finish()
		return fmt.Errorf("index the vault: %w", oe.Err)
	}
	return oe.Err
}

func toolInfos(defs []llm.ToolDef) []protocol.ToolInfo {
	out := make([]protocol.ToolInfo, 0, len(defs))
	for _, d := range defs {
		out = append(out, protocol.ToolInfo{Name: d.Name, Description: d.Description})
	}
	return out
}

func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
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
	phase string // IndexProgressParams.Phase
}

func (s *Server) newProgress() *progressReporter { return &progressReporter{s: s} }

// report is a search.ProgressFunc. The notification write is the only
// thing it waits on. Nothing to index is nothing to report.
func (p *progressReporter) report(done, total int) {
	if total <= 0 {
		return
	}
	p.mu.Lock()
	p.total, p.seen = total, true
	now := time.Now()
	send := done < total && now.Sub(p.last) >= progressThrottle
	if send {
		p.last = now
	}
	p.mu.Unlock()
	if send {
		_ = p.s.client.IndexProgress(context.Background(), &protocol.IndexProgressParams{Done: done, Total: total, Phase: p.phase})
	} else if done == total && p.phase != "" {
		// The embedding's last report: the index's own ends with finish.
		_ = p.s.client.IndexProgress(context.Background(), &protocol.IndexProgressParams{Done: done, Total: total, Phase: p.phase})
	}
}

// finish sends the closing notification with done == total, when
// something was indexed: a vault whose index was up to date hears nothing.
func (p *progressReporter) finish() {
	p.mu.Lock()
	total, seen := p.total, p.seen
	p.mu.Unlock()
	if !seen || total == 0 {
		return
	}
	_ = p.s.client.IndexProgress(context.Background(), &protocol.IndexProgressParams{Done: total, Total: total})
}
