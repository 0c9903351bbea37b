package rpc_test

import (
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
