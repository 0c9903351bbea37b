package acp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/fixture"
)

// TestNodeClient runs examples/acp-client/client.mjs, which drives the built
// binary with the official ACP TypeScript SDK's client (see the script for
// what it checks). It is skipped only when node is not installed; `make
// test` installs the npm packages first, and the test runs `npm ci` itself
// when they are missing.
func TestNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node; skipped with -short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("..", "examples", "acp-client"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
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
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "vault-agent")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/vault-agent")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	vaultDir := fixture.Copy(t)

	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"VAULT_AGENT_BIN="+bin,
		"VAULT_DIR="+vaultDir,
		// The per-vault default index goes under the user cache dir: keep it
		// in the test's temp dir.
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"HOME="+tmp,
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=",
		"CLIENT_TIMEOUT_MS=180000",
		"QUIET=1",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	t.Logf("node client:\n%s", out)
}
