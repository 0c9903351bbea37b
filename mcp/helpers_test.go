package mcp_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/mcp"
)

// fixtureVault is the shared fixture vault (read-only: tests copy it).
var fixtureVault = func() string {
	p, err := filepath.Abs(filepath.Join("..", "testdata", "vault"))
	if err != nil {
		panic(err)
	}
	return p
}()

// copyVault copies the fixture vault's regular files into a temp dir and
// recreates its symlink that leaves the vault.
func copyVault(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "vault")
	err := filepath.WalkDir(fixtureVault, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixtureVault, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// ctxT is a test context with a deadline well inside the test timeout.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// env is a server over a temp copy of the fixture vault and a client
// connected to it in memory.
type env struct {
	dir string
	cs  *sdk.ClientSession
	// Notifications the client received.
	updated     chan string
	listChanged chan struct{}
	mu          sync.Mutex
	progress    []string
}

type envOptions struct {
	model llm.Model
	wrap  func(mcp.Vault) mcp.Vault
	noAsk bool
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{dir: copyVault(t), updated: make(chan string, 64), listChanged: make(chan struct{}, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	opened, err := mcp.Open(ctx, mcp.OpenOptions{VaultDir: e.dir, InMemory: true, Model: o.model, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var v mcp.Vault = opened
	if o.wrap != nil {
		v = o.wrap(v)
	}
	cfg := mcp.Config{Vault: v, Agent: opened, VaultName: "vault", Version: "test",
		Now: func() time.Time { return time.Date(2026, 4, 22, 10, 0, 0, 0, time.Local) }}
	if o.noAsk {
		cfg.Agent = nil
	}
	srv := mcp.New(cfg)
	st, ct := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			e.updated <- r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			select {
			case e.listChanged <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			e.mu.Lock()
			e.progress = append(e.progress, r.Params.Message)
			e.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the server did not end after the client closed")
		}
		opened.Close()
	})
	return e
}

// call calls a tool and fails the test on a protocol error.
func (e *env) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := e.cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured content.
func ok[T any](t *testing.T, e *env, name string, args any) (T, string) {
	t.Helper()
	var out T
	res := e.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return out, text(res)
}

// toolError calls a tool that must fail and returns its message.
func (e *env) toolError(t *testing.T, name string, args any) string {
	t.Helper()
	res := e.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v): want a tool error, got %s", name, args, text(res))
	}
	return text(res)
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// waitFor waits for want on ch, ignoring other values.
func waitFor(t *testing.T, ch <-chan string, want string, what string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %s for %s within 20s", what, want)
		}
	}
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
