// Package nodetest runs the Node clients of examples/ (each written with
// the official library of its protocol) against a built vault-agent, for
// the tests of the front-ends. It is imported by tests only.
package nodetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Timeout bounds one client run, npm ci included.
const Timeout = 4 * time.Minute

// Run runs examples/<example>/client.mjs with node, with env added to the
// process environment (VAULT_AGENT_BIN made relative to the example's
// folder, as a person would write ../../bin/vault-agent), fails t with the client's output when it fails, and
// logs the output. It skips t when node is not installed. When the
// example's node_modules lacks probe (a package folder such as
// "vscode-jsonrpc"), it installs the packages first with npm ci, so that
// `go test` works without `make node-deps`.
func Run(t *testing.T, example, probe string, env ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "examples", example)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(probe))); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("node_modules missing and npm not installed: run `make node-deps`")
		}
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = dir
	// No config file of the person running the tests: a temporary config
	// dir, unless the test gives one.
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "VAULT_AGENT_CONFIG=")
	cmd.Env = append(cmd.Env, relativeBin(dir, env)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s/client.mjs: %v\n%s", example, err, out)
	}
	t.Logf("node client:\n%s", out)
}

// relativeBin rewrites an absolute VAULT_AGENT_BIN of env relative to dir,
// where the client starts: the clients must resolve it before they spawn
// the server in another folder.
func relativeBin(dir string, env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = kv
		if bin, ok := strings.CutPrefix(kv, "VAULT_AGENT_BIN="); ok && filepath.IsAbs(bin) {
			if rel, err := filepath.Rel(dir, bin); err == nil {
				out[i] = "VAULT_AGENT_BIN=" + rel
			}
		}
	}
	return out
}
