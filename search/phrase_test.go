package search

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// phraseVault has phrases whole, split, reversed, across two headings,
// with stop words between their words and repeated.
var phraseVault = map[string]string{
	"whole.md":    "# Alpha beta\nThe alpha beta gamma note, state of the art.\n",
	"split.md":    "# Split\nAlpha and then beta, never together.\n",
	"reversed.md": "# Reversed\nBeta alpha, the other way round.\n",
	"headings.md": "# Alpha\ntext\n## Beta gamma\nmore text\n",
	"repeat.md":   "# Repeat\nnew york new york, alpha beta alpha beta.\n",
	"state.md":    "# State\nThe state of the art, and state of art.\n",
	"cjk.md":      "# 東京タワー\n東京タワーの夜景\n",
}

// TestPhraseQueryAsBleve checks that phraseQuery matches the notes bleve's
// MatchPhraseQuery matches, with the same scores, in each field a phrase is
// searched in.
func TestPhraseQueryAsBleve(t *testing.T) {
	ix := openIndex(t, writeVault(t, phraseVault), "")
	phrases := []string{"alpha beta", "beta alpha", "alpha beta gamma", "beta gamma", "new york", "york new york",
		"state of the art", "state of art", "the art", "alpha", "alpha zeta", "東京タワー"}
	fields := []fieldBoost{{fTitle, 5}, {fHeadings, 3}, {fBody, 1}, {fTitleCJK, 5}, {fBodyCJK, 1}}
	matched := 0
	for _, text := range phrases {
		for _, f := range fields {
			t.Run(text+"/"+f.field, func(t *testing.T) {
				want := query.NewMatchPhraseQuery(text)
				want.SetField(f.field)
				want.SetBoost(f.boost)
				got := bleveHits(t, ix, &phraseQuery{text: text, field: f.field, boost: f.boost})
				if w := bleveHits(t, ix, want); !slices.Equal(got, w) {
					t.Errorf("got %q, bleve %q", got, w)
				}
				matched += len(got)
			})
		}
	}
	if matched < 10 {
		t.Errorf("%d matches in all, want the vault to match most phrases", matched)
	}
	// Alone and within the query a search compiles (several fields, free
	// words beside).
	for _, tt := range []struct{ q, want string }{
		{`"alpha beta"`, "whole.md repeat.md"},
		{`"beta gamma"`, "headings.md whole.md"},
		{`"state of the art" note`, "whole.md state.md"},
	} {
		got := sortedPaths(search(t, ix, Request{Query: tt.q}))
		want := strings.Fields(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", tt.q, got, want)
		}
	}
}

// TestPhraseAllocationsFlat checks that what a phrase search allocates does
// not grow with the notes holding its words apart (bleve's phrase searcher
// allocated maps of their positions for each).
func TestPhraseAllocationsFlat(t *testing.T) {
	perSearch := func(n int) float64 {
		files := map[string]string{"hit.md": "# Hit\nsalmon river here\n"}
		for i := range n {
			files[fmt.Sprintf("apart %03d.md", i)] = fmt.Sprintf("# Apart %d\nsalmon swim up the river, the salmon and the river again %d\n", i, i)
		}
		ix := openIndex(t, writeVault(t, files), "")
		if got := paths(search(t, ix, Request{Query: `"salmon river"`})); !slices.Equal(got, []string{"hit.md"}) {
			t.Fatalf("%d notes apart: %v, want [hit.md]", n, got)
		}
		return allocPerSearch(t, ix, Request{Query: `"salmon river"`, NoSnippets: true})
	}
	small, large := perSearch(50), perSearch(450)
	t.Logf("%.0f and %.0f bytes a search", small, large)
	// 400 notes more hold both words: bleve's maps took about 2 KB each.
	if extra := large - small; extra > 100<<10 || math.IsNaN(extra) {
		t.Errorf("a phrase search allocates %.0f bytes with 450 notes holding its words apart, %.0f with 50: %.0f bytes more, want under 100 KB", large, small, extra)
	}
}

// bleveHits runs q on ix's bleve index as it is, and returns each hit's
// id and score, sorted.
func bleveHits(t *testing.T, ix *Index, q query.Query) []string {
	t.Helper()
	ix.idxMu.RLock()
	res, err := ix.idx.SearchInContext(context.Background(), bleve.NewSearchRequestOptions(q, 100, 0, false))
	ix.idxMu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, fmt.Sprintf("%s %.12g", h.ID, h.Score))
	}
	slices.Sort(out)
	return out
}

// allocPerSearch returns the bytes a search for req allocates on ix, on
// average over a few (the process's whole allocation meanwhile: the
// index's background work is waited for first).
func allocPerSearch(t *testing.T, ix *Index, req Request) float64 {
	t.Helper()
	ix.warming.Wait()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const runs = 5
	for range runs {
		search(t, ix, req)
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.TotalAlloc-m0.TotalAlloc) / runs
}
