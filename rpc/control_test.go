package rpc_test

import (
	"context"
	"testing"

	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
)

// TestControlNotBlockedByWork: while vault/readNote of a huge note is still
// reading, the control methods (vault/status, agent/stop, agent/input) are
// answered.
func TestControlNotBlockedByWork(t *testing.T) {
	noLeaks(t)
	reading := make(chan struct{})
	release := make(chan struct{})
	s := start(t, rpc.Config{}, func(srv *rpc.Server) {
		rpc.SetBeforeCall(srv, func(ctx context.Context, method string) {
			if method == protocol.MethodVaultReadNote {
				close(reading)
				<-release
			}
		})
	})
	initialize(t, s, nil)
	ctx := ctxT(t)
	read, err := s.Start("vault/readNote", map[string]any{"path": "recipes/Sourdough Starter.md"})
	if err != nil {
		t.Fatal(err)
	}
	<-reading
	var st protocol.StatusResult
	if err := s.Call(ctx, "vault/status", nil, &st); err != nil || st.Notes == 0 {
		t.Fatalf("vault/status while a note is read = %+v, %v", st, err)
	}
	var stop protocol.AgentStopResult
	if err := s.Call(ctx, "agent/stop", map[string]any{"runId": "none"}, &stop); err != nil {
		t.Fatalf("agent/stop while a note is read: %v", err)
	}
	var in protocol.AgentInputResult
	if err := s.Call(ctx, "agent/input", map[string]any{"runId": "none", "content": "x"}, &in); err != nil {
		t.Fatalf("agent/input while a note is read: %v", err)
	}
	close(release)
	if resp, err := read.Wait(ctx); err != nil || resp.Error != nil {
		t.Fatalf("readNote = %+v, %v", resp, err)
	}
}
