package rpctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/rpc"
)

// Session is a server under test and the client connected to it.
type Session struct {
	*Client
	// Process is the binary's process (StartBinary), nil in process: a
	// test may kill it as a crash would.
	Process *os.Process
	wait    func(ctx context.Context) error
	stderr  *syncBuffer
	// allowed is how many recovered handler panics the test expects
	// (AllowPanics); any other panic fails the test.
	allowed atomic.Int64
}

// AllowPanics lets the session's server recover n panics in handlers
// without failing the test (a test of the recovery itself). Otherwise a
// recovered panic, in process (Server.Panics) or in the binary's log, fails
// the test when it ends.
func (s *Session) AllowPanics(n int64) { s.allowed.Store(n) }

// Wait waits for the server to end and returns what Serve returned (in
// process) or the process's exit error (binary: nil for status 0, an
// *exec.ExitError otherwise).
func (s *Session) Wait(ctx context.Context) error { return s.wait(ctx) }

// Stderr returns what the server logged so far.
func (s *Session) Stderr() string { return s.stderr.String() }

// StartInProcess serves cfg over pipes in this process. cfg.Logger, when
// nil, logs to a buffer shown by Stderr. The server is stopped when the
// test ends.
func StartInProcess(t testing.TB, cfg rpc.Config) *Session {
	t.Helper()
	return StartInProcessWith(t, cfg)
}

// StartInProcessWith is StartInProcess with setup functions called on the
// Server before it starts serving.
func StartInProcessWith(t testing.TB, cfg rpc.Config, setup ...func(*rpc.Server)) *Session {
	t.Helper()
	stderr := &syncBuffer{}
	if cfg.Logger == nil {
		cfg.Logger = NewLogger(stderr)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := rpc.New(cfg)
	for _, f := range setup {
		f(srv)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- srv.Serve(context.Background(), inR, outW)
		// Serve closes out; closing again is harmless and makes sure the
		// client sees EOF even if it did not.
		outW.Close()
	}()
	var once sync.Once
	var serveErr error
	wait := func(ctx context.Context) error {
		select {
		case err := <-errc:
			once.Do(func() { serveErr = err })
		case <-ctx.Done():
			return fmt.Errorf("server still running: %w", ctx.Err())
		}
		return serveErr
	}
	s := &Session{Client: NewClient(outR, inW, cfg.Codec), wait: waitOnce(wait), stderr: stderr}
	t.Cleanup(func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := s.Wait(ctx); err != nil && !errors.Is(err, rpc.ErrExitWithoutShutdown) {
			t.Logf("server: %v", err)
		}
		if n := srv.Panics(); n != s.allowed.Load() {
			t.Errorf("the server recovered %d panics in handlers (allowed: %d): a panic is a bug", n, s.allowed.Load())
		}
		if t.Failed() {
			t.Logf("server log:\n%s", stderr.String())
		}
	})
	return s
}

// StartBinary runs the vault-agent binary with args (e.g. "serve",
// "--codec", "line") and connects to its stdin and stdout. The codec must
// match the args. The process is killed when the test ends if still
// running.
func StartBinary(t testing.TB, bin, codec string, args ...string) *Session {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "OPENAI_MODEL=")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	client := NewClient(stdout, stdin, codec)
	waited := make(chan error, 1)
	go func() {
		// Wait closes stdout once the process has exited: it runs only
		// after the client has read everything, up to the EOF of the
		// process's exit, so no message is lost to a closed pipe.
		<-client.done
		waited <- cmd.Wait()
	}()
	var once sync.Once
	var exitErr error
	wait := func(ctx context.Context) error {
		select {
		case err := <-waited:
			once.Do(func() { exitErr = err })
		case <-ctx.Done():
			return fmt.Errorf("process still running: %w", ctx.Err())
		}
		return exitErr
	}
	s := &Session{Client: client, Process: cmd.Process, wait: waitOnce(wait), stderr: stderr}
	t.Cleanup(func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := s.Wait(ctx); err != nil && ctx.Err() != nil {
			cmd.Process.Kill()
			s.Wait(context.Background())
		}
		if n := int64(strings.Count(stderr.String(), panicLog)); n != s.allowed.Load() {
			t.Errorf("the server logged %d panics in handlers (allowed: %d): a panic is a bug", n, s.allowed.Load())
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	return s
}

// panicLog is the message the server logs for a recovered panic.
const panicLog = "panic in handler"

// waitOnce makes a wait function return the same result every time.
func waitOnce(wait func(context.Context) error) func(context.Context) error {
	var mu sync.Mutex
	var done bool
	var res error
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return res
		}
		err := wait(ctx)
		if ctx.Err() == nil {
			done, res = true, err
		}
		return err
	}
}

// BuildBinary builds ./cmd/vault-agent of the module rooted at moduleRoot
// into dir and returns its path.
func BuildBinary(moduleRoot, dir string) (string, error) {
	name := "vault-agent"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/vault-agent")
	cmd.Dir = moduleRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/vault-agent: %v\n%s", err, b)
	}
	return out, nil
}

// CheckGoroutines fails t if more goroutines than before are still
// running after a bounded wait. Call before with the count taken before the
// server started.
func CheckGoroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutine leak: %d goroutines before, %d after\n%s", before, n, buf)
		}
		// Polling is the only way to observe goroutines ending; the
		// deadline bounds it.
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// NewLogger returns a debug-level text logger writing to w.
func NewLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
