package llm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
)

const redirectKey = "sk-test-redirect-0123456789"

// authSeen records the Authorization header of each request it forwards.
type authSeen struct {
	mu   sync.Mutex
	auth []string
}

func (a *authSeen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (a *authSeen) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auth...)
}

// redirecting starts a server that answers every request with a 307 to
// target (same path), and, when sameOrigin, first to its own /moved/ path.
func redirecting(t *testing.T, target string, sameOrigin bool) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sameOrigin && !strings.HasPrefix(r.URL.Path, "/moved/") {
			http.Redirect(w, r, srv.URL+"/moved"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, target+strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/moved"), "/v1"), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// A model server that redirects to another origin (here another port of
// the same host, which net/http alone would trust) never gets the key
// there; a redirect within the origin keeps it.
func TestRedirectKeepsKeyAtHome(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sameOrigin bool
	}{
		{"to another port", false},
		{"within the origin, then to another port", true},
	} {
		t.Run("chat "+tc.name, func(t *testing.T) {
			chat := llmtest.NewServer(t, llmtest.Repeat(llmtest.Text("hello")))
			// The target is another origin: a proxy in front of the fake
			// server, seeing what arrives.
			seen := &authSeen{}
			target := httptest.NewServer(seen.wrap(proxyTo(t, chat.URL)))
			t.Cleanup(target.Close)
			base := redirecting(t, target.URL, tc.sameOrigin)
			m, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: base, Model: "m", APIKey: redirectKey, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "hello" {
				t.Fatalf("content %q", resp.Content)
			}
			for _, a := range seen.all() {
				if a != "" {
					t.Errorf("the other origin got Authorization %q", a)
				}
			}
			if len(seen.all()) == 0 {
				t.Fatal("the redirect was not followed")
			}
		})
		t.Run("embeddings "+tc.name, func(t *testing.T) {
			emb := llmtest.NewEmbedServer(t, llmtest.RandomVectors(8))
			base := redirecting(t, strings.TrimSuffix(emb.URL, "/v1")+"/v1", tc.sameOrigin)
			e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: base, Model: "e", APIKey: redirectKey, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
				t.Fatal(err)
			}
			if a := emb.Authorization(); a != "" {
				t.Errorf("the other origin got Authorization %q", a)
			}
		})
	}
	// Same origin all the way: the key is kept.
	t.Run("same origin keeps the key", func(t *testing.T) {
		var got string
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/moved/") {
				http.Redirect(w, r, srv.URL+"/moved"+r.URL.Path, http.StatusTemporaryRedirect)
				return
			}
			got = r.Header.Get("Authorization")
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}]}`))
		}))
		t.Cleanup(srv.Close)
		e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.URL + "/v1", Model: "e", APIKey: redirectKey, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if got != "Bearer "+redirectKey {
			t.Errorf("Authorization after a same-origin redirect = %q", got)
		}
	})
}

// proxyTo forwards requests to the server at base (…/v1), keeping the path
// under /v1.
func proxyTo(t *testing.T, base string) http.Handler {
	t.Helper()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.Path, r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	})
}
