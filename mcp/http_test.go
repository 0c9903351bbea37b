package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// serveHTTP serves srv on a loopback port until the test ends and returns
// its /mcp URL.
func serveHTTP(t *testing.T, srv *mcp.Server) string {
	t.Helper()
	ln, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeHTTP(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// post sends one JSON-RPC message as a Streamable HTTP client does and
// returns the status and the session id the server answered with.
func post(t *testing.T, url, session, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

// alive reports whether the server still has the session.
func alive(t *testing.T, url, session string) bool {
	code, _ := post(t, url, session, ping)
	return code == http.StatusOK
}

// eventually waits, up to 20 s, for ok to hold, checking it as the server
// gets the chance to act.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		<-tick.C
	}
}

// TestHTTPSessionCap opens sessions as unauthenticated clients that never
// close them: past the cap (64 by default) the server closes the ones idle
// the longest, so memory stays bounded, and keeps the newest.
func TestHTTPSessionCap(t *testing.T) {
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: fixture.Copy(t)})})
	url := serveHTTP(t, srv)
	var ids []string
	for i := range 70 {
		code, id := post(t, url, "", initialize)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize %d: status %d, session %q", i, code, id)
		}
		ids = append(ids, id)
	}
	eventually(t, "the oldest sessions closed", func() bool {
		n := 0
		for _, id := range ids[:6] {
			if !alive(t, url, id) {
				n++
			}
		}
		return n == 6
	})
	for i, id := range ids[6:] {
		if !alive(t, url, id) {
			t.Fatalf("session %d of the newest 64 was closed", i+6)
		}
	}
}

// TestHTTPSessionIdle: a session that makes no request for the idle
// timeout is closed.
func TestHTTPSessionIdle(t *testing.T) {
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: fixture.Copy(t)}), HTTP: mcp.HTTP{SessionIdle: 200 * time.Millisecond}})
	url := serveHTTP(t, srv)
	_, id := post(t, url, "", initialize)
	// Each request restarts the idle time: ask only after three times it.
	for attempt := 0; ; attempt++ {
		<-time.After(600 * time.Millisecond)
		if code, _ := post(t, url, id, ping); code == http.StatusNotFound {
			break
		}
		if attempt == 20 {
			t.Fatal("the idle session was not closed")
		}
	}
	if mcp.DefaultSessionIdle > 30*time.Minute {
		t.Errorf("sessions are kept %v by default", mcp.DefaultSessionIdle)
	}
}

// logBuffer collects what a logger writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestOneLogLinePerChange: sessions whose clients never listen for
// notifications do not make each change of the vault log a line per
// session.
func TestOneLogLinePerChange(t *testing.T) {
	dir := fixture.Copy(t)
	logs := &logBuffer{}
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: dir}), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	url := serveHTTP(t, srv)
	for range 20 {
		if code, _ := post(t, url, "", initialize); code != http.StatusOK {
			t.Fatalf("initialize: %d", code)
		}
	}
	// One client that listens, to know when each change went out.
	changed := make(chan struct{}, 16)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "listener", Version: "1"}, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctxT(t), &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("New %d.md", i)), []byte("# new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Fatalf("change %d was not notified", i)
		}
	}
	warns := strings.Count(logs.String(), "level=WARN")
	if warns > 3 {
		t.Fatalf("%d warnings for 3 changes:\n%s", warns, logs.String())
	}
}

// closedWithin reports whether the server closes conn within d, reading
// (and dropping) whatever it sends first.
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestHTTPReadTimeouts: a client trickling a request body, or keeping a
// connection open without a request, has it closed.
func TestHTTPReadTimeouts(t *testing.T) {
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: fixture.Copy(t)}),
		HTTP: mcp.HTTP{ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}})
	url := serveHTTP(t, srv)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")

	trickle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	fmt.Fprintf(trickle, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", addr)
	if !closedWithin(trickle, 10*time.Second) {
		t.Error("a connection trickling its body stays open")
	}

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !closedWithin(idle, 10*time.Second) {
		t.Error("an idle kept-alive connection stays open")
	}
}

