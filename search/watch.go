package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

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
		for {
			// The changes made while a batch is applied come in the
			// next one: a burst of them is applied in few batches.
			b, err := w.Next(wctx)
			if err != nil {
				return
			}
			if err := ix.Apply(wctx, b); err != nil {
				if errors.Is(err, ErrClosed) || wctx.Err() != nil {
					return
				}
				ix.log.Error("applying vault changes", "err", err)
			}
		}
	}()
	return nil
}

// batch asking for a rescan (event overflow, watch limit) runs Sync.
func (ix *Index) Apply(ctx context.Context, b vault.Batch) error {
	if b.Rescan {
		ix.log.Warn("watcher asked for a full rescan", "reason", b.Reason)
		_, err := ix.Sync(ctx, nil)
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	ix.applies.Add(1)
	if ix.idx == nil || ix.pendingReason != "" || ix.interrupted {
		// The index must be rebuilt first, or its last change was cut
		// short; Sync sees to that.
		_, err := ix.syncLocked(ctx, nil)
		return err
	}
	needSync := false
	var reads, gone []string
	seen := make(map[string]bool, len(b.Changes))
	for i := len(b.Changes) - 1; i >= 0; i-- { // the last change of a path wins
		c := b.Changes[i]
		p := strings.TrimPrefix(c.Path, "./")
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		// Removed or not, the disk decides: a coalesced remove+create (an
		// atomic save) must not drop a note that exists.
		abs, err := ix.v.Resolve(p)
		if err != nil {
			ix.log.Warn("watcher change outside the vault", "path", p, "err", err)
			continue
		}
		st, err := os.Stat(abs)
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			gone = append(gone, ix.notesUnder(p)...)
		case err != nil:
			ix.log.Warn("cannot stat changed path", "path", p, "err", err)
		case st.IsDir():
			// A folder appeared (created or renamed into place): walking
			// the vault is cheap, a stat per note.
			needSync = true
		case vault.IsNotePath(p):
			reads = append(reads, p)
		}
	}
	if needSync {
		_, err := ix.syncLocked(ctx, nil)
		return err
	}
	var stats SyncStats
	var err error
	if fullLinkScan(ix.meta.len(), len(reads)+len(gone)) {
		// A large batch (a folder of notes copied in): as a sync does.
		_, err = ix.syncLocked(ctx, nil)
		return err
	}
	if len(reads)+len(gone) >= bulkNotes {
		// A branch switch: written in batches under the memory settings
		// of a first index.
		restore := bulkMemoryLimit()
		defer func() {
			ix.waitSettled(ctx)
			restore()
		}()
	}
	if err = ix.applyIncremental(ctx, reads, gone, nil, &stats); err != nil {
		return fmt.Errorf("apply changes: %w", err)
	}
	ix.mu.Lock()
	ix.lastIndexed = time.Now()
	ix.mu.Unlock()
	ix.notify()
	return nil
}

// notesUnder returns the note at p, or every note under p when p is a
// folder that went away.
func (ix *Index) notesUnder(p string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var gone []string
	if ix.meta.get(p) != nil {
		gone = append(gone, p)
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	for m := range ix.meta.all() {
		if strings.HasPrefix(m.Path, prefix) {
			gone = append(gone, m.Path)
		}
	}
	return gone
}
