package search

import (
	"context"
	"errors"
	"io/fs"
	"sync"

	"github.com/vault-agent/vault-agent/vault"
)

func isNotExist(err error) bool {
	return errors.Is(err, vault.ErrNotFound) || errors.Is(err, fs.ErrNotExist)
}

// noteRead is one note read and parsed, with its links, or the error.
type noteRead struct {
	path  string
	seq   int // its place in the paths read
	note  *vault.Note
	links []vault.LinkContext
	err   error
}

// readNotes reads, parses and scans the links of paths with a pool of
// workers and hands each result to fn, in the order of paths, on the
// calling goroutine (so it may touch the writer). With linksOnly, the
// notes are not parsed: the results have their links and no note.
func (ix *Index) readNotes(ctx context.Context, paths []string, linksOnly bool, fn func(noteRead) error) error {
	if len(paths) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		seq int
		p   string
	}
	jobs := make(chan job)
	// The workers read and parse ahead while the writer waits for a
	// batch to be analysed and written: up to half a batch of notes, in
	// flight or waiting for the notes before them.
	ahead := max(2*ix.workers, min(len(paths), ix.batchSz/2))
	slots := make(chan struct{}, ahead)
	results := make(chan noteRead, ahead)
	var wg sync.WaitGroup
	for i := 0; i < ix.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := noteRead{path: j.p, seq: j.seq}
				raw, err := ix.v.ReadRaw(j.p, -1)
				if err != nil {
					r.err = err
				} else {
					if !linksOnly {
						r.note = vault.ParseForIndex(raw.Path, raw.Content, raw.ModTime)
					}
					r.links = vault.LinkContexts(raw.Path, raw.Content)
				}
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i, p := range paths {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{i, p}:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	// The notes in flight are those from next to next+ahead-1: each waits
	// in its slot of ready until the ones before it were handed over.
	ready := make([]*noteRead, ahead)
	next := 0
	for r := range results {
		ready[r.seq%ahead] = &r
		for ready[next%ahead] != nil {
			r := ready[next%ahead]
			ready[next%ahead] = nil
			next++
			<-slots
			if err := fn(*r); err != nil {
				cancel()
				for range results {
				}
				return err
			}
		}
	}
	return ctx.Err()
}
