package mcp_test

import (
	"os"
	"sync"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/internal/nodetest"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds cmd/vault-agent once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vault-agent-mcp-test")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = rpctest.BuildBinary("..", dir)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// TestNodeClient runs examples/mcp-client/client.mjs (the official MCP
// TypeScript SDK's Client and StdioClientTransport) against the built
// binary. It is skipped only when node is not installed; `make test`
// installs the npm packages first, and the test runs `npm ci` itself when
// they are missing.
func TestNodeClient(t *testing.T) {
	nodetest.Run(t, "mcp-client", "@modelcontextprotocol/sdk",
		"VAULT_AGENT_BIN="+binary(t), "VAULT_DIR="+fixture.Vault(), "QUIET=1")
}
