package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/reasoning/marker"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/search/shared"
	"github.com/vault-agent/vault-agent/vault"
)

// Options say how to open a vault.
type Options struct {
	// Vault is the vault folder (required).
	Vault string
	// Index is the index folder; "" is the per-vault default in the user
	// cache dir (Env.DefaultIndexPath), or memory with InMemoryIndex.
	Index         string
	InMemoryIndex bool
	// Settings are the defaults of every run; Excludes and ObsidianExcludes
	// apply to the vault now.
	Settings Settings
	// Model, when set, is the agent's model instead of the one Settings
	// describe (tests, embedding). A run whose settings name a model still
	// gets its own.
	Model llm.Model
	// Env is where keys, default model names and the cache dir come from;
	// nil reads the process environment (ProcessEnv).
	Env *Env
	// Logger receives every component's logs (nil: none).
	Logger *slog.Logger
	// Progress receives the progress of the first reconcile of the index
	// with the disk; it is called from the indexing goroutine.
	Progress search.ProgressFunc
	// Embedder, when set, makes the vectors of semantic search instead of
	// the one Settings.EmbedModel describes (tests).
	Embedder semantic.Embedder
	// EmbedProgress receives the progress of the first embedding of the
	// notes' chunks (chunks embedded, chunks to embed), after the index's
	// reconcile, when an embedding model is configured.
	EmbedProgress search.ProgressFunc
	// Rebuild rebuilds the index from scratch instead of reconciling it.
	Rebuild bool
	// Watch keeps the index fresh with the file watcher until Close.
	Watch bool
	// Agent starts the agent. Its model is built by each run that needs
	// it, so that no model setting or server keeps a vault from opening.
	Agent bool
	// Sessions says runs belong to conversations (RunRequest.SessionID):
	// plans waiting for the user's review are then kept beside the index,
	// across restarts, instead of in memory.
	Sessions bool
	// Journal is the file of the edit journal; "" puts it beside the index
	// (or beside where the default index would be, for an index in
	// memory). It must be outside the vault.
	Journal string
	// PrivateIndexIfLocked opens a private index in memory, with a
	// warning, when another process holds the index and does not share
	// it, instead of failing with search.ErrLocked.
	PrivateIndexIfLocked bool
	// LockWait is how long Open waits for an index that another process
	// holds without sharing it (an older vault-agent, one still opening
	// the index, or sharing off) before giving up (search.ErrLocked, or
	// the private index of PrivateIndexIfLocked); zero waits the default,
	// a few seconds. An index whose holder shares it is reached at once.
	LockWait time.Duration
	// FrontEnd names this process for `vault-agent status`: "mcp",
	// "serve", "search"...
	FrontEnd string
	// CallTimeout bounds each call to the process holding the index, when
	// another one does (0: the default, 20 s).
	CallTimeout time.Duration
}

// OpenError says which part of opening a vault failed: the model, the
// vault folder, the index, or the first sync. Its text is the cause's.
type OpenError struct {
	Part string // PartModel, PartVault, PartIndex, PartSync or PartAgent
	Path string // the folder or file concerned, when there is one
	Err  error
}

// Parts of opening a vault (OpenError.Part).
const (
	PartModel = "model"
	PartVault = "vault"
	PartIndex = "index"
	PartSync  = "sync"
	PartAgent = "agent"
)

func (e *OpenError) Error() string { return e.Err.Error() }

func (e *OpenError) Unwrap() error { return e.Err }

