package rpc

import (
	"context"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/service"
)

// While initialize builds the first index of a vault, which takes minutes
// for a large one, vault/status answers with the progress and vault/search
// with an error that says how far indexing is, instead of both being
// refused as before initialize.

// openService opens the vault as service.Open does, keeping the opening
// where Status and Search find it until it ends.
func (s *Server) openService(ctx context.Context, opts service.Options) (*service.Service, error) {
	if hook, report := s.progressHook, opts.Progress; hook != nil {
		opts.Progress = func(done, total int) {
			hook(done, total)
			if report != nil {
				report(done, total)
			}
		}
	}
	o, err := service.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.opening = o
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.opening = nil
		s.mu.Unlock()
	}()
	svc, err := o.Wait(ctx, nil)
	if err != nil {
		o.Close() // cancelled: stop the reconcile and close what was opened
		return nil, err
	}
	return svc, nil
}

// openingNow is the vault being opened by initialize, or nil.
func (s *Server) openingNow() *service.Opening {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateInitializing {
		return nil
	}
	return s.opening
}

func openingStatus(o *service.Opening) *protocol.StatusResult {
	st := o.Index().Status()
	done, total := o.Progress()
	return &protocol.StatusResult{Notes: st.Notes, Indexing: true, Watching: st.Watching,
		Progress: &protocol.IndexProgressParams{Done: done, Total: total}}
}

// stillIndexing is the answer to a search sent while initialize builds the
// index.
func stillIndexing(o *service.Opening) error {
	done, total := o.Progress()
	how := "counting the notes"
	if total > 0 {
		how = fmt.Sprintf("%d of %d notes indexed (%d%%)", done, total, done*100/total)
	}
	return &jsonrpc2.Error{Code: protocol.CodeServerNotInitialized,
		Message: fmt.Sprintf("still indexing: %s; search again once initialize has answered (vault/status shows the progress)", how)}
}
