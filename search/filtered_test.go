package search

import (
	"fmt"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"
)

// TestFilteredQueryAsBleve checks that filteredQuery matches the notes
// bleve's boolean query with the same filter matches, with the same
// scores, for each arrangement of clauses the boolean query treats apart.
func TestFilteredQueryAsBleve(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"a/one.md":   "---\ntags: [keep]\n---\n# One\nheron heron marsh\n",
		"a/two.md":   "---\ntags: [keep]\n---\n# Two\nheron reed\n",
		"a/three.md": "# Three\nheron marsh reed\n",
		"b/four.md":  "---\ntags: [keep]\n---\n# Four\nmarsh only\n",
		"b/five.md":  "# Five\nheron\n",
	}), "")
	term := func(w string) query.Query {
		q := query.NewTermQuery(w)
		q.SetField(fBody)
		return q
	}
	tag := query.NewTermQuery("keep")
	tag.SetField(fTag)
	twoFilters := query.NewConjunctionQuery([]query.Query{tag, term("heron")})
	type clauses struct{ must, should, mustNot []query.Query }
	cases := map[string]clauses{
		"must":            {must: []query.Query{term("heron")}},
		"must and not":    {must: []query.Query{term("heron")}, mustNot: []query.Query{term("reed")}},
		"should":          {should: []query.Query{term("heron"), term("marsh")}},
		"must, should":    {must: []query.Query{term("marsh")}, should: []query.Query{term("heron")}},
		"only not":        {mustNot: []query.Query{term("reed")}},
		"only the filter": {},
	}
	build := func(c clauses) *query.BooleanQuery {
		b := query.NewBooleanQuery(nil, nil, nil)
		for _, q := range c.must {
			b.AddMust(q)
		}
		for _, q := range c.should {
			b.AddShould(q)
		}
		for _, q := range c.mustNot {
			b.AddMustNot(q)
		}
		return b
	}
	matched := 0
	for name, c := range cases {
		for fname, filter := range map[string]query.Query{"tag": tag, "tag and word": twoFilters} {
			t.Run(name+"/"+fname, func(t *testing.T) {
				want := build(c)
				want.AddFilter(filter)
				got := bleveHits(t, ix, &filteredQuery{q: build(c), filter: filter})
				if w := bleveHits(t, ix, want); !slices.Equal(got, w) {
					t.Errorf("got %q, bleve %q", got, w)
				}
				matched += len(got)
			})
		}
	}
	if matched < 10 {
		t.Errorf("%d matches in all, want most cases to match", matched)
	}
}

// TestFilteredAllocationsFlat checks that what a filtered search allocates
// does not grow with the matches its filter rejects (bleve's filtering
// searcher dropped each without giving it back to the search's pool), for
// the request's filters and for an operator beside free words.
func TestFilteredAllocationsFlat(t *testing.T) {
	for _, req := range []Request{
		{Query: "salmon river", Folders: []string{"kept"}},
		{Query: "salmon river tag:keep"},
	} {
		t.Run(fmt.Sprintf("%q in %v", req.Query, req.Folders), func(t *testing.T) {
			req.NoSnippets = true
			perSearch := func(n int) float64 {
				files := map[string]string{"kept/hit.md": "---\ntags: [keep]\n---\n# Hit\nsalmon river\n"}
				for i := range n {
					files[fmt.Sprintf("other/note %03d.md", i)] = fmt.Sprintf("# Note %d\nsalmon river %d\n", i, i)
				}
				ix := openIndex(t, writeVault(t, files), "")
				if got := paths(search(t, ix, req)); !slices.Equal(got, []string{"kept/hit.md"}) {
					t.Fatalf("%d notes elsewhere: %v, want [kept/hit.md]", n, got)
				}
				return allocPerSearch(t, ix, req)
			}
			small, large := perSearch(50), perSearch(450)
			t.Logf("%.0f and %.0f bytes a search", small, large)
			// 400 matches more rejected by the filter: bleve's took about
			// 250 bytes each.
			if extra := large - small; extra > 40<<10 {
				t.Errorf("a filtered search allocates %.0f bytes with 450 notes outside its filter, %.0f with 50: %.0f bytes more, want under 40 KB", large, small, extra)
			}
		})
	}
}
