package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// Backend opens the vault each session's cwd names. Sessions on one folder
// share one opened vault, which stays open while a session uses it.
type Backend interface {
	// Open returns the vault whose root is the absolute folder root,
	// opening, indexing and watching it on first use, for one more
	// session; the session Releases it when it ends. It fails with
	// ErrNotAVault when root is not a usable folder and ErrVaultBusy when
	// its index is held by another process that does not share it, or
	// already given to another vault.
	Open(ctx context.Context, root string) (Vault, error)
	// Close stops every run and closes every vault.
	Close() error
}

// Vault is one opened vault, shared by the sessions on its folder, and
// safe for concurrent use.
type Vault interface {
	// Root is the vault's absolute folder.
	Root() string
	// Run runs the agent once (service.Service.Run): events reach sink in
	// order until Run returns with the run's result; closing req.Stop, or
	// cancelling ctx, stops it.
	Run(ctx context.Context, req service.RunRequest, sink agent.Sink) (*agent.Result, error)
	// ReadNote reads the note that name (a vault path, a title or a
	// [[wikilink]]) designates, resolved safely inside the vault, with its
	// text capped at maxBytes.
	ReadNote(name string, maxBytes int) (*Note, error)
	// Release says that one session no longer uses the vault; the last
	// release closes it.
	Release()
}

// Note is a note read for an @-mention.
type Note struct {
	// Path is the vault-relative slash path.
	Path  string
	Title string
	// Text is the note's body, capped; Truncated says whether it was cut.
	Text      string
	Truncated bool
}

// Errors a Backend returns; the server maps them onto JSON-RPC errors.
var (
	// ErrNotAVault marks a session cwd that cannot be opened as a vault.
	ErrNotAVault = errors.New("not a vault folder")
	// ErrVaultBusy marks a vault whose index another process holds without
	// sharing it, or an --index folder already used by another vault.
	ErrVaultBusy = errors.New("vault index busy")
)

// NewBackend returns the Backend that opens vaults with service.Start, each
// with opts (Vault aside: the session's cwd names it). opts.Model, when
// set, serves every vault. A set opts.Index serves one vault only.
func NewBackend(opts service.Options) Backend {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FrontEnd == "" {
		opts.FrontEnd = "acp"
	}
	return &vaults{opts: opts, open: map[string]*entry{}}
}

// vaults keeps one service.Opening per vault folder, with the number of
// sessions using it.
type vaults struct {
	opts service.Options

	// mu guards open and closed.
	mu     sync.Mutex
	open   map[string]*entry // by real folder
	closed bool
}

type entry struct {
	root string
	// ready is closed once the vault's quick open (service.Start) is done;
	// then opening or err is set, never changed after.
	ready   chan struct{}
	opening *service.Opening
	err     error
	users   int // guarded by vaults.mu
}

func (b *vaults) Open(ctx context.Context, root string) (Vault, error) {
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
	e, starting, err := b.take(real, root)
	if err != nil {
		return nil, err
	}
	if starting {
		// The reconcile outlives the session/new that asked for it, so a
		// client giving up does not leave a half-built index. The lock is
		// not held meanwhile: other sessions, and Close, go on.
		opts := b.opts
		opts.Vault = real
		opts.Progress = progressLog(b.opts.Logger, real)
		e.opening, e.err = start(context.WithoutCancel(ctx), opts)
		close(e.ready)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		b.release(e)
		return nil, ctx.Err()
	}
	if e.err != nil {
		b.release(e)
		return nil, openError(e.err)
	}
	svc, err := e.opening.Wait(ctx, nil)
	if err != nil {
		b.release(e)
		return nil, openError(err)
	}
	return handle{e: e, b: b, svc: svc}, nil
}

// take counts one more user of the vault at real, making its entry when
// there is none (starting: the caller opens it).
func (b *vaults) take(real, root string) (e *entry, starting bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false, errors.New("the server is shutting down")
	}
	e, ok := b.open[real]
	if !ok {
		if b.opts.Index != "" {
			for other := range b.open {
				return nil, false, fmt.Errorf("%w: --index %s is the index of the vault %s; run another vault-agent acp for %s, or start it without --index", ErrVaultBusy, b.opts.Index, other, root)
			}
		}
		e = &entry{root: real, ready: make(chan struct{})}
		b.open[real] = e
		starting = true
	}
	e.users++
	return e, starting, nil
}

// start opens a vault with service.Start; a panic in it is an error of
// this session's open, not the end of the server.
func start(ctx context.Context, opts service.Options) (o *service.Opening, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("opening the vault %s failed: %v", opts.Vault, r)
			opts.Logger.Error("opening a vault panicked", "vault", opts.Vault, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	return service.Start(ctx, opts)
}

// openError marks the errors of opening a vault as the server maps them.
func openError(err error) error {
	var oe *service.OpenError
	if !errors.As(err, &oe) {
		return err
	}
	switch {
	case oe.Part == service.PartVault:
		return fmt.Errorf("%w: %v", ErrNotAVault, err)
	case errors.Is(err, search.ErrLocked):
		return fmt.Errorf("%w: the index %s is in use by another vault-agent process that does not share it (an older version?); stop it or pass another --index: %v", ErrVaultBusy, oe.Path, oe.Err)
	}
	return err
}

// progressLog logs the indexing of a vault every few seconds.
func progressLog(log *slog.Logger, root string) search.ProgressFunc {
	var last time.Time
	return func(done, total int) {
		if time.Since(last) >= 2*time.Second {
			last = time.Now()
			log.Info("indexing", "vault", root, "done", done, "total", total)
		}
	}
}

// release drops one user of e, closing its vault after the last.
func (b *vaults) release(e *entry) {
	b.mu.Lock()
	e.users--
	last := e.users == 0 && b.open[e.root] == e
	if last {
		delete(b.open, e.root)
	}
	b.mu.Unlock()
	if last {
		<-e.ready // its opener is the user that released it or is still counted
		if e.opening != nil {
			if err := e.opening.Close(); err != nil {
				b.opts.Logger.Warn("closing a vault", "vault", e.root, "error", err)
			}
		}
	}
}

func (b *vaults) Close() error {
	b.mu.Lock()
	b.closed = true
	entries := make([]*entry, 0, len(b.open))
	for _, e := range b.open {
		entries = append(entries, e)
	}
	b.open = map[string]*entry{}
	b.mu.Unlock()
	var errs []error
	for _, e := range entries {
		<-e.ready
		if e.opening != nil {
			errs = append(errs, e.opening.Close())
		}
	}
	return errors.Join(errs...)
}

// handle is one session's use of an opened vault. Handles of one vault are
// equal.
type handle struct {
	e   *entry
	b   *vaults
	svc *service.Service
}

func (h handle) Root() string { return h.e.root }

func (h handle) Run(ctx context.Context, req service.RunRequest, sink agent.Sink) (*agent.Result, error) {
	return h.svc.Run(ctx, req, sink)
}

func (h handle) ReadNote(name string, maxBytes int) (*Note, error) {
	n, err := h.svc.Index().ReadNote(name)
	if err != nil {
		return nil, err
	}
	out := &Note{Path: n.Path, Title: n.Title}
	out.Text, out.Truncated = capText(n.Body, maxBytes)
	return out, nil
}

func (h handle) Release() { h.b.release(h.e) }
