package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPHTTPRemoteNeedsToken: with --allow-remote, the server makes a
// token, prints it once on stderr, and refuses requests without it; with
// --token-file it takes that one.
func TestMCPHTTPRemoteNeedsToken(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("a-token-kept-in-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		token string // "" : the one printed
	}{
		{"made and printed", nil, ""},
		{"from a file", []string{"--token-file", tokenFile}, "a-token-kept-in-a-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"mcp", "--vault", fixture, "--index", filepath.Join(t.TempDir(), "idx"), "--http", "127.0.0.1:0", "--allow-remote"}, tc.extra...)
			cmd := exec.Command(binary, args...)
			cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			urlRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)`)
			tokenRE := regexp.MustCompile(`Authorization: Bearer ([A-Za-z0-9_-]+)`)
			sc := bufio.NewScanner(stderr)
			endpoint, printed, lines := "", "", 0
			for endpoint == "" && sc.Scan() {
				if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
					endpoint = m[1]
				}
				if m := tokenRE.FindStringSubmatch(sc.Text()); m != nil {
					printed = m[1]
					lines++
				}
			}
			go io.Copy(io.Discard, stderr)
			if endpoint == "" {
				t.Fatal("the server did not say where it listens")
			}
			token := tc.token
			if token == "" {
				if printed == "" || lines != 1 {
					t.Fatalf("the made token was printed %d times", lines)
				}
				token = printed
			} else if printed != "" {
				t.Fatalf("a token from a file was printed")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			status := func(auth string) int {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := status(""); got != http.StatusUnauthorized {
				t.Errorf("without a token: %d", got)
			}
			if got := status("Bearer " + token); got != http.StatusOK {
				t.Errorf("with the token: %d", got)
			}
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Wait()
		})
	}
}
