package search

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The expectations below are the "Questions → expected notes" table of
// internal/vaultgen/FIXTURE_NOTES.md, numbered as there.

var (
	fixtureOnce sync.Once
	fixtureIx   *Index
)

// fixtureIndex is one in-memory index over testdata/vault shared by the
// read-only fixture tests.
func fixtureIndex(t *testing.T) *Index {
	t.Helper()
	fixtureOnce.Do(func() {
		ix, err := openFixture()
		if err != nil {
			t.Fatalf("index testdata/vault: %v", err)
		}
		fixtureIx = ix
	})
	if fixtureIx == nil {
		t.Fatal("fixture index unavailable")
	}
	return fixtureIx
}

func TestFixtureRelevance(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		n        int
		query    string
		top      string   // rank 1
		topN     int      // if > 0: also require inTop within the first topN
		inTop    []string // with topN
		exactly  []string // exact result set
		includes []string
		excludes []string
		allUnder string // every result under this folder
		fuzzy    *bool
		partial  *bool
		none     bool
	}{
		{n: 1, query: "how do I make a sourdough starter", top: "recipes/Sourdough Starter.md"},
		{n: 2, query: "sourdoguh starter", top: "recipes/Sourdough Starter.md"},
		{n: 3, query: "shakshuca", top: "recipes/Shakshuka.md", fuzzy: ptr(true)},
		{n: 4, query: "cafe de olla", top: "recipes/Café de Olla.md"},
		{n: 5, query: "kasespatzle", top: "recipes/Käsespätzle.md"},
		{n: 6, query: "Muller", top: "people/Jonas Müller.md", includes: []string{"recipes/Käsespätzle.md"}},
		{n: 7, query: "pasteis de nata", top: "travel/Lisbon 2025.md"},
		{n: 8, query: "naive", includes: []string{"reading/papers/BM25 and Probabilistic Relevance.md", "kb/distributed/Consistent Hashing.md"}},
		{n: 9, query: `"no space left on device"`, exactly: []string{"work/meetings/2026-04-02 Incident Review.md"}},
		{n: 10, query: `"stretch and folds"`, top: "recipes/Country Sourdough Loaf.md"},
		{n: 11, query: "outbox -invoice", top: "kb/databases/Transactional Outbox.md",
			includes: []string{"kb/go/Go Concurrency Patterns.md", "work/Meeting Notes.md", "journal/2026-04-08.md", "journal/2026-04-20.md"},
			excludes: []string{"projects/beta/Project Beta.md", "projects/beta/Outbox Migration Plan.md", "work/meetings/2026-03-12 Beta Kickoff.md",
				"work/meetings/2026-04-02 Incident Review.md", "kb/databases/Postgres Indexing.md", "reading/books/Thinking in Systems.md",
				"Home.md", "journal/2026-03-12.md", "journal/2026-04-01.md"}},
		{n: 12, query: "tag:#area/health", exactly: []string{"Home.md", "journal/2026-03-05.md", "journal/2026-03-25.md",
			"personal/Health/Running Plan.md", "personal/Health/Sleep Log.md", "reading/books/Why We Sleep.md"}},
		{n: 13, query: "tag:#area/health/sleep", exactly: []string{"journal/2026-03-05.md", "journal/2026-03-25.md",
			"personal/Health/Sleep Log.md", "reading/books/Why We Sleep.md"}},
		{n: 14, query: "tag:#project/alpha", exactly: projectAlpha},
		{n: 15, query: "tag:#project", exactly: append(slices.Clone(projectAlpha), "journal/2026-03-12.md", "projects/beta/Project Beta.md",
			"projects/beta/Outbox Migration Plan.md", "work/meetings/2026-03-12 Beta Kickoff.md", "work/meetings/2026-04-02 Incident Review.md")},
		{n: 16, query: "path:recipes/ pork", exactly: []string{"recipes/红烧肉.md"}},
		{n: 17, query: "path:projects/alpha/ battery", top: "projects/alpha/design/Power Budget.md", allUnder: "projects/alpha/"},
		{n: 18, query: `file:"Meeting Notes"`, exactly: []string{"personal/Meeting Notes.md", "work/Meeting Notes.md"}},
		{n: 18, query: `file:Meeting`, exactly: []string{"personal/Meeting Notes.md", "work/Meeting Notes.md"}},
		{n: 18, query: `file:.md file:Meeting`, exactly: []string{"personal/Meeting Notes.md", "work/Meeting Notes.md"}},
		{n: 19, query: "红烧肉", top: "recipes/红烧肉.md"},
		{n: 20, query: "冰糖", exactly: []string{"recipes/红烧肉.md"}},
		{n: 21, query: "紅葉", exactly: []string{"travel/Japan 2026/京都メモ.md"}},
		{n: 22, query: "Raft leader election timeout", top: "reading/papers/Raft Consensus.md"},
		{n: 23, query: "partial index", top: "kb/databases/Postgres Indexing.md"},
		{n: 24, query: "what caused the invoice email outage", top: "work/meetings/2026-04-02 Incident Review.md"},
		{n: 25, query: "how long does a sensor node battery last", top: "projects/alpha/design/Power Budget.md"},
		{n: 26, query: "Charles Dowding no-dig compost", top: "reading/Podcast Notes.md"},
		{n: 27, query: "leverage points", top: "reading/books/Thinking in Systems.md"},
		{n: 28, query: "kitchen countertop oak or quartz", top: "projects/Kitchen Renovation.md", topN: 3, inTop: []string{"journal/2026-03-02.md"}},
		{n: 29, query: "buckwheat galette", top: "recipes/Crêpes Bretonnes.md"},
		{n: 30, query: "zzyzx", none: true},
		// Beyond the table: ignored files and links that leave the vault.
		{n: 31, query: "localhost", none: true},
		{n: 31, query: "blevesearch", none: true},
		{n: 31, query: "tag:trash-only-tag", none: true},
		{n: 32, query: "渡辺健二", top: "people/Kenji Watanabe.md"},
		{n: 32, query: "京都", top: "travel/Japan 2026/京都メモ.md"},
		{n: 32, query: "Yeastwood", exactly: []string{"recipes/Sourdough Starter.md"}, partial: ptr(false)},
		// Partial fallback: no note has both terms (not even fuzzily), so
		// notes with either one come back, flagged.
		{n: 33, query: "Yeastwood zzyzx", exactly: []string{"recipes/Sourdough Starter.md"}, partial: ptr(true), fuzzy: ptr(false)},
		{n: 33, query: "Yeastwood zzyzx -starter", none: true},
		{n: 33, query: "sourdough starter", top: "recipes/Sourdough Starter.md", partial: ptr(false)},
		{n: 32, query: "INC-2291", top: "work/meetings/2026-04-02 Incident Review.md"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res := search(t, ix, Request{Query: tt.query, Limit: 100})
			got := paths(res)
			if tt.none {
				if len(got) != 0 {
					t.Fatalf("#%d %q: want no results, got %v", tt.n, tt.query, got)
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("#%d %q: no results", tt.n, tt.query)
			}
			if tt.top != "" && got[0] != tt.top {
				t.Errorf("#%d %q: top = %s, want %s (results %v)", tt.n, tt.query, got[0], tt.top, head(got, 5))
			}
			if tt.topN > 0 {
				for _, p := range tt.inTop {
					if !slices.Contains(head(got, tt.topN), p) {
						t.Errorf("#%d %q: %s not in top %d: %v", tt.n, tt.query, p, tt.topN, head(got, 5))
					}
				}
			}
			if tt.exactly != nil {
				want := slices.Clone(tt.exactly)
				sort.Strings(want)
				if s := sortedPaths(res); !reflect.DeepEqual(s, want) {
					t.Errorf("#%d %q: results = %v, want exactly %v", tt.n, tt.query, s, want)
				}
			}
			for _, p := range tt.includes {
				if !slices.Contains(got, p) {
					t.Errorf("#%d %q: missing %s in %v", tt.n, tt.query, p, got)
				}
			}
			for _, p := range tt.excludes {
				if slices.Contains(got, p) {
					t.Errorf("#%d %q: %s must be excluded", tt.n, tt.query, p)
				}
			}
			if tt.allUnder != "" {
				for _, p := range got {
					if !strings.HasPrefix(p, tt.allUnder) {
						t.Errorf("#%d %q: %s outside %s", tt.n, tt.query, p, tt.allUnder)
					}
				}
			}
			if tt.partial != nil && res.Partial != *tt.partial {
				t.Errorf("#%d %q: Partial = %v, want %v", tt.n, tt.query, res.Partial, *tt.partial)
			}
			if tt.fuzzy != nil && res.Fuzzy != *tt.fuzzy {
				t.Errorf("#%d %q: Fuzzy = %v, want %v", tt.n, tt.query, res.Fuzzy, *tt.fuzzy)
			}
			for _, r := range res.Results[:min(3, len(res.Results))] {
				if r.Snippet == "" && !strings.Contains(tt.query, ":") {
					t.Errorf("#%d %q: %s has no snippet", tt.n, tt.query, r.Path)
				}
			}
		})
	}
}

