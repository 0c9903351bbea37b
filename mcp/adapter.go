package mcp

// This file is the only one in package mcp that knows how vault-agent is put
// together today. It opens the vault, its index (shared with the other
// commands), the watcher and the agent, and adapts them to the Vault and
// Agent interfaces of domain.go. It copies the minimum of
// cmd/vault-agent/index.go (openIndex) and rpc/lifecycle.go (openAll).
//
// TEMPORARY: it is to be replaced by the composition root (service.Open and
// service.NewModel) once that lands; the rest of the package depends only
// on domain.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/reasoning"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// OpenOptions says what Open opens.
type OpenOptions struct {
	// VaultDir is the vault folder (required).
	VaultDir string
	// IndexDir is the index folder; "" is the per-vault default that every
	// command shares. InMemory keeps the index in memory instead (tests).
	IndexDir string
	InMemory bool
	// Excludes are gitignore-style globs of vault paths to skip;
	// IgnoreObsidianExcludes turns off Obsidian's "Excluded files".
	Excludes               []string
	IgnoreObsidianExcludes bool
	// Model answers ask_vault; nil means the offline model.
	Model llm.Model
	// Run is the agent configuration of every ask_vault run (mode, planner,
	// iterations, timeout); ask_vault may override the mode.
	Run agent.Config
	// Debounce is the watcher's quiet period; 0 keeps its default.
	Debounce time.Duration
	Logger   *slog.Logger
}

// Opened is an open vault, index and agent: it implements Vault and Agent.
// Close it when done.
type Opened struct {
	v     *vault.Vault
	ix    *search.Index
	ag    *agent.Agent
	model llm.Model
	run   agent.Config
	log   *slog.Logger

	cancel context.CancelFunc
	done   chan struct{} // closed when the first reconcile ended
	// syncErr is the first reconcile's error; read after done is closed.
	syncErr error

	progMu          sync.Mutex // guards progDone and progTotal
	progDone, total int

	closeOnce sync.Once
}

var (
	_ Vault = (*Opened)(nil)
	_ Agent = (*Opened)(nil)
)

// Open opens the vault and its index and starts the agent. It returns as
// soon as the index is open: the reconcile with the disk (which indexes
// every note on a first run) and then the watcher run in the background,
// so a client's initialize is answered at once; WaitReady waits for them.
// When another vault-agent process holds the index, Open falls back to a
// private in-memory index and says so in the log.
func Open(ctx context.Context, opts OpenOptions) (*Opened, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if strings.TrimSpace(opts.VaultDir) == "" {
		return nil, errors.New("no vault: give the folder of your markdown notes with --vault")
	}
	v, err := vault.Open(opts.VaultDir, vault.Options{
		Excludes: opts.Excludes, IgnoreObsidianExcludes: opts.IgnoreObsidianExcludes, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	path := opts.IndexDir
	if path == "" && !opts.InMemory {
		if path, err = search.DefaultPath(v.Root()); err != nil {
			return nil, err
		}
	}
	ix, err := search.Open(ctx, search.Options{Path: path, Vault: v, Logger: log, Debounce: opts.Debounce})
	if errors.Is(err, search.ErrLocked) {
		log.Warn("the index is in use by another vault-agent process (serve, watch or another mcp); "+
			"this server keeps its own index in memory, which costs a full indexing at every start", "index", path)
		ix, err = search.Open(ctx, search.Options{Vault: v, Logger: log, Debounce: opts.Debounce})
	}
	if err != nil {
		return nil, fmt.Errorf("open the index %s: %w", path, err)
	}
	model := opts.Model
	if model == nil {
		model = llm.NewOffline()
	}
	// Plan reviews are not offered over MCP, so their store stays in
	// memory and never contends with serve for its file.
	ag, err := agent.New(agent.Deps{Model: model, Index: ix, Logger: log})
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("start the agent: %w", err)
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o := &Opened{v: v, ix: ix, ag: ag, model: model, run: opts.Run, log: log, cancel: cancel, done: make(chan struct{})}
	go o.syncAndWatch(bg)
	return o, nil
}

func (o *Opened) syncAndWatch(ctx context.Context) {
	start := time.Now()
	stats, err := o.ix.Sync(ctx, func(done, total int) {
		o.progMu.Lock()
		o.progDone, o.total = done, total
		o.progMu.Unlock()
	})
	if err != nil {
		o.syncErr = fmt.Errorf("index the vault: %w", err)
		close(o.done)
		return
	}
	o.log.Info("index ready", "notes", o.ix.Count(), "added", stats.Added, "updated", stats.Updated,
		"removed", stats.Removed, "rebuilt", stats.Rebuilt, "took", time.Since(start).Round(time.Millisecond))
	if err := o.ix.Watch(ctx); err != nil {
		// Search still works on a stale index: warn, don't fail.
		o.log.Warn("the vault watcher could not start; the index will not follow changes until the server restarts", "err", err)
	}
	close(o.done)
}

// Close stops the watcher and the reconcile and releases the index.
func (o *Opened) Close() error {
	var err error
	o.closeOnce.Do(func() {
		o.cancel()
		<-o.done
		o.ag.Close()
		err = o.ix.Close()
	})
	return err
}

// Root returns the vault's absolute folder.
func (o *Opened) Root() string { return o.v.Root() }

// WaitReady implements Vault.
func (o *Opened) WaitReady(ctx context.Context, progress func(done, total int)) error {
	select {
	case <-o.done:
		return o.syncErr
	default:
	}
	var tick <-chan time.Time
	if progress != nil {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-o.done:
			return o.syncErr
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			o.progMu.Lock()
			done, total := o.progDone, o.total
			o.progMu.Unlock()
			progress(done, total)
		}
	}
}

// Search implements Vault.
func (o *Opened) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	return o.ix.Search(ctx, req)
}

