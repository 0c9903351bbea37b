package rpc_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestNodeClient runs examples/node-client/client.mjs (vscode-jsonrpc, the
// library editor plugins use) against the built binary. It is skipped only
// when node is not installed; `make test` installs the npm packages first,
// and the test runs `npm ci` itself when they are missing.
func TestNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	bin := binary(t)
	dir, err := filepath.Abs(filepath.Join("..", "examples", "node-client"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "vscode-jsonrpc")); err != nil {
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
	cmd.Env = append(os.Environ(),
		"VAULT_AGENT_BIN="+bin,
		"VAULT_DIR="+fixtureVault,
		"VAULT_AGENT_INDEX="+filepath.Join(t.TempDir(), "index"),
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=",
		"QUIET=1",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	t.Logf("node client:\n%s", out)
}
