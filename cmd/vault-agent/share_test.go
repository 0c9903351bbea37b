package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fx "github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/service"
)

// cli runs one command of the binary in the test's environment.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{so.String(), se.String(), code}
}

// within calls try until it returns nil or d has passed since from, and
// fails the test with its last error then. It waits on nothing else:
// each try is a real request, answered or refused.
func within(t *testing.T, from time.Time, d time.Duration, what string, try func() error) time.Duration {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := try()
		if err == nil {
			return time.Since(from)
		}
		if time.Since(from) > d {
			t.Fatalf("%s: not within %s of the start: %v", what, d, err)
		}
		<-tick.C
	}
}

// TestFrontEndsShareOneIndex runs what people run side by side on one
// vault: an MCP server (kept running by Claude Desktop), then, while it
// runs, a search and a question from the terminal, an editor's serve
// sidecar and an ACP agent. All of them answer, on the one index the MCP
// server holds (at the default place, in this test's cache dir); a note
// saved then is found by each of them within 3 s; and when the MCP server
// is killed (-9), the others go on answering within 5 s, one of them
// having taken the index over.
func TestFrontEndsShareOneIndex(t *testing.T) {
	home := t.TempDir()
	run, err := os.MkdirTemp("", "va") // short: socket paths are at most 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_RUNTIME_DIR", run)
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"} {
		t.Setenv(k, "")
	}
	root := fx.Copy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	status := func() service.IndexStatus {
		t.Helper()
		r := cli(t, "status", "--json", "--vault", root)
		var st service.IndexStatus
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
			t.Fatalf("status: %d %s %s", r.code, r.stdout, r.stderr)
		}
		return st
	}

	// The MCP server opens the vault first: it holds the index.
	mcp := rpctest.StartBinary(t, binary, "line", "mcp", "--vault", root)
	if err := mcp.Call(ctx, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := mcp.Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	mcpFinds := func(query, want string) error {
		var res struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if err := mcp.Call(ctx, "tools/call", map[string]any{"name": "search_notes", "arguments": map[string]any{"query": query}}, &res); err != nil {
			return err
		}
		if b, _ := json.Marshal(res); res.IsError || !strings.Contains(string(b), want) {
			return fmt.Errorf("search_notes %q: %s", query, b)
		}
		return nil
	}
	if err := mcpFinds("sourdough starter", "Sourdough Starter"); err != nil {
		t.Fatal(err)
	}
	if st := status(); st.Holder == nil || st.Holder.FrontEnd != "mcp" || st.Holder.PID != mcp.Process.Pid {
		t.Fatalf("the holder is not the MCP server: %+v", st.Holder)
	}

	// The terminal: a search and a question, each a process of its own.
	cliFinds := func(query, want string) error {
		r := cli(t, "search", "--vault", root, query)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			return fmt.Errorf("search %q: exit %d: %s%s", query, r.code, r.stdout, r.stderr)
		}
		return nil
	}
	if err := cliFinds("sourdough starter", "Sourdough Starter"); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, "ask", "--vault", root, "how do I keep my sourdough starter alive?"); r.code != 0 || !strings.Contains(r.stdout, "Sourdough Starter") {
		t.Fatalf("ask: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}

	// An editor's sidecar.
	serve := rpctest.StartBinary(t, binary, "header", "serve")
	var init struct {
		Index struct{ Notes int } `json:"index"`
	}
	if err := serve.Call(ctx, "initialize", map[string]any{"vault": root}, &init); err != nil || init.Index.Notes == 0 {
		t.Fatalf("serve initialize: %+v %v", init, err)
	}
	serveFinds := func(query, want string) error {
		var res struct {
			Results []struct{ Path string } `json:"results"`
		}
		if err := serve.Call(ctx, "vault/search", map[string]any{"query": query}, &res); err != nil {
			return err
		}
		if len(res.Results) == 0 || !strings.Contains(res.Results[0].Path, want) {
			return fmt.Errorf("vault/search %q: %+v", query, res)
		}
		return nil
	}
	if err := serveFinds("sourdough starter", "Sourdough Starter"); err != nil {
		t.Fatal(err)
	}

	// An ACP agent: its session's folder is the vault.
	acp := rpctest.StartBinary(t, binary, "line", "acp")
	if err := acp.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := acp.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}}, &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("session/new: %+v %v", sess, err)
	}
	prompts := 0
	acpFinds := func(question, want string) error {
		prompts++
		var res struct {
			StopReason string `json:"stopReason"`
		}
		if err := acp.Call(ctx, "session/prompt", map[string]any{"sessionId": sess.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": question}}}, &res); err != nil {
			return err
		}
		if res.StopReason != "end_turn" {
			return fmt.Errorf("session/prompt %q: stop reason %q", question, res.StopReason)
		}
		// The turn's updates: the answer and its tool calls.
		var said strings.Builder
		updates := acp.Notifications("session/update")
		for _, n := range updates[max(0, len(updates)-200):] {
			said.Write(n.Params)
		}
		if !strings.Contains(said.String(), want) {
			return fmt.Errorf("session/prompt %q: %q is not in the turn's updates", question, want)
		}
		return nil
	}
	if err := acpFinds("how do I keep my sourdough starter alive?", "Sourdough Starter"); err != nil {
		t.Fatal(err)
	}
	if st := status(); st.Holder == nil || st.Holder.FrontEnd != "mcp" || st.Holder.Clients != 2 {
		t.Fatalf("the MCP server should serve serve and acp: %+v", st.Holder)
	}

	// A note saved now is found by every one of them within 3 s.
	saved := time.Now()
	note := "# Axolotl\n\nThe axolotl regrows its gills and limbs; ours lives in the garden pond.\n"
	if err := os.WriteFile(filepath.Join(root, "Axolotl.md"), []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		try  func() error
	}{
		{"serve", func() error { return serveFinds("axolotl gills", "Axolotl") }},
		{"mcp", func() error { return mcpFinds("axolotl gills", "Axolotl") }},
		{"cli search", func() error { return cliFinds("axolotl gills", "Axolotl") }},
		{"acp", func() error { return acpFinds("what regrows its gills?", "Axolotl") }},
	} {
		took := within(t, saved, 3*time.Second, c.name+" finds the new note", c.try)
		t.Logf("%s found the new note %s after it was saved", c.name, took.Round(time.Millisecond))
	}

	// The holder dies; the others take over and go on answering.
	if err := mcp.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, c := range []struct {
		name string
		try  func() error
	}{
		{"serve", func() error { return serveFinds("axolotl gills", "Axolotl") }},
		{"acp", func() error { return acpFinds("how do I keep my sourdough starter alive?", "Sourdough Starter") }},
		{"cli search", func() error { return cliFinds("sourdough starter", "Sourdough Starter") }},
	} {
		took := within(t, killed, 5*time.Second, c.name+" answers after the holder was killed", c.try)
		t.Logf("%s answered %s after the holder was killed", c.name, took.Round(time.Millisecond))
	}
	var st service.IndexStatus
	within(t, killed, 5*time.Second, "status shows the new holder, serving the other and watching", func() error {
		st = status()
		if h := st.Holder; h == nil || (h.PID != serve.Process.Pid && h.PID != acp.Process.Pid) || h.Clients != 1 || !h.Watching {
			return fmt.Errorf("holder %+v", h)
		}
		return nil
	})
	t.Logf("the index was taken over by %s (pid %d)", st.Holder.FrontEnd, st.Holder.PID)
}