// Note implements Vault, with the same lookup as the agent's readNote.
func (o *Opened) Note(ctx context.Context, name string) (*vault.Note, error) {
	if _, err := o.v.Resolve(strings.TrimSpace(name)); errors.Is(err, vault.ErrUnsafePath) {
		return nil, err
	}
	p, err := vault.LookupIn(name, o.ix.Paths())
	if err != nil {
		return nil, err
	}
	return o.v.ReadNote(p)
}

// Source implements Vault.
func (o *Opened) Source(ctx context.Context, path string) (string, time.Time, error) {
	raw, err := o.v.ReadRaw(path, -1)
	if err != nil {
		return "", time.Time{}, err
	}
	return string(raw.Content), raw.ModTime, nil
}

// Notes implements Vault.
func (o *Opened) Notes() []search.NoteMeta {
	paths := o.ix.Paths()
	out := make([]search.NoteMeta, 0, len(paths))
	for _, p := range paths {
		if m, ok := o.ix.Note(p); ok {
			out = append(out, m)
		}
	}
	return out
}

// Tags implements Vault.
func (o *Opened) Tags() []search.TagCount { return o.ix.Tags() }

// Subscribe implements Vault.
func (o *Opened) Subscribe() (<-chan struct{}, func()) { return o.ix.Subscribe() }

// TimeRange implements Vault with the agent's getTimeRangeMs parser.
func (o *Opened) TimeRange(expr string, now time.Time) (TimeRange, error) {
	r, err := agent.ParseTimeRange(expr, now)
	if err != nil {
		return TimeRange{}, err
	}
	return TimeRange{Start: time.UnixMilli(r.StartTime), End: time.UnixMilli(r.EndTime), Description: r.Description}, nil
}

// Model implements Agent.
func (o *Opened) Model() ModelInfo {
	_, offline := o.model.(*llm.Offline)
	return ModelInfo{Name: o.model.Name(), Offline: offline}
}

// Ask implements Agent. Steps are the reasoning block's lines, as the
// CLI prints them (tagged [Plan], [Act]... when the planner is on).
func (o *Opened) Ask(ctx context.Context, req AskRequest, onStep func(string)) (*Answer, error) {
	cfg := o.run
	if req.Mode != "" {
		cfg.Mode = req.Mode
	}
	var sink agent.Sink = agent.SinkFunc(func(agent.Event) {})
	if onStep != nil {
		sink = reasoning.NewObserver(reasoning.Config{Planner: cfg.Planner, OnStep: onStep})
	}
	res, err := o.ag.Run(ctx, agent.RunRequest{Message: req.Question, Config: cfg}, sink)
	if err != nil {
		return nil, err
	}
	return &Answer{
		Text: res.Answer, StopReason: res.StopReason, Iterations: res.Iterations,
		Elapsed: time.Duration(res.ElapsedMs) * time.Millisecond, Error: res.Error,
	}, nil
}
