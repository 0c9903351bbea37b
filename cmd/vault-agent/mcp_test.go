package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMCPUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp"}, "--vault is required"},
		{[]string{"mcp", "--vault", fixture, "--http", "0.0.0.0:8765"}, "--allow-remote"},
		{[]string{"mcp", "--vault", fixture, "--http", ":8765"}, "all interfaces"},
		{[]string{"mcp", "--vault", fixture, "--http", "8765"}, "host:port"},
		{[]string{"mcp", "--vault", fixture, "--mode", "fast"}, "--mode"},
		{[]string{"mcp", "--vault", fixture, "--max-iterations", "0"}, "--max-iterations"},
	} {
		r := runCLI(t, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want exit 2 mentioning %q)", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}

// TestMCPStdioIsProtocolOnly drives the server over raw pipes: every line
// on stdout is a JSON-RPC message, logs (here at debug level) go to stderr,
// and stdin's end ends the server with status 0.
func TestMCPStdioIsProtocolOnly(t *testing.T) {
	cmd := exec.Command(binary, "--log-level", "debug", "mcp", "--vault", fixture, "--index", filepath.Join(t.TempDir(), "idx"))
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<24)
	send := func(m string) {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// await reads messages until the reply to id, checking each is JSON-RPC.
	await := func(id int) map[string]any {
		for lines.Scan() {
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("stdout carries a non-protocol line: %q", lines.Text())
			}
			if got, ok := m["id"].(float64); ok && int(got) == id {
				return m
			}
		}
		t.Fatalf("no reply %d; stderr:\n%s", id, stderr.String())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := await(1); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_notes","arguments":{"query":"sourdough"}}}`)
	r := await(2)
	if b, _ := json.Marshal(r); !strings.Contains(string(b), "Sourdough Starter") {
		t.Fatalf("search: %s", b)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_note","arguments":{"path":"../../../etc/passwd"}}}`)
	if res, _ := await(3)["result"].(map[string]any); res["isError"] != true {
		t.Fatalf("escape: %v", res)
	}
	stdin.Close()
	for lines.Scan() {
		if !json.Valid(lines.Bytes()) {
			t.Errorf("stdout carries a non-protocol line: %q", lines.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after stdin closed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "index ready") {
		t.Errorf("the debug log did not reach stderr:\n%s", stderr.String())
	}
}

// TestMCPHTTP serves Streamable HTTP on a loopback port chosen by the
// system, connects the SDK's client, and stops the server with SIGINT.
func TestMCPHTTP(t *testing.T) {
	cmd := exec.Command(binary, "mcp", "--vault", fixture, "--index", filepath.Join(t.TempDir(), "idx"), "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)`)
	sc := bufio.NewScanner(stderr)
	endpoint := ""
	for endpoint == "" && sc.Scan() {
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			endpoint = m[1]
		}
	}
	if endpoint == "" {
		t.Fatal("the server did not say where it listens")
	}
	go io.Copy(io.Discard, stderr)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_notes", Arguments: map[string]any{"folder": "recipes"}})
	if err != nil || res.IsError {
		t.Fatalf("list_notes over HTTP: %v %v", err, res)
	}
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGINT: %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}
}
