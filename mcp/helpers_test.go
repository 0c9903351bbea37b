package mcp_test

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/service"
)

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
	// progressed is signalled after each progress notification.
	progressed chan struct{}
}

// awaitProgress waits until the progress messages received so far satisfy
// ok, or ctx ends; it returns them. The client handles notifications on
// their own goroutines, so one may be recorded after the call's result.
func (e *env) awaitProgress(ctx context.Context, ok func([]string) bool) []string {
	for {
		e.mu.Lock()
		steps := slices.Clone(e.progress)
		e.mu.Unlock()
		if ok(steps) {
			return steps
		}
		select {
		case <-e.progressed:
		case <-ctx.Done():
			return steps
		}
	}
}

type envOptions struct {
	model llm.Model
	wrap  func(mcp.Opening) mcp.Opening
	noAsk bool
	now   func() time.Time
	// embedder turns on semantic search.
	embedder semantic.Embedder
	// allowEdits offers the edit tools, journaling to journal.
	allowEdits bool
	journal    string
}

// startVault opens a vault as vault-agent mcp does, with an offline model
// unless model is set; it is closed when the test ends.
func startVault(t testing.TB, o service.Options) *service.Opening {
	t.Helper()
	o.Env, o.Agent, o.Watch = &service.Env{}, true, true
	if o.Index == "" {
		o.InMemoryIndex = true
	}
	opening, err := service.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opening.Close() })
	return opening
}

var offline = mcp.ModelInfo{Name: "offline", Offline: true}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{dir: fixture.CopyWithLinks(t), updated: make(chan string, 64), listChanged: make(chan struct{}, 64), progressed: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	opening := startVault(t, service.Options{Vault: e.dir, Model: o.model, Journal: o.journal, Embedder: o.embedder})
	var v mcp.Opening = opening
	if o.wrap != nil {
		v = o.wrap(v)
	}
	model := offline
	if o.model != nil {
		model = mcp.ModelInfo{Name: o.model.Name()}
	}
	now := o.now
	if now == nil {
		now = func() time.Time { return time.Date(2026, 4, 22, 10, 0, 0, 0, time.Local) }
	}
	srv := mcp.New(mcp.Config{Vault: v, Ask: !o.noAsk, Model: model, VaultName: "vault", Version: "test", Now: now, AllowEdits: o.allowEdits, Semantic: o.embedder != nil})
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
			select {
			case e.progressed <- struct{}{}:
			default:
			}
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
