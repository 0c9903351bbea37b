package mcp

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTP configures how ServeHTTP serves; zero values are the defaults.
type HTTP struct {
	// Token, when set, is required of every request, as the header
	// "Authorization: Bearer <Token>". ServeHTTP refuses to serve an
	// address other machines can reach without one.
	Token string
	// MaxSessions caps the sessions kept (default DefaultMaxSessions): a
	// new one past it closes the session idle the longest.
	MaxSessions int
	// SessionIdle closes a session that has made no request for that long
	// (default DefaultSessionIdle).
	SessionIdle time.Duration
	// ReadTimeout bounds the reading of a whole request, body included
	// (default 30 s); IdleTimeout bounds a kept-alive connection waiting
	// for its next request (default 60 s). Responses (a long ask_vault, the
	// stream of notifications) are not bounded.
	ReadTimeout, IdleTimeout time.Duration
}

// Defaults of HTTP.
const (
	DefaultMaxSessions = 64
	DefaultSessionIdle = 10 * time.Minute
)

func (h HTTP) withDefaults() HTTP {
	if h.MaxSessions <= 0 {
		h.MaxSessions = DefaultMaxSessions
	}
	if h.SessionIdle <= 0 {
		h.SessionIdle = DefaultSessionIdle
	}
	if h.ReadTimeout <= 0 {
		h.ReadTimeout = 30 * time.Second
	}
	if h.IdleTimeout <= 0 {
		h.IdleTimeout = 60 * time.Second
	}
	return h
}

// sessions tracks when each session last made a request, and which are
// in one, so that the cap closes an idle one.
type sessions struct {
	max int
	log *slog.Logger
	srv *sdk.Server

	// mu guards seen.
	mu   sync.Mutex
	seen map[*sdk.ServerSession]*sessionUse
}

type sessionUse struct {
	last     time.Time
	inFlight int
}

// track is a receiving middleware: it records each session's requests
// and, when a session initializes past the cap, closes the ones idle the
// longest.
func (t *sessions) track(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if ss == nil {
			return next(ctx, method, req)
		}
		t.mu.Lock()
		u := t.seen[ss]
		if u == nil {
			u = &sessionUse{}
			t.seen[ss] = u
		}
		u.last = time.Now()
		u.inFlight++
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			u.inFlight--
			u.last = time.Now()
			t.mu.Unlock()
		}()
		if method == "initialize" {
			t.enforce(ss)
		}
		return next(ctx, method, req)
	}
}

// enforce closes the sessions idle the longest (none in a request, never
// the one initializing) while there are more than the cap.
func (t *sessions) enforce(current *sdk.ServerSession) {
	live := map[*sdk.ServerSession]bool{}
	for ss := range t.srv.Sessions() {
		live[ss] = true
	}
	t.mu.Lock()
	for ss := range t.seen {
		if !live[ss] {
			delete(t.seen, ss) // closed: the client's, the idle timer's or ours
		}
	}
	var idle []*sdk.ServerSession
	for ss := range live {
		if u := t.seen[ss]; ss != current && (u == nil || u.inFlight == 0) {
			idle = append(idle, ss)
		}
	}
	lastUse := func(ss *sdk.ServerSession) time.Time {
		if u := t.seen[ss]; u != nil {
			return u.last
		}
		return time.Time{}
	}
	over := len(live) - t.max
	var closing []*sdk.ServerSession
	for ; over > 0 && len(idle) > 0; over-- {
		oldest := 0
		for i, ss := range idle {
			if lastUse(ss).Before(lastUse(idle[oldest])) {
				oldest = i
			}
		}
		closing = append(closing, idle[oldest])
		delete(t.seen, idle[oldest])
		idle = append(idle[:oldest], idle[oldest+1:]...)
	}
	t.mu.Unlock()
	if len(closing) > 0 {
		t.log.Info(fmt.Sprintf("over the cap of %d MCP sessions: closed the %d idle the longest", t.max, len(closing)), "sessions", len(live))
	}
	for _, ss := range closing {
		go ss.Close()
	}
}

// requireToken refuses a request without "Authorization: Bearer token".
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vault-agent"`)
			http.Error(w, "vault-agent: a bearer token is required (Authorization: Bearer <token>)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackListener reports whether ln only takes connections from this
// machine.
func isLoopbackListener(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// quietSDK is the SDK's log handler: the SDK logs a warning for each
// session it could not notify, and a line for each resource notification,
// so one change to a vault served to many sessions filled the log. These
// are counted instead (undelivered) and reported once per change by
// apply; everything else passes through.
type quietSDK struct {
	slog.Handler
	undelivered *atomic.Int64
}

func (q quietSDK) Handle(ctx context.Context, r slog.Record) error {
	switch {
	case r.Level >= slog.LevelWarn && strings.HasPrefix(r.Message, "calling notifications/"):
		q.undelivered.Add(1)
		return nil
	case r.Message == "resource updated notification sent":
		r.Level = slog.LevelDebug
		if !q.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietSDK) WithAttrs(as []slog.Attr) slog.Handler {
	return quietSDK{q.Handler.WithAttrs(as), q.undelivered}
}

func (q quietSDK) WithGroup(name string) slog.Handler {
	return quietSDK{q.Handler.WithGroup(name), q.undelivered}
}
