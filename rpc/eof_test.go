package rpc_test

import (
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/rpc"
)

// TestEOFDuringRequest closes the host's end right after a request, before
// its reply: Serve ends cleanly, with no panic and no failure logged (the
// reply has nowhere to go, which is what the host asked for).
func TestEOFDuringRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		init   bool
		method string
		params map[string]any
	}{
		{name: "initialize", method: "initialize", params: map[string]any{"vault": fixtureVault}},
		{name: "search", init: true, method: "vault/search", params: map[string]any{"query": "sourdough"}},
		{name: "readNote", init: true, method: "vault/readNote", params: map[string]any{"path": "missing.md"}},
		{name: "run", init: true, method: "agent/run", params: map[string]any{"message": "what is sourdough?"}},
		{name: "shutdown", init: true, method: "shutdown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			s := start(t, rpc.Config{Codec: rpc.CodecLine})
			if tc.init {
				initialize(t, s, nil)
			}
			if _, err := s.Start(tc.method, tc.params); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if err := s.Wait(ctxT(t)); err != nil {
				t.Fatalf("Serve after EOF = %v, want nil", err)
			}
			for _, line := range strings.Split(s.Stderr(), "\n") {
				if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
					t.Errorf("logged on a clean EOF: %s", line)
				}
			}
		})
	}
}

// TestShutdownAnswersEarlierRequests sends a run, a search, shutdown and
// exit back to back: the requests received before shutdown are answered
// (the run stopped, or cancelled with -32800) before shutdown's reply, and
// none is lost when exit follows at once.
func TestShutdownAnswersEarlierRequests(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{Model: slowModel()})
	initialize(t, s, nil)
	ctx := ctxT(t)
	run, err := s.Start("agent/run", map[string]any{"message": "wait", "runId": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AwaitNotification(ctx, "agent/update", updateIs("r1", "agent_turn_start")); err != nil {
		t.Fatal(err)
	}
	search, _ := s.Start("vault/search", map[string]any{"query": "sourdough starter"})
	shutdown, _ := s.Start("shutdown", nil)
	s.Notify("exit", nil)
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("Serve = %v, want nil after shutdown and exit", err)
	}
	for _, c := range []*rpctest.Call{run, search, shutdown} {
		resp, err := c.Wait(ctx)
		if err != nil {
			t.Fatalf("%s got no reply: %v", c.Method, err)
		}
		if resp.Error != nil && (c.Method != "agent/run" || resp.Error.Code != protocol.CodeRequestCancelled) {
			t.Errorf("%s: %+v", c.Method, resp.Error)
		}
	}
	order := s.ResponseOrder()
	if last := order[len(order)-1]; last != string(shutdown.ID) {
		t.Errorf("responses arrived in the order %v; want shutdown (%s) last", order, shutdown.ID)
	}
	if strings.Contains(s.Stderr(), "reply failed") {
		t.Errorf("a reply failed:\n%s", s.Stderr())
	}
}

// TestShutdownDuringInitialize: shutdown right after initialize cancels it
// (or lets it finish) and answers it first; the index it opened is closed.
func TestShutdownDuringInitialize(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	ctx := ctxT(t)
	init, _ := s.Start("initialize", map[string]any{"vault": fixtureVault})
	shutdown, _ := s.Start("shutdown", nil)
	resp, err := init.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil && resp.Error.Code != protocol.CodeRequestCancelled {
		t.Errorf("initialize: %+v, want a result or -32800", resp.Error)
	}
	if resp, err := shutdown.Wait(ctx); err != nil || resp.Error != nil {
		t.Fatalf("shutdown: %+v, %v", resp, err)
	}
	if order := s.ResponseOrder(); len(order) != 2 || order[1] != string(shutdown.ID) {
		t.Errorf("responses arrived in the order %v; want initialize then shutdown", order)
	}
	wantCode(t, s.Call(ctx, "vault/status", nil, nil), -32600, "shutdown")
	s.Notify("exit", nil)
	if err := s.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
