package main

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestFrontEndsReleaseWhenIdle starts each long-running front-end, waits
// until it says (in its debug log) that it gave memory back on going idle,
// and then checks that it still answers a request: the code it dropped is
// faulted back in.
func TestFrontEndsReleaseWhenIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		init string
	}{
		{"serve", []string{"serve", "--codec", "line"}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"vault":"` + fixture + `"}}`},
		{"mcp", []string{"mcp", "--vault", fixture}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`},
		{"acp", []string{"acp"}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"--log-level", "debug"}, tc.args...)...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); cmd.Wait() }()

			released := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					if strings.Contains(sc.Text(), "idle: memory released") {
						released <- sc.Text()
						break
					}
				}
				io.Copy(io.Discard, stderr)
			}()
			select {
			case line := <-released:
				t.Log(line)
			case <-ctx.Done():
				t.Fatal("the front-end never said it released memory on going idle")
			}
			if _, err := io.WriteString(stdin, tc.init+"\n"); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if strings.Contains(sc.Text(), `"id":1`) {
					if !strings.Contains(sc.Text(), `"result"`) {
						t.Fatalf("initialize after the release: %s", sc.Text())
					}
					return
				}
			}
			t.Fatalf("no answer to initialize after the release: %v", sc.Err())
		})
	}
}
