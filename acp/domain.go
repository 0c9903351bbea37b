package acp

// This file is the ACP front-end's only adapter onto today's packages: it
// opens a vault, its index, its watcher and an agent the way rpc's
// initialize does, and runs the agent. It is meant to be replaced by the
// composition root once that exists; nothing else in the package imports
// vault or search, so the swap stays in this file.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// LocalConfig configures NewLocalBackend.
type LocalConfig struct {
	// Model is the model every run uses.
	Model llm.Model
	// Index is the index folder; "" takes the per-vault default in the
	// user cache dir. A set Index serves one vault only.
	Index string
	// InMemoryIndex keeps indexes in memory (tests).
	InMemoryIndex bool
	// Excludes are vault globs to skip; IgnoreObsidianExcludes turns off
	// Obsidian's own "Excluded files" setting.
	Excludes               []string
	IgnoreObsidianExcludes bool
	Logger                 *slog.Logger
}

// NewLocalBackend returns a Backend over the vault, search and agent
// packages.
func NewLocalBackend(cfg LocalConfig) Backend {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	watchCtx, stopWatch := context.WithCancel(context.Background())
	return &localBackend{cfg: cfg, log: log, watchCtx: watchCtx, stopWatch: stopWatch, vaults: map[string]*localEntry{}}
}

type localBackend struct {
	cfg LocalConfig
	log *slog.Logger
	// watchCtx bounds the watchers; it is the backend's lifetime, ended by
	// Close, not a request's.
	watchCtx  context.Context
	stopWatch context.CancelFunc

	// mu guards vaults and closed.
	mu     sync.Mutex
	vaults map[string]*localEntry // by real root path
	closed bool
}

// localEntry is a vault being opened or open; ready is closed when v or err
// is set.
type localEntry struct {
	ready chan struct{}
	v     *localVault
	err   error
}

func (b *localBackend) Open(ctx context.Context, root string) (Vault, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotAVault, root, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is a file, not a folder", ErrNotAVault, root)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotAVault, root, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	e, ok := b.vaults[real]
	if !ok {
		if b.cfg.Index != "" {
			for other, oe := range b.vaults {
				if oe.err == nil {
					b.mu.Unlock()
					return nil, fmt.Errorf("%w: --index %s is the index of the vault %s; run another vault-agent acp for %s, or start it without --index", ErrVaultBusy, b.cfg.Index, other, root)
				}
			}
		}
		e = &localEntry{ready: make(chan struct{})}
		b.vaults[real] = e
		go func() {
			// The open outlives the session/new that asked for it, so a
			// client giving up does not leave a half-built index.
			e.v, e.err = b.open(b.watchCtx, real)
			if e.err != nil {
				b.mu.Lock()
				delete(b.vaults, real)
				b.mu.Unlock()
			}
			close(e.ready)
		}()
	}
	b.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.v, nil
}

// open mirrors rpc's openAll: vault, index, sync, watcher, agent.
func (b *localBackend) open(ctx context.Context, root string) (_ *localVault, err error) {
	start := time.Now()
	v, err := vault.Open(root, vault.Options{Excludes: b.cfg.Excludes, IgnoreObsidianExcludes: b.cfg.IgnoreObsidianExcludes, Logger: b.log})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAVault, err)
	}
	indexPath := b.cfg.Index
	if indexPath == "" && !b.cfg.InMemoryIndex {
		if indexPath, err = search.DefaultPath(v.Root()); err != nil {
			return nil, err
		}
	}
	ix, err := search.Open(ctx, search.Options{Path: indexPath, Vault: v, Logger: b.log})
	if err != nil {
		if errors.Is(err, search.ErrLocked) {
			return nil, fmt.Errorf("%w: the index %s is in use by another vault-agent process; stop it or pass another --index", ErrVaultBusy, indexPath)
		}
		return nil, fmt.Errorf("open the index %s: %w", indexPath, err)
	}
	defer func() {
		if err != nil {
			ix.Close()
		}
	}()
	lastLog := time.Now()
	stats, err := ix.Sync(ctx, func(done, total int) {
		if time.Since(lastLog) >= 2*time.Second {
			lastLog = time.Now()
			b.log.Info("indexing", "vault", root, "done", done, "total", total)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("index the vault %s: %w", root, err)
	}
	if err := ix.Watch(ctx); err != nil {
		b.log.Warn("the vault watcher could not start; the index will not follow changes", "vault", root, "error", err)
	}
	reviews := ""
	if indexPath != "" {
		reviews = filepath.Clean(indexPath) + "-reviews.db"
	}
	a, err := agent.New(agent.Deps{Model: b.cfg.Model, Index: ix, Logger: b.log, ReviewStorePath: reviews})
	if err != nil {
		return nil, fmt.Errorf("start the agent: %w", err)
	}
	b.log.Info("vault opened", "vault", root, "index", indexPath, "notes", ix.Count(), "rebuilt", stats.Rebuilt, "took", time.Since(start))
	return &localVault{root: root, index: ix, agent: a}, nil
}

func (b *localBackend) Close() error {
	b.mu.Lock()
	b.closed = true
	entries := make([]*localEntry, 0, len(b.vaults))
	for _, e := range b.vaults {
		entries = append(entries, e)
	}
	b.vaults = map[string]*localEntry{}
	b.mu.Unlock()
	b.stopWatch()
	var errs []error
	for _, e := range entries {
		<-e.ready
		if e.v != nil {
			errs = append(errs, e.v.agent.Close(), e.v.index.Close())
		}
	}
	return errors.Join(errs...)
}

type localVault struct {
	root  string
	index *search.Index
	agent *agent.Agent
}

func (v *localVault) Root() string { return v.root }

func (v *localVault) Run(ctx context.Context, req RunRequest, sink agent.Sink) (*agent.Result, error) {
	cfg := agent.Config{
		Mode:          req.Settings.Mode,
		MaxIterations: req.Settings.MaxIterations,
		Timeout:       req.Settings.Timeout,
		Planner:       req.Settings.Planner,
	}.Normalize()
	return v.agent.Run(ctx, agent.RunRequest{
		RunID:     req.RunID,
		SessionID: req.SessionID,
		Message:   req.Message,
		History:   req.History,
		Config:    cfg,
	}, sink)
}

// ReadNote reads every chunk of the note up to maxBytes, the way the
// agent's readNote tool reads one.
func (v *localVault) ReadNote(ctx context.Context, name string, maxBytes int) (*Note, error) {
	first, err := agent.ReadNote(v.index, name, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", vault.ErrNotFound, err)
		}
		return nil, err
	}
	n := &Note{Path: first.Path, Title: first.Title}
	var b strings.Builder
	for i := 0; i < first.ChunkCount; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := first
		if i > 0 {
			if c, err = agent.ReadNote(v.index, first.Path, i); err != nil {
				return nil, err
			}
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(c.Content)
		if b.Len() >= maxBytes {
			break
		}
	}
	n.Text, n.Truncated = capText(b.String(), maxBytes)
	return n, nil
}