// TestHTTPToken: with a token, every request must carry it.
func TestHTTPToken(t *testing.T) {
	const token = "a-long-enough-test-token"
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: fixture.Copy(t)}), HTTP: mcp.HTTP{Token: token}})
	url := serveHTTP(t, srv)
	for _, auth := range []string{"", "Bearer wrong", token, "Basic " + token} {
		if code, _ := post(t, url, "", initialize, "Authorization", auth); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, code)
		}
	}
	if code, id := post(t, url, "", initialize, "Authorization", "Bearer "+token); code != http.StatusOK || id == "" {
		t.Fatalf("with the token: status %d", code)
	}
}

// TestServeHTTPRefusesRemoteWithoutToken: a listener other machines can
// reach is served only with a token.
func TestServeHTTPRefusesRemoteWithoutToken(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on all interfaces: %v", err)
	}
	defer ln.Close()
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: fixture.Copy(t)})})
	if err := srv.ServeHTTP(ctxT(t), ln); !errors.Is(err, mcp.ErrNotLoopback) {
		t.Fatalf("ServeHTTP on all interfaces without a token: %v", err)
	}
}

// heldOpening is a vault whose reconcile with the disk has not finished:
// its index is open, Wait waits until release is closed.
type heldOpening struct {
	mcp.Opening
	release chan struct{}
}

func (h heldOpening) Wait(ctx context.Context, progress search.ProgressFunc) (*service.Service, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Opening.Wait(ctx, progress)
}

// TestResourcesListedAtOnce lists the notes right after connecting, while
// the index's reconcile with the disk still runs: they come from the open
// index.
func TestResourcesListedAtOnce(t *testing.T) {
	opening := startVault(t, service.Options{Vault: fixture.Copy(t)})
	svc, err := opening.Wait(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	held := heldOpening{Opening: opening, release: make(chan struct{})}
	defer close(held.release)
	ctx, cs := connectInMemory(t, mcp.New(mcp.Config{Vault: held}))
	n := 0
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.URI, "vault:///") {
			t.Errorf("resource %s", r.URI)
		}
		n++
	}
	if want := svc.Index().Count(); n != want || n == 0 {
		t.Fatalf("resources/list right after connecting: %d resources, want %d", n, want)
	}
}

func TestTokens(t *testing.T) {
	a, err := mcp.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mcp.NewToken()
	if len(a) < 40 || a == b {
		t.Fatalf("tokens %q and %q", a, b)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
		ok                  bool
	}{
		{"good", "  a-long-enough-test-token\n", "a-long-enough-test-token", true},
		{"short", "secret\n", "", false},
		{"two lines", "a-long-enough-test-token\nanother-long-token-here\n", "", false},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := mcp.ReadTokenFile(p)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
}

// TestResourcesPaged lists the notes three at a time: every note once, in
// path order, each page at most three, the last without a cursor; a cursor
// that is not one is refused.
func TestResourcesPaged(t *testing.T) {
	defer mcp.SetListPage(3)()
	opening := startVault(t, service.Options{Vault: fixture.Copy(t)})
	svc, err := opening.Wait(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cs := connectInMemory(t, mcp.New(mcp.Config{Vault: opening}))
	var uris []string
	pages := 0
	for cursor := ""; ; {
		res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(res.Resources) > 3 {
			t.Fatalf("page %d holds %d resources", pages, len(res.Resources))
		}
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	var want []string
	for _, p := range svc.Index().Paths() {
		want = append(want, mcp.NoteURI(p))
	}
	if !slices.Equal(uris, want) || pages != (len(want)+2)/3 {
		t.Fatalf("%d pages listed %v\nwant %v", pages, uris, want)
	}
	if _, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: "%%%"}); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Fatalf("a bad cursor: %v", err)
	}
}

// connectInMemory runs srv over an in-memory transport for the test and
// returns a client session on it, with the context both run in; both end
// with the test.
func connectInMemory(t *testing.T, srv *mcp.Server) (context.Context, *sdk.ClientSession) {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(ctxT(t))
	t.Cleanup(cancel)
	go srv.Run(ctx, st)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ctx, cs
}
