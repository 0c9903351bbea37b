package shared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/vault"
)

// Options say which index to open and how to share it.
type Options struct {
	// Path is the index folder; "" keeps a private index in memory, which
	// is never shared.
	Path string
	// Socket is where the holder of the index serves it; "" shares
	// nothing: another process holding the index is then search.ErrLocked,
	// as on platforms without Unix sockets.
	Socket string
	Vault  *vault.Vault
	Logger *slog.Logger
	// FrontEnd names this process for `vault-agent status` ("mcp",
	// "serve", "search"...).
	FrontEnd string
	// Version is the program's version, which the holder reports.
	Version string
	// Embedder, when set, makes the vectors of semantic search while this
	// process holds the index; VectorsPath is their file ("": memory).
	Embedder    semantic.Embedder
	VectorsPath string
	// CallTimeout bounds each forwarded call, and the wait for a holder
	// while the index changes hands (0: 20 s). A long operation (a sync)
	// is bounded instead by the holder's heartbeats: it fails when the
	// holder is silent for that long.
	CallTimeout time.Duration
	// ConnectWait is how long Open tries to reach the holder when the
	// index is locked but no process answers on the socket yet (it may be
	// opening the index, or be an older vault-agent that does not share
	// it); then Open fails with search.ErrLocked (0: fail at once).
	ConnectWait time.Duration
	// Debounce is handed to the vault watcher (0: its default).
	Debounce time.Duration
}

const defaultCallTimeout = 20 * time.Second

// Index is a vault's index, held by this process or reached through the
// process holding it. Its methods are those of *search.Index (Search also
// answers semantic and hybrid searches) and may be called from any
// goroutine. Calls on a forwarded index fail with the holder's error, or
// with ErrNoAnswer, ErrUnavailable or a connection error; the methods
// without an error (Count, Paths, Tags, Notes, Note, Status, ResolveLink,
// Created) then log it and return nothing.
type Index struct {
	opts Options
	v    *vault.Vault
	log  *slog.Logger

	feeds feeds // Subscribe and SubscribeChanges

	// bg is the lifetime of background work (takeovers, the holder's
	// watcher and its server); Close cancels it and waits for wg.
	bg     context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards the fields below.
	mu sync.Mutex
	// cur is this process's role: *holding or *following; nil while the
	// index changes hands, lastErr saying why.
	cur     role
	lastErr error
	// changed is closed, and replaced, when cur changes.
	changed chan struct{}
	closed  bool
}

// role is *holding or *following.
type role interface {
	close() error
}

