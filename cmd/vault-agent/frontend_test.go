package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/rpc/rpctest"
)

// TestFrontEndsReleaseWhenIdle starts each long-running front-end, waits
// until it says (in its debug log) that it gave memory back on going idle,
// and then checks that it still answers a request: the code it dropped is
// faulted back in.
func TestFrontEndsReleaseWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		params map[string]any
	}{
		{"serve", []string{"serve", "--codec", "line"}, map[string]any{"vault": fixture}},
		{"mcp", []string{"mcp", "--vault", fixture}, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "test", "version": "1"}}},
		{"acp", []string{"acp"}, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
			s := rpctest.StartBinary(t, binary, "line", append([]string{"--log-level", "debug"}, tc.args...)...)
			within(t, time.Now(), time.Minute, "the release on going idle", func() error {
				if !strings.Contains(s.Stderr(), "idle: memory released") {
					return errors.New("no release logged yet")
				}
				return nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Call(ctx, "initialize", tc.params, nil); err != nil {
				t.Fatalf("initialize after the release: %v", err)
			}
		})
	}
}
