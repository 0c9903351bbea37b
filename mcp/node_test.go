package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/fixture"
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
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	bin := binary(t)
	dir, err := filepath.Abs(filepath.Join("..", "examples", "mcp-client"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("node_modules missing and npm not installed: run `make node-deps`")
		}
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VAULT_AGENT_BIN="+bin, "VAULT_DIR="+fixture.Vault(), "QUIET=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	t.Logf("node client:\n%s", out)
}
