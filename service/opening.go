package service

import (
	"context"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/shared"
)

// Opening is a vault being opened in the background (Start), for a
// front-end that must answer at once while a first index is built, or
// that lets several requests wait for one open.
type Opening struct {
	s      *Service
	cancel context.CancelFunc
	done   chan struct{}
	err    error // read after done is closed

	// mu guards progDone and progTotal.
	mu                  sync.Mutex
	progDone, progTotal int
}

// progressEvery is how often Wait reports the progress of the open.
const progressEvery = 500 * time.Millisecond

// Start opens the vault of opts as Open does, but returns once the quick
// part is done: the settings are checked, the model built, the vault
// folder and the index opened and the agent started, so that errors there
// come at once (as Open's). The reconcile with the disk, which indexes
// every note of a new vault, and the watcher's start go on in the
// background, reporting to opts.Progress; Wait waits for them. The
// background work outlives ctx's cancellation: Close ends it.
func Start(ctx context.Context, opts Options) (*Opening, error) {
	s, err := begin(ctx, opts)
	if err != nil {
		return nil, err
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o := &Opening{s: s, cancel: cancel, done: make(chan struct{})}
	report := opts.Progress
	go func() {
		defer close(o.done)
		o.err = s.finish(bg, opts, func(done, total int) {
			o.mu.Lock()
			o.progDone, o.progTotal = done, total
			o.mu.Unlock()
			if report != nil {
				report(done, total)
			}
		})
		if o.err != nil {
			s.Close()
		}
	}()
	return o, nil
}

// Wait returns the Service once the vault is open (at once if it is), or
// the error that ended the open, or ctx's error. While it waits it reports
// the open's progress to progress (which may be nil) every half second,
// from the calling goroutine.
func (o *Opening) Wait(ctx context.Context, progress search.ProgressFunc) (*Service, error) {
	select {
	case <-o.done:
		return o.result()
	default:
	}
	var tick <-chan time.Time
	if progress != nil {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-o.done:
			return o.result()
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick:
			o.mu.Lock()
			done, total := o.progDone, o.progTotal
			o.mu.Unlock()
			progress(done, total)
		}
	}
}

func (o *Opening) result() (*Service, error) {
	if o.err != nil {
		return nil, o.err
	}
	return o.s, nil
}

// Index is the index being opened: it may be searched while the first
// reconcile runs (it holds the notes written so far).
func (o *Opening) Index() *shared.Index { return o.s.Index() }

// Progress is how far the reconcile with the disk is: notes done of total
// (0, 0 before it has counted them).
func (o *Opening) Progress() (done, total int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.progDone, o.progTotal
}

// Done is closed when the open has ended, well or not.
func (o *Opening) Done() <-chan struct{} { return o.done }

// Close stops the open if it still runs and closes the Service.
func (o *Opening) Close() error {
	o.cancel()
	<-o.done
	return o.s.Close()
}
