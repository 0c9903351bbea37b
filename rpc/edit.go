package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/service"
)

// applyEditSeq numbers the sidecar's vault/applyEdit requests; their ids
// are strings, apart from any id the host uses.
var applyEditSeq atomic.Int64

// hostApprover asks the host about each edit of one run with a
// vault/applyEdit request. A run waits on it while the read loop delivers
// the answer, so it must not be called from the read loop (agent/run is
// slow: it never is).
type hostApprover struct {
	s     *Server
	runID string
}

// Approve sends vault/applyEdit and waits for the answer until ctx ends
// (the request-input timeout, a stop); then it sends $/cancelRequest for
// the request, so the host can close its dialog.
func (h hostApprover) Approve(ctx context.Context, p *service.EditProposal) (service.Decision, error) {
	h.s.mu.Lock()
	conn := h.s.conn
	h.s.mu.Unlock()
	if conn == nil {
		return service.Decision{}, errors.New("no host connection")
	}
	id := jsonrpc2.ID{Str: fmt.Sprintf("%s-%d", protocol.MethodApplyEdit, applyEditSeq.Add(1)), IsString: true}
	params := &protocol.ApplyEditParams{
		RunID:     h.runID,
		Path:      p.Path,
		URI:       (&url.URL{Scheme: "file", Path: filepath.ToSlash(p.Abs)}).String(),
		Operation: p.Op,
		Diff:      p.Diff,
		Hash:      p.BaseHash,
		Create:    p.Create,
		NewText:   p.After,
	}
	call, err := conn.DispatchCall(ctx, protocol.MethodApplyEdit, params, jsonrpc2.PickID(id))
	if err != nil {
		return service.Decision{}, fmt.Errorf("send %s: %w", protocol.MethodApplyEdit, err)
	}
	var res protocol.ApplyEditResult
	if err := call.Wait(ctx, &res); err != nil {
		if ctx.Err() != nil {
			_ = conn.Notify(context.WithoutCancel(ctx), protocol.MethodCancelRequest, &protocol.CancelParams{ID: json.RawMessage(strconv.Quote(id.Str))})
		}
		return service.Decision{}, err
	}
	return service.Decision{Approved: res.Applied, Reason: res.Reason}, nil
}
