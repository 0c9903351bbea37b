package rpc

import (
	"context"
	"fmt"
	"time"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/search"
)

// index returns the open index, or an error once the server stopped.
func (s *Server) openIndex() (*search.Index, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index == nil {
		return nil, errShutDown
	}
	return s.index, nil
}

// search runs vault/search.
func (s *Server) search(ctx context.Context, p *SearchParams) (*search.Results, error) {
	idx, err := s.openIndex()
	if err != nil {
		return nil, err
	}
	if p.Limit < 0 {
		return nil, &paramError{field: "limit", msg: fmt.Sprintf("must be between 1 and 100, got %d", p.Limit)}
	}
	req := search.Request{Query: p.Query, Limit: p.Limit, Tags: p.Tags, Folders: p.Folders}
	if tr := p.TimeRange; tr != nil {
		if tr.StartTime < 0 || tr.EndTime < 0 {
			return nil, &paramError{field: "timeRange", msg: "times must be epoch milliseconds (not negative)"}
		}
		if tr.StartTime > 0 && tr.EndTime > 0 && tr.StartTime > tr.EndTime {
			return nil, &paramError{field: "timeRange", msg: fmt.Sprintf("startTime %d is after endTime %d", tr.StartTime, tr.EndTime)}
		}
		if tr.StartTime > 0 {
			req.From = time.UnixMilli(tr.StartTime)
		}
		if tr.EndTime > 0 {
			req.To = time.UnixMilli(tr.EndTime)
		}
	}
	res, err := idx.Search(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", truncate.Runes(p.Query, 200), err)
	}
	if res.Results == nil {
		res.Results = []search.Result{}
	}
	return res, nil
}

// readNote runs vault/readNote: the same chunk the agent's readNote tool
// returns.
func (s *Server) readNote(ctx context.Context, p *ReadNoteParams) (*search.NoteChunk, error) {
	idx, err := s.openIndex()
	if err != nil {
		return nil, err
	}
	if p.Path == "" {
		return nil, required(MethodVaultReadNote, "path", "a vault path, a title or a [[wikilink]]")
	}
	chunk := 0
	if p.ChunkIndex != nil {
		chunk = *p.ChunkIndex
	}
	if chunk < 0 {
		return nil, &paramError{field: "chunkIndex", msg: fmt.Sprintf("must not be negative, got %d", chunk)}
	}
	return idx.ReadChunk(p.Path, chunk)
}

// status runs vault/status.
func (s *Server) status(ctx context.Context, _ *noParams) (*StatusResult, error) {
	idx, err := s.openIndex()
	if err != nil {
		return nil, err
	}
	st := idx.Status()
	res := &StatusResult{Notes: st.Notes, Indexing: st.Indexing, Watching: st.Watching}
	if !st.LastIndexedAt.IsZero() {
		res.LastIndexedAt = st.LastIndexedAt.UnixMilli()
	}
	return res, nil
}

// reindex runs vault/reindex.
func (s *Server) reindex(ctx context.Context, p *ReindexParams) (*ReindexResult, error) {
	idx, err := s.openIndex()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	prog := s.newProgress()
	if p.Full {
		_, err = idx.Rebuild(ctx, prog.report)
	} else {
		_, err = idx.Sync(ctx, prog.report)
	}
	prog.finish(idx.Count())
	if err != nil {
		return nil, fmt.Errorf("reindex: %w", err)
	}
	return &ReindexResult{Notes: idx.Count(), TookMs: millis(time.Since(start))}, nil
}
