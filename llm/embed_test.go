package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
)

const embedKey = "sk-test-embed-0123456789abcdef"

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func newEmbedder(t *testing.T, srv *llmtest.EmbedServer, batch int, sl *sleeps, log *slog.Logger) *llm.Embedder {
	t.Helper()
	e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "test-embed", APIKey: embedKey, Batch: batch, Sleep: sl.sleep, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbedderBatches(t *testing.T) {
	fn := llmtest.WordVectors(16, nil)
	srv := llmtest.NewEmbedServer(t, fn)
	e := newEmbedder(t, srv, 4, &sleeps{}, nil)
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Batches(); fmt.Sprint(got) != "[4 4 2]" {
		t.Errorf("batches %v, want [4 4 2]", got)
	}
	for i, v := range vecs {
		if fmt.Sprint(v) != fmt.Sprint(fn(texts[i])) {
			t.Fatalf("vector %d is not the one of its text", i)
		}
	}
	if srv.Authorization() != "Bearer "+embedKey {
		t.Errorf("the key was not sent")
	}
}

func TestEmbedderRetriesHonouringRetryAfter(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(8, nil))
	srv.FailNext(
		llmtest.Reply{Status: 429, Message: "slow down", Header: map[string]string{"Retry-After": "7"}},
		llmtest.Reply{Status: 503, Message: "overloaded"},
	)
	sl := &sleeps{}
	e := newEmbedder(t, srv, 8, sl, nil)
	if _, err := e.Embed(context.Background(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if srv.Requests() != 3 || e.Requests() != 3 {
		t.Errorf("requests: server %d, client %d, want 3", srv.Requests(), e.Requests())
	}
	if len(sl.d) != 2 || sl.d[0] != 7*time.Second || sl.d[1] <= 0 || sl.d[1] > 20*time.Second {
		t.Errorf("waits %v, want 7s (Retry-After) then a backoff", sl.d)
	}
}

func TestEmbedderDoesNotRetryClientErrors(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(8, nil))
	srv.FailNext(llmtest.Reply{Status: 400, Message: "model not found"})
	e := newEmbedder(t, srv, 8, &sleeps{}, nil)
	_, err := e.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "model not found") {
		t.Fatalf("err %v", err)
	}
	var se *llm.StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 {
		t.Errorf("not a StatusError 400: %v", err)
	}
	if srv.Requests() != 1 {
		t.Errorf("retried a 400: %d requests", srv.Requests())
	}
}

func TestEmbedderGivesUp(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(8, nil))
	for range 10 {
		srv.FailNext(llmtest.Reply{Status: 500, Message: "boom"})
	}
	e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL, Model: "m", APIKey: embedKey, MaxRetries: 2, Sleep: (&sleeps{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Fatalf("err %v", err)
	}
}

// The key is in no error and no log line, even when the server echoes it.
func TestEmbedderNeverShowsTheKey(t *testing.T) {
	srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(8, nil))
	srv.FailNext(
		llmtest.Reply{Status: 500, Message: "bad key " + embedKey},
		llmtest.Reply{Status: 401, Message: "invalid api key " + embedKey},
	)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEmbedder(t, srv, 8, &sleeps{}, log)
	_, err := e.Embed(context.Background(), []string{"a"})
	if err == nil {
		t.Fatal("no error")
	}
	cfg := llm.EmbedderConfig{BaseURL: srv.URL, Model: "m", APIKey: embedKey}
	for what, s := range map[string]string{"error": err.Error(), "log": logs.String(),
		"%v": fmt.Sprintf("%v", cfg), "%#v": fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, embedKey) || strings.Contains(s, embedKey[8:20]) {
			t.Errorf("the key is in the %s: %s", what, s)
		}
	}
	if _, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: "ftp://" + embedKey, Model: "m", APIKey: embedKey}); err == nil || strings.Contains(err.Error(), embedKey) {
		t.Errorf("bad URL error: %v", err)
	}
}

func TestEmbedderNeedsModelAndEndpoint(t *testing.T) {
	if _, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: "http://localhost:1/v1"}); !errors.Is(err, llm.ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
	if _, err := llm.NewEmbedder(llm.EmbedderConfig{Model: "m"}); !errors.Is(err, llm.ErrNoAPIKey) {
		t.Errorf("no key, no URL: %v", err)
	}
}

// EmbedOnce makes one request whatever the failure, and marks the failures
// a later attempt may not have with ErrUnavailable; a bad request is not.
func TestEmbedOnceDoesNotRetry(t *testing.T) {
	for _, c := range []struct {
		status      int
		unavailable bool
	}{{503, true}, {429, true}, {500, true}, {400, false}} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			srv := llmtest.NewEmbedServer(t, llmtest.WordVectors(8, nil))
			sl := &sleeps{}
			e := newEmbedder(t, srv, 4, sl, nil)
			srv.FailNext(llmtest.Reply{Status: c.status, Message: "no"})
			_, err := e.EmbedOnce(context.Background(), []string{"a"})
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, llm.ErrUnavailable); got != c.unavailable {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, got, c.unavailable)
			}
			if srv.Requests() != 1 || len(sl.d) != 0 {
				t.Errorf("%d requests, %d waits: want 1 and none", srv.Requests(), len(sl.d))
			}
			if _, err := e.EmbedOnce(context.Background(), []string{"a"}); err != nil {
				t.Errorf("after the failure: %v", err)
			}
		})
	}
	// An endpoint nobody listens on fails at once, unavailable.
	e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedOnce(context.Background(), []string{"a"}); !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("connection refused: %v, want ErrUnavailable", err)
	}
}
