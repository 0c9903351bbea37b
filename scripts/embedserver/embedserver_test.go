package embedserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/scripts/embedserver"
)

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// health reads the server's counters.
func health(t *testing.T, base string) (embedded, cached int) {
	t.Helper()
	resp, err := http.Get(base[:len(base)-len("/v1")] + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct{ Embedded, Cached int }
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h.Embedded, h.Cached
}

func start(t *testing.T, ctx context.Context, cache string) *embedserver.Server {
	t.Helper()
	s, err := embedserver.Start(ctx, embedserver.Options{CacheDir: cache, Workers: 1, Stderr: os.Stderr})
	if errors.Is(err, embedserver.ErrNoNode) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// One small embeddings call through llm's client to the real model: the
// vectors have the model's dimension and carry meaning (a question about
// a starter is closer to the note about feeding it than to one about
// taxes), and a second server on the same cache answers from the disk,
// embedding nothing.
func TestEmbedThroughLLMClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cache := t.TempDir()
	texts := []string{
		"how do I keep my sourdough starter alive",
		"Feed the levain every day with equal weights of flour and water.",
		"File the quarterly tax return before the deadline.",
	}
	embed := func(base string) [][]float32 {
		t.Helper()
		e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: base, Model: embedserver.Model, MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		vs, err := e.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}

	s := start(t, ctx, cache)
	first := embed(s.BaseURL)
	if len(first) != len(texts) || len(first[0]) != embedserver.Dims {
		t.Fatalf("got %d vectors of %d dimensions, want %d of %d", len(first), len(first[0]), len(texts), embedserver.Dims)
	}
	if near, far := cosine(first[0], first[1]), cosine(first[0], first[2]); near <= far {
		t.Errorf("cosine(question, starter note) = %.3f <= cosine(question, tax note) = %.3f: no meaning in the vectors", near, far)
	}
	if n, _ := health(t, s.BaseURL); n != len(texts) {
		t.Errorf("first server embedded %d texts, want %d", n, len(texts))
	}
	s.Close()

	s = start(t, ctx, cache)
	defer s.Close()
	again := embed(s.BaseURL)
	if n, cached := health(t, s.BaseURL); n != 0 || cached != len(texts) {
		t.Errorf("second server embedded %d texts with %d cached, want 0 with %d", n, cached, len(texts))
	}
	for i := range again {
		if cosine(again[i], first[i]) < 0.999999 {
			t.Errorf("text %d: the cached vector differs from the first", i)
		}
	}
}