// Service is one open vault: the vault, its index (kept fresh by the
// watcher when asked), and the agent that answers questions about it. It
// is safe for concurrent use; a front-end that serves several vaults opens
// one Service each.
//
// The index is shared by every process of the user on the vault: the
// first holds it and serves it on a socket, the others reach it there
// (shared.Index). Each process keeps its own agent, model and approver, so
// a run's events and edit approvals go through its own front-end.
type Service struct {
	env      Env
	settings Settings
	log      *slog.Logger

	vault     *vault.Vault
	index     *shared.Index
	indexPath string
	synced    search.SyncStats
	agent     *agent.Agent

	editState
	modelState

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// ErrClosed is the error of a run asked of a closed Service.
var ErrClosed = errors.New("service: the vault is closed")

// Open opens the vault of opts: it builds the agent's model (when
// opts.Agent), opens the vault and its index and reconciles the index with
// the disk (reporting progress), starts the watcher (when opts.Watch) and
// the agent. A watcher that cannot start is logged, not fatal: search
// still works on the index as it is. Errors are *OpenError, or
// *SettingError for settings that cannot be used.
func Open(ctx context.Context, opts Options) (*Service, error) {
	s, err := begin(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := s.finish(ctx, opts, opts.Progress); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// begin does the quick part of opening a vault: settings, model, vault
// folder, index and agent. A failure leaves nothing open.
func begin(ctx context.Context, opts Options) (s *Service, err error) {
	s = &Service{env: ProcessEnv(), settings: opts.Settings, log: opts.Logger}
	if opts.Env != nil {
		s.env = *opts.Env
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if strings.TrimSpace(opts.Vault) == "" {
		return nil, &OpenError{Part: PartVault, Err: errors.New("no vault folder given")}
	}
	root, err := filepath.Abs(opts.Vault)
	if err != nil {
		return nil, &OpenError{Part: PartVault, Path: opts.Vault, Err: err}
	}
	s.settings = s.env.Layered(root, opts.Settings, s.log)
	if err := s.settings.Validate(root); err != nil {
		return nil, err
	}
	s.model = opts.Model
	if opts.Agent && s.model == nil {
		s.model = s.defaultModel()
	}

	ob := s.settings.ObsidianExcludes
	s.vault, err = vault.Open(root, vault.Options{
		Excludes:               s.settings.Excludes,
		IgnoreObsidianExcludes: ob != nil && !*ob,
		Logger:                 s.log,
	})
	if err != nil {
		return nil, &OpenError{Part: PartVault, Path: root, Err: err}
	}
	switch {
	case opts.Index != "":
		s.indexPath = opts.Index
	case opts.InMemoryIndex:
	default:
		if s.indexPath, err = s.env.DefaultIndexPath(s.vault.Root()); err != nil {
			return nil, &OpenError{Part: PartIndex, Err: err}
		}
		s.indexPath += excludesSuffix(s.settings)
	}
	emb := opts.Embedder
	if emb == nil {
		e, err := s.embedder()
		if err != nil {
			return nil, err
		}
		if e != nil {
			emb = e
		}
	}
	s.index, err = shared.Open(ctx, s.sharing(opts, emb))
	if errors.Is(err, search.ErrLocked) && opts.PrivateIndexIfLocked {
		s.log.Warn("the index is in use by another vault-agent process that does not share it; this one keeps a private index in memory, "+
			"which costs a full indexing at every start", "index", s.indexPath, "error", err)
		s.indexPath = ""
		s.index, err = shared.Open(ctx, s.sharing(opts, emb))
	}
	if err != nil {
		return nil, &OpenError{Part: PartIndex, Path: s.indexPath, Err: err}
	}
	if jp, err := journalPath(opts, s.env, s.vault.Root()); err != nil {
		s.log.Debug("no edit journal: edits are refused", "error", err)
	} else {
		s.journal = openJournal(jp, s.log)
	}
	if opts.Agent {
		reviews := ""
		if opts.Sessions && s.indexPath != "" {
			reviews = filepath.Clean(s.indexPath) + "-reviews.db"
		}
		// The index's Search is hybrid when an embedding model is at the
		// holder; relatedNotes is offered when this process has one.
		deps := agent.Deps{Model: s.model, Index: s.index, Logger: s.log, ReviewStorePath: reviews}
		if emb != nil {
			deps.Related = s.index
		}
		s.agent, err = agent.New(deps)
		if err != nil {
			s.Close()
			return nil, &OpenError{Part: PartAgent, Path: reviews, Err: fmt.Errorf("start the agent: %w", err)}
		}
	}
	return s, nil
}

// finish does the slow part: it reconciles the index with the disk (or
// rebuilds it), embeds the notes' chunks and starts the watcher; when
// another process holds the index, it waits for that one's first sync
// instead (or asks it to rebuild).
func (s *Service) finish(ctx context.Context, opts Options, progress search.ProgressFunc) (err error) {
	s.synced, err = s.index.Start(ctx, shared.StartOptions{Rebuild: opts.Rebuild, Progress: progress, EmbedProgress: opts.EmbedProgress, Watch: opts.Watch})
	if err != nil {
		return &OpenError{Part: PartSync, Path: s.indexPath, Err: err}
	}
	return nil
}

// Vault returns the open vault.
func (s *Service) Vault() *vault.Vault { return s.vault }

// Index returns the vault's index: held by this process, or reached
// through the one holding it.
func (s *Service) Index() *shared.Index { return s.index }

// IndexPath returns the index folder ("" for an index in memory).
func (s *Service) IndexPath() string { return s.indexPath }

// Synced reports what the first reconcile (or rebuild) of the index did.
func (s *Service) Synced() search.SyncStats { return s.synced }

// Agent returns the agent, nil unless Options.Agent was set.
func (s *Service) Agent() *agent.Agent { return s.agent }

// Settings returns the settings the vault was opened with.
func (s *Service) Settings() Settings { return s.settings }

// RunSettings returns the settings of a run that overrides the vault's
// with o, checked.
func (s *Service) RunSettings(o Settings) (Settings, error) {
	merged := s.settings.Merge(o)
	if err := merged.Validate(s.vault.Root()); err != nil {
		return Settings{}, err
	}
	return merged, nil
}

// RunRequest asks the agent for one run.
type RunRequest struct {
	// RunID names the run ("": the agent names it).
	RunID string
	// SessionID ties the runs of one conversation together (plan review).
	SessionID string
	Message   string
	// History is the conversation so far; reasoning markers a host kept in
	// it are stripped before any model sees it.
	History []llm.Message
	// Settings override the vault's for this run; one that names a model
	// gets a model of its own.
	Settings Settings
	// Stop, when closed, stops the run as agent.Agent.Stop does.
	Stop <-chan struct{}
	// Approver asks the person about each edit the run proposes; a run
	// whose settings allow edits needs one.
	Approver Approver
}

// Run runs the agent to the end of one run, sending its events to sink and
// to the trace file the settings name. The error is for a run that could
// not start (a *SettingError, agent.ErrDuplicateRun) or infrastructure; a
// run that fails ends with stop reason error.
func (s *Service) Run(ctx context.Context, req RunRequest, sink agent.Sink) (*agent.Result, error) {
	if s.agent == nil {
		return nil, errors.New("service: the vault was opened without the agent")
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	settings, err := s.RunSettings(req.Settings)
	if err != nil {
		return nil, err
	}
	model := s.runModel(ctx, req.Settings, settings)
	if req.RunID != "" && s.agent.Active(req.RunID) {
		return nil, fmt.Errorf("%w: %s", agent.ErrDuplicateRun, req.RunID)
	}
	var ed agent.Editor
	if settings.EditsEnabled() {
		switch {
		case req.Approver == nil:
			return nil, &SettingError{Key: "allowEdits", Msg: "is set, but this front-end has no way to ask for approval of edits"}
		case s.journal == nil:
			return nil, &SettingError{Key: "allowEdits", Msg: ErrNoJournal.Error(), Err: ErrNoJournal}
		}
		if req.RunID == "" {
			req.RunID = s.agent.NewRunID()
		}
		ed = &editor{s: s, runID: req.RunID, approver: req.Approver}
	}
	if settings.Trace != "" {
		tw, err := agent.OpenTrace(settings.Trace)
		if err != nil {
			return nil, &SettingError{Key: "trace", Msg: err.Error(), Err: err}
		}
		defer func() {
			if err := tw.Close(); err != nil {
				s.log.Warn("writing the trace failed", "error", err)
			}
		}()
		sink = agent.Tee(sink, tw)
	}
	history := make([]llm.Message, 0, len(req.History))
	for _, m := range req.History {
		m.Content = marker.Strip(m.Content)
		history = append(history, m)
	}
	return s.agent.Run(ctx, agent.RunRequest{
		RunID:     req.RunID,
		SessionID: req.SessionID,
		Message:   req.Message,
		History:   history,
		Config:    settings.RunConfig(),
		Model:     model,
		Stop:      req.Stop,
		Editor:    ed,
	}, sink)
}

// Close stops every run, the watcher and the agent, and closes the index.
// It is safe to call more than once.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.agent != nil {
			s.agent.StopAll()
			if err := s.agent.Close(); err != nil {
				s.closeErr = fmt.Errorf("close the agent: %w", err)
			}
		}
		if s.index != nil {
			if err := s.index.Close(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
	})
	return s.closeErr
}
