package rpc

import (
	"context"
	"fmt"
	"time"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/search"
)

// Search runs vault/search.
func (s *Server) Search(ctx context.Context, p *protocol.SearchParams) (*protocol.Results, error) {
	if o := s.openingNow(); o != nil {
		return nil, stillIndexing(o)
	}
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	if p.Limit < 0 {
		return nil, fieldError("limit", "must be between 1 and 100, got %d", p.Limit)
	}
	switch p.Mode {
	case "", search.ModeLexical, search.ModeSemantic, search.ModeHybrid:
	default:
		return nil, fieldError("mode", "must be lexical, semantic or hybrid, got %q", p.Mode)
	}
	req := search.Request{Query: p.Query, Limit: p.Limit, Tags: p.Tags, Folders: p.Folders, Mode: p.Mode}
	if tr := p.TimeRange; tr != nil {
		if tr.StartTime < 0 || tr.EndTime < 0 {
			return nil, fieldError("timeRange", "times must be epoch milliseconds (not negative)")
		}
		if tr.StartTime > 0 && tr.EndTime > 0 && tr.StartTime > tr.EndTime {
			return nil, fieldError("timeRange", "startTime %d is after endTime %d", tr.StartTime, tr.EndTime)
		}
		if tr.StartTime > 0 {
			req.From = time.UnixMilli(tr.StartTime)
		}
		if tr.EndTime > 0 {
			req.To = time.UnixMilli(tr.EndTime)
		}
	}
	res, err := svc.Search(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", truncate.Runes(p.Query, 200), err)
	}
	return WireResults(res), nil
}

// Related runs vault/related.
func (s *Server) Related(ctx context.Context, p *protocol.RelatedParams) (*protocol.Results, error) {
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	if p.Path == "" {
		return nil, required(protocol.MethodVaultRelated, "path", "a vault path, a title or a [[wikilink]]")
	}
	if p.Limit < 0 {
		return nil, fieldError("limit", "must be between 1 and 100, got %d", p.Limit)
	}
	res, err := svc.Related(ctx, p.Path, p.Limit)
	if err != nil {
		return nil, err
	}
	return WireResults(res), nil
}

// ReadNote runs vault/readNote: the same chunk the agent's readNote tool
// returns.
func (s *Server) ReadNote(ctx context.Context, p *protocol.ReadNoteParams) (*protocol.NoteChunk, error) {
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	if p.Path == "" {
		return nil, required(protocol.MethodVaultReadNote, "path", "a vault path, a title or a [[wikilink]]")
	}
	chunk := 0
	if p.ChunkIndex != nil {
		chunk = *p.ChunkIndex
	}
	if chunk < 0 {
		return nil, fieldError("chunkIndex", "must not be negative, got %d", chunk)
	}
	c, err := svc.Index().ReadChunk(p.Path, chunk)
	if err != nil {
		return nil, err
	}
	return wireChunk(c), nil
}

// Status runs vault/status.
func (s *Server) Status(ctx context.Context, _ *protocol.NoParams) (*protocol.StatusResult, error) {
	if o := s.openingNow(); o != nil {
		return openingStatus(o), nil
	}
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	st := svc.Index().Status()
	res := &protocol.StatusResult{Notes: st.Notes, Indexing: st.Indexing, Watching: st.Watching}
	if !st.LastIndexedAt.IsZero() {
		res.LastIndexedAt = st.LastIndexedAt.UnixMilli()
	}
	return res, nil
}

// Reindex runs vault/reindex.
func (s *Server) Reindex(ctx context.Context, p *protocol.ReindexParams) (*protocol.ReindexResult, error) {
	svc, err := s.open()
	if err != nil {
		return nil, err
	}
	idx := svc.Index()
	start := time.Now()
	prog := s.newProgress()
	if p.Full {
		_, err = idx.Rebuild(ctx, prog.report)
	} else {
		_, err = idx.Sync(ctx, prog.report)
	}
	prog.finish()
	if err != nil {
		return nil, fmt.Errorf("reindex: %w", err)
	}
	return &protocol.ReindexResult{Notes: idx.Count(), TookMs: millis(time.Since(start))}, nil
}
