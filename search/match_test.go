package search

import (
	"context"
	"testing"
)

// Results.Match says how much of the query the vault holds: all of it,
// part of it, or a word no note has (counted as missing, not ignored);
// and how many results have the query as their title.
func TestMatch(t *testing.T) {
	ix := fixtureIndex(t)
	cases := []struct {
		q          string
		held       func(float64) bool
		exact      int
		snippetsOf bool
	}{
		{"sourdough starter", func(h float64) bool { return h > 0.999 }, 1, true},
		{"sourdough zqxwvy", func(h float64) bool { return h > 0.05 && h < 0.6 }, 0, true},
		{"sourdough starter levain hydration ratio", func(h float64) bool { return h < 0.999 }, 0, false},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			res, err := ix.Search(context.Background(), Request{Query: c.q, Limit: 10, NoSnippets: !c.snippetsOf})
			if err != nil {
				t.Fatal(err)
			}
			if !c.held(res.Match.Held) || res.Match.Exact != c.exact {
				t.Errorf("Match %+v", res.Match)
			}
			if len(res.Results) == 0 {
				t.Fatal("no results")
			}
			if got := res.Results[0].Snippet != ""; got != c.snippetsOf {
				t.Errorf("snippet %q, want one: %v", res.Results[0].Snippet, c.snippetsOf)
			}
			if !c.snippetsOf {
				ix.AddSnippets(res, res.Results[:1])
				if res.Results[0].Snippet == "" {
					t.Error("AddSnippets added no snippet")
				}
			}
		})
	}
}
