package search

import (
	"context"
	"errors"
	"fmt"

	"github.com/vault-agent/vault-agent/vault"
)

// Watch starts the vault watcher and applies its batches in the background
// until ctx is done or the index is closed. It returns once the watcher is
// set up; Status().Watching tells whether it is still running. Each applied
// batch signals Subscribe channels.
func (ix *Index) Watch(ctx context.Context) error {
	if ix.isClosed() {
		return ErrClosed
	}
	ix.subsMu.Lock()
	if ix.watchCancel != nil {
		ix.subsMu.Unlock()
		return errors.New("search: already watching")
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := ix.v.Watch(wctx, vault.WatchOptions{Debounce: ix.opts.Debounce, Logger: ix.log})
	if err != nil {
		ix.subsMu.Unlock()
		cancel()
		return fmt.Errorf("watch vault: %w", err)
	}
	done := make(chan struct{})
	ix.watchCancel, ix.watchDone = cancel, done
	ix.watching.Store(true)
	ix.subsMu.Unlock()

	go func() {
		defer close(done)
		defer func() {
			ix.watching.Store(false)
			ix.subsMu.Lock()
			if ix.watchDone == done {
				ix.watchCancel, ix.watchDone = nil, nil
			}
			ix.subsMu.Unlock()
			cancel()
		}()
		defer w.Close()
		batches := w.Batches()
		for {
			select {
			case <-wctx.Done():
				return
			case b, ok := <-batches:
				if !ok {
					return
				}
				if err := ix.Apply(wctx, b); err != nil {
					if errors.Is(err, ErrClosed) || wctx.Err() != nil {
						return
					}
					ix.log.Error("applying vault changes", "err", err)
				}
			}
		}
	}()
	return nil
}
