package acp_test

import (
	"path/filepath"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/internal/nodetest"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
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
	tmp := t.TempDir()
	bin, err := rpctest.BuildBinary("..", tmp)
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, "acp-client", "@agentclientprotocol/sdk",
		"VAULT_AGENT_BIN="+bin,
		"VAULT_DIR="+fixture.Copy(t),
		// The per-vault default index goes under the user cache dir: keep it
		// in the test's temp dir.
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"HOME="+tmp,
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=",
		"CLIENT_TIMEOUT_MS=180000",
		"QUIET=1",
	)
}
