package semantic

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
)

func failing(n int) []llmtest.Reply {
	out := make([]llmtest.Reply, n)
	for i := range out {
		out[i] = llmtest.Reply{Status: 503, Message: "down for maintenance"}
	}
	return out
}

func waitRecovered(t *testing.T, e *Engine) {
	t.Helper()
	select {
	case <-e.recovered:
	case <-time.After(30 * time.Second):
		t.Fatal("the endpoint was not found back")
	}
}

// An endpoint that fails: the search that meets the failure answers
// lexically after one request, says once that results are lexical only,
// and the next searches make no request at all until the endpoint, tried
// in the background, answers again; then the vectors count again.
func TestUnavailableEndpointServesLexicalAtOnce(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, map[string]string{"leaven": "sourdough"}))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	e.probeFirst = time.Hour // no probe during the first part
	f.srv.FailNext(failing(1)...)
	before := f.srv.Requests()
	for i := range 3 {
		res, err := e.Search(context.Background(), search.Request{Query: "compost"})
		if err != nil || len(res.Results) == 0 || res.Results[0].Path != "garden/compost.md" {
			t.Fatalf("search %d: %v %+v", i, err, res)
		}
	}
	if n := f.srv.Requests() - before; n != 1 {
		t.Errorf("3 searches made %d requests, want 1 (none while the endpoint is down)", n)
	}
	if n := strings.Count(f.logs(), "search results are lexical only"); n != 1 {
		t.Errorf("said %d times that results are lexical only, want once:\n%s", n, f.logs())
	}
	if _, err := e.Search(context.Background(), search.Request{Query: "compost", Mode: search.ModeSemantic}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("semantic search while down: %v, want ErrUnavailable", err)
	}
	if strings.Contains(f.logs(), "retrying") {
		t.Errorf("the query's embedding was retried:\n%s", f.logs())
	}
}

// Tried again in the background, the endpoint is found back, and search
// uses the vectors again ("leaven" finds the sourdough notes only through
// them).
func TestEndpointFoundBack(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, map[string]string{"leaven": "sourdough"}))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	e.probeFirst, e.probeMax = time.Millisecond, 4*time.Millisecond
	f.srv.FailNext(failing(4)...) // the query's attempt and three probes
	res, err := e.Search(context.Background(), search.Request{Query: "leaven", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(res.Results, func(r search.Result) bool { return strings.HasPrefix(r.Path, "bread/") }) {
		t.Fatalf("vectors used while the endpoint failed: %v", paths(res.Results))
	}
	waitRecovered(t, e)
	res, err = e.Search(context.Background(), search.Request{Query: "leaven", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Results, func(r search.Result) bool { return strings.HasPrefix(r.Path, "bread/") }) {
		t.Errorf("vectors not used once the endpoint is back: %v", paths(res.Results))
	}
	if !strings.Contains(f.logs(), "answers again") {
		t.Errorf("the recovery was not said:\n%s", f.logs())
	}
}

// An endpoint that accepts the request and never answers costs a search
// the query timeout, not the embedder's own (a minute) with its retries.
func TestHangingEndpointCostsTheQueryTimeout(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	e.queryTimeout, e.probeFirst = 20*time.Millisecond, time.Hour
	_, release := f.srv.HoldFrom(f.srv.Requests() + 1)
	defer release()
	res, err := e.Search(context.Background(), search.Request{Query: "compost"})
	if err != nil || len(res.Results) == 0 || res.Results[0].Path != "garden/compost.md" {
		t.Fatalf("hybrid: %v %+v", err, res)
	}
	if e.downErr() == nil {
		t.Error("the endpoint is not marked down after a timeout")
	}
}

// A vault opened while the endpoint cannot be reached (here: it never
// answers, and the client gives up after its timeout): Sync fails after
// one request instead of retrying while the caller waits, and the notes
// are embedded once the endpoint answers again. An endpoint that answers,
// overloaded, is retried as before.
func TestSyncWhileDownResumesInTheBackground(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	emb, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: f.srv.URL, Model: "m1", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e := f.open(t, openIndex(t, dir), emb, "", 64)
	e.probeFirst, e.probeMax = time.Millisecond, 4*time.Millisecond
	_, release := f.srv.HoldFrom(1)
	if _, err := e.Sync(context.Background(), nil); err == nil {
		t.Fatal("Sync succeeded with the endpoint down")
	}
	if strings.Contains(f.logs(), "retrying") {
		t.Errorf("Sync retried an endpoint it could not reach:\n%s", f.logs())
	}
	release()
	waitRecovered(t, e)
	if got := e.MemoryBytes(); got == 0 {
		t.Error("no vectors after the endpoint came back")
	}
}

func TestSyncRetriesAnOverloadedEndpoint(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	sl := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	emb, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: f.srv.URL, Model: "m1", Sleep: sl})
	if err != nil {
		t.Fatal(err)
	}
	e := f.open(t, openIndex(t, dir), emb, "", 64)
	f.srv.FailNext(failing(2)...)
	if _, err := e.Sync(context.Background(), nil); err != nil {
		t.Fatalf("Sync gave up on an endpoint that answered 503 twice: %v", err)
	}
	if e.downErr() != nil || e.MemoryBytes() == 0 {
		t.Errorf("down %v, %d bytes of vectors", e.downErr(), e.MemoryBytes())
	}
}