// Open opens the index of opts: this process holds it when it can take
// its lock, and otherwise reaches the process that holds it. It does not
// read the vault: Start brings the index up to date.
func Open(ctx context.Context, opts Options) (*Index, error) {
	if opts.Vault == nil {
		return nil, errors.New("shared: Options.Vault is nil")
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = defaultCallTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	x := &Index{opts: opts, v: opts.Vault, log: log.With("component", "shared"), bg: bg, cancel: cancel, changed: make(chan struct{})}
	deadline := time.Now().Add(opts.ConnectWait)
	wait := 20 * time.Millisecond
	warned := false
	for {
		r, err := x.elect(ctx, false)
		if err == nil {
			x.cur = r
			return x, nil
		}
		if !errors.As(err, new(notServed)) || !time.Now().Before(deadline) {
			cancel()
			return nil, err
		}
		if !warned {
			warned = true
			x.log.Warn("the index is in use by another process that does not share it (yet); waiting for it to exit or to share it",
				"index", opts.Path, "wait", opts.ConnectWait, "error", err)
		}
		t := time.NewTimer(min(wait, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			cancel()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// notServed marks an index locked by a process that does not answer on
// the socket (yet), or by any process when nothing is shared: one more
// try, a little later, may reach it or find it free.
type notServed struct{ error }

func (e notServed) Unwrap() error { return e.error }

// elect makes this process the holder when the index's lock is free, and
// otherwise connects it to the holder.
func (x *Index) elect(ctx context.Context, takeover bool) (role, error) {
	if x.opts.Path == "" {
		return x.hold(ctx, takeover)
	}
	var lockErr error
	pid, locked := search.Locked(x.opts.Path)
	if !locked {
		h, err := x.hold(ctx, takeover)
		if !errors.Is(err, search.ErrLocked) {
			return h, err
		}
		lockErr = err
		pid, _ = search.Locked(x.opts.Path)
	}
	if x.opts.Socket == "" || !socketsSupported {
		if lockErr == nil {
			h, err := x.hold(ctx, takeover)
			if !errors.Is(err, search.ErrLocked) {
				return h, err
			}
			lockErr = err
		}
		return nil, notServed{lockErr}
	}
	f, err := x.follow(ctx)
	if err == nil {
		return f, nil
	}
	if errors.Is(err, ErrIncompatible) {
		return nil, err
	}
	who := ""
	if pid > 0 {
		who = fmt.Sprintf(" (pid %d)", pid)
	}
	return nil, notServed{fmt.Errorf("%w%s, which does not share it (an older vault-agent, or one still opening the index): %v; stop it or pass another --index",
		search.ErrLocked, who, err)}
}

// role returns this process's role, waiting (up to the call timeout) while
// the index changes hands.
func (x *Index) role(ctx context.Context) (role, error) {
	var timeout <-chan time.Time
	for {
		x.mu.Lock()
		if x.closed {
			x.mu.Unlock()
			return nil, search.ErrClosed
		}
		r, changed, lastErr := x.cur, x.changed, x.lastErr
		x.mu.Unlock()
		if r != nil {
			return r, nil
		}
		if timeout == nil {
			t := time.NewTimer(x.opts.CallTimeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, fmt.Errorf("%w: no process has taken over the index %s after its holder went away: %v", ErrUnavailable, x.opts.Path, lastErr)
		}
	}
}

// setRole makes r this process's role (nil: none, for why).
func (x *Index) setRole(r role, why error) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false
	}
	x.cur, x.lastErr = r, why
	close(x.changed)
	x.changed = make(chan struct{})
	return true
}

// lost is called when the connection of f to the holder closed: the
// holder exited or died. This process then takes the index over, or
// reconnects to whichever process did.
func (x *Index) lost(f *following) {
	x.mu.Lock()
	if x.cur != f || x.closed {
		x.mu.Unlock()
		return
	}
	x.cur, x.lastErr = nil, errConnLost
	close(x.changed)
	x.changed = make(chan struct{})
	// Added with mu held and the index open, so never after Close's Wait.
	x.wg.Add(1)
	x.mu.Unlock()
	f.close()
	x.log.Info("the process holding the index went away; taking it over or reconnecting", "holder", f.info.PID, "index", x.opts.Path)
	go func() {
		defer x.wg.Done()
		x.reelect()
	}()
}

// reelect tries, until it succeeds or the index is closed, to hold the
// index or to reach the process that does.
func (x *Index) reelect() {
	wait := 10 * time.Millisecond
	for x.bg.Err() == nil {
		r, err := x.elect(x.bg, true)
		if err == nil {
			if !x.setRole(r, nil) {
				_ = r.close()
			}
			return
		}
		x.mu.Lock()
		x.lastErr = err
		x.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-x.bg.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// Holding reports whether this process holds the index (rather than
// forwarding to the process that does).
func (x *Index) Holding() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.cur.(*holding)
	return ok
}

// Semantic is the vectors of semantic search of this process, when it
// holds the index and has an embedding model; nil otherwise.
func (x *Index) Semantic() *semantic.Engine {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h, ok := x.cur.(*holding); ok {
		return h.sem
	}
	return nil
}

// Close closes the index: the holder stops serving (the others take it
// over) and closes the index; a follower closes its connection.
func (x *Index) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	r := x.cur
	x.cur = nil
	close(x.changed)
	x.mu.Unlock()
	x.cancel()
	var err error
	if r != nil {
		err = r.close()
	}
	x.wg.Wait()
	x.feeds.closeAll()
	return err
}