var projectAlpha = []string{"Home.md", "journal/2026-03-10.md", "journal/2026-03-18.md", "journal/2026-04-08.md",
	"journal/2026-04-14.md", "projects/alpha/Project Alpha.md", "projects/alpha/design/Architecture.md",
	"projects/alpha/design/Power Budget.md"}

func TestFixtureTags(t *testing.T) {
	ix := fixtureIndex(t)
	if n := ix.Count(); n != 66 && n != 67 {
		t.Errorf("Count = %d, want 66 or 67", n)
	}
	tags := map[string]int{}
	for _, tc := range ix.Tags() {
		tags[tc.Tag] = tc.Count
	}
	for _, bad := range []string{"trash-only-tag", "trash", "not-a-tag", "define", "fair-use-policy"} {
		if _, ok := tags[bad]; ok {
			t.Errorf("tag %q must not be listed", bad)
		}
	}
	if tags["area/health/sleep"] != 4 || tags["area/health"] != 6 || tags["project"] != 13 {
		t.Errorf("tag counts: area/health/sleep=%d area/health=%d project=%d", tags["area/health/sleep"], tags["area/health"], tags["project"])
	}
	for _, p := range ix.Paths() {
		if strings.HasPrefix(p, ".") || p == "outside-link.md" || p == "attachments/escape-link.md" {
			t.Errorf("path %s must not be indexed", p)
		}
	}
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }

func ptr[T any](v T) *T { return &v }
