// Package agenttest holds test doubles for code that drives the agent:
// FakeIndex, a tiny substring index over a real vault, so that a test of the
// agent (or of anything above it) does not depend on ranking.
//
// It is imported by tests only. It must not import agent (the agent's own
// tests use it).
package agenttest

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// FakeIndex satisfies agent.Index over a real vault: a search scores each
// note by how often the query's words occur in its title and body. It is
// safe for concurrent use.
type FakeIndex struct {
	v     *vault.Vault
	paths []string
}

// NewFakeIndex opens the fixture vault and lists its notes.
func NewFakeIndex(t testing.TB) *FakeIndex {
	t.Helper()
	v, err := vault.Open(fixture.Vault(), vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fi := &FakeIndex{v: v}
	if err := v.Walk(context.Background(), func(f vault.FileInfo) error {
		fi.paths = append(fi.paths, f.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(fi.paths)
	return fi
}

// questionWords are left out of a query, as the real index weighs them
// little or drops them, so a question typed in full finds what its words
// find.
var questionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be can did do does for from has have how i in is it me my of on or
the this that to was what when where which who why with you your`) {
		questionWords[w] = true
	}
}

// Search scores notes by the occurrences of the query's words (question
// words and punctuation aside).
func (f *FakeIndex) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	res := &search.Results{}
	var words []string
	for _, w := range strings.Fields(strings.ToLower(req.Query)) {
		w = strings.Trim(w, `?!.,;:"'()`)
		if w != "" && !questionWords[w] {
			words = append(words, w)
		}
	}
	for _, p := range f.paths {
		n, err := f.v.ReadNote(p)
		if err != nil {
			continue
		}
		text := strings.ToLower(n.Title + " " + n.Body)
		score := 0
		for _, w := range words {
			score += strings.Count(text, w)
		}
		if score > 0 {
			res.Results = append(res.Results, search.Result{Path: p, Title: n.Title, Score: float64(score), Snippet: truncate.FirstLine(n.Body, 80)})
		}
	}
	sort.SliceStable(res.Results, func(i, j int) bool { return res.Results[i].Score > res.Results[j].Score })
	res.Total = len(res.Results)
	if req.Limit > 0 && len(res.Results) > req.Limit {
		res.Results = res.Results[:req.Limit]
	}
	return res, nil
}

// Paths lists the vault's notes, sorted.
func (f *FakeIndex) Paths() []string { return f.paths }

// Tags returns one made-up tag.
func (f *FakeIndex) Tags() []search.TagCount { return []search.TagCount{{Tag: "recipe", Count: 3}} }

// ReadChunk reads a chunk as the real index does.
func (f *FakeIndex) ReadChunk(name string, chunk int) (*search.NoteChunk, error) {
	return search.ReadChunkOf(f.v, f.paths, name, chunk)
}

// Vault returns the fixture vault.
func (f *FakeIndex) Vault() *vault.Vault { return f.v }

// SearchIndex indexes the fixture vault in memory with the real search
// index, for tests that need its ranking or its operators; it is closed
// when the test ends.
func SearchIndex(t testing.TB) *search.Index {
	t.Helper()
	v, err := vault.Open(fixture.Vault(), vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(context.Background(), search.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}
