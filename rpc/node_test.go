package rpc_test

import (
	"path/filepath"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/internal/nodetest"
)

// TestNodeClient runs examples/node-client/client.mjs (vscode-jsonrpc, the
// library editor plugins use) against the built binary. It is skipped only
// when node is not installed; `make test` installs the npm packages first,
// and the test runs `npm ci` itself when they are missing.
func TestNodeClient(t *testing.T) {
	nodetest.Run(t, "node-client", "vscode-jsonrpc",
		"VAULT_AGENT_BIN="+binary(t),
		// The client's edit run writes into the vault: a copy.
		"VAULT_DIR="+fixture.Copy(t),
		"VAULT_AGENT_INDEX="+filepath.Join(t.TempDir(), "index"),
		"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=",
		"QUIET=1",
	)
}
