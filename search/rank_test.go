package search

import (
	"fmt"
	"slices"
	"testing"
)

// Ranking on the fixture vault (testdata/vault, see
// internal/vaultgen/FIXTURE_NOTES.md). Each case says why its note must
// win; together they pin the behaviour rank.go describes.
func TestRankingFixture(t *testing.T) {
	ix := fixtureIndex(t)
	tests := []struct {
		query string
		top   []string // the first results, in order; "" accepts any note at that rank
		not   string   // a note that must not be first
		why   string
	}{
		{
			query: "what keeps my bread starter alive between bakes",
			top:   []string{"recipes/Sourdough Starter.md"},
			why: "the question shares one distinctive word, starter, with the note's title; no minimum of " +
				"matched words may drop it, and notes holding only common words (bread, keep) rank below",
		},
		{
			query: "is there a way to make shakshuka",
			top:   []string{"recipes/Shakshuka.md"},
			why:   "way and make are filler: never needed, weighed down, and the rest of the question is the note's title",
		},
		{
			query: "2026-03-18",
			top:   []string{"journal/2026-03-18.md"},
			not:   "work/1-on-1 with Priya.md",
			why: "a note named exactly what was typed comes first, although the 1:1 notes hold the date in a " +
				"heading and more often",
		},
		{
			query: "Git Cheatsheet",
			top:   []string{"kb/Git Cheatsheet.md"},
			why:   "an exact alias counts as an exact title",
		},
		{
			query: "postgres partial index unsent rows",
			top:   []string{"kb/databases/Postgres Indexing.md"},
			why:   "the note holding the most (and the rarest) of the words ranks first",
		},
		{
			query: "webhook",
			top:   []string{"kb/Knowledge Base.md", "kb/databases/Transactional Outbox.md"},
			why: "the outbox note never says webhook; the map of content says it of its link to the note " +
				"(\"never lose a webhook\"), so the note ranks right after the list itself",
		},
		{
			query: "consistnet hashing",
			top:   []string{"kb/distributed/Consistent Hashing.md"},
			why:   "a transposition (nt for tn) is one edit: the misspelt word finds the note",
		},
		{
			query: "shakshuak",
			top:   []string{"recipes/Shakshuka.md"},
			why:   "a transposition at the end of the only word",
		},
		{
			query: "airtime spreading factor",
			top:   []string{"projects/alpha/design/Architecture.md"},
			why:   "spreading factor is a phrase in the architecture note, and the words near each other count more",
		},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res := search(t, ix, Request{Query: tt.query})
			got := paths(res)
			for i, want := range tt.top {
				if want == "" {
					continue
				}
				if i >= len(got) || got[i] != want {
					t.Errorf("%q: results %v, want %s at rank %d: %s", tt.query, head(got, 5), want, i+1, tt.why)
				}
			}
			if tt.not != "" && len(got) > 0 && got[0] == tt.not {
				t.Errorf("%q: %s must not be first: %s", tt.query, tt.not, tt.why)
			}
		})
	}
	// A note described only by the context of links to it ranks with the
	// list holding the words, above every other note.
	for q, note := range map[string]string{
		"reshuffling when a box dies": "kb/distributed/Consistent Hashing.md",
		"killing the closed tab":      "kb/go/Context Cancellation.md",
	} {
		got := paths(search(t, ix, Request{Query: q}))
		want := []string{"kb/Knowledge Base.md", note}
		if len(got) < 2 || !slices.Contains(want, got[0]) || !slices.Contains(want, got[1]) {
			t.Errorf("%q: %v, want %v first: only the map of content's line about its link says these words", q, head(got, 5), want)
		}
	}
}

// A spelling fix backed by a single note may be a coincidental neighbour
// of a word the vault lacks: it never outranks a note holding the query's
// other word exactly. Backed by several notes, it is trusted.
func TestTypoDoesNotHijack(t *testing.T) {
	// drip is in three notes, so it is commoner than xylophone, which one
	// note holds: weighed by its rarity alone, the correction would win.
	dir := writeVault(t, map[string]string{
		"Drip irrigation.md": "# Drip irrigation\nThe drip line waters the beds at dawn.\n",
		"Music room.md":      "# Music room\nThe old xylophone stands in the corner.\n",
		"Garden.md":          "# Garden\nBeds, paths, a shed and a drip line.\n",
		"Shed.md":            "# Shed\nSpare drip emitters are on the shelf.\n",
		"Kitchen.md":         "# Kitchen\nNothing to see.\n",
		"Hall.md":            "# Hall\nCoats.\n",
	})
	ix := openIndex(t, dir, "")
	res := search(t, ix, Request{Query: "drip xylophnoe"})
	if got := paths(res); len(got) != 4 || got[3] != "Music room.md" {
		t.Errorf("drip xylophnoe: %v; want the three notes holding drip first, then the one found by the correction", got)
	}
	if !res.Fuzzy {
		t.Error("Fuzzy not set: xylophnoe was matched by a correction")
	}

	// The same misspelling of a word three notes share is trusted: the
	// corrected word is as rare as it is, and it decides.
	for i := range 3 {
		writeFile(t, dir, []string{"a.md", "b.md", "c.md"}[i], "The xylophone again, note "+string(rune('a'+i))+".\n")
	}
	writeFile(t, dir, "Drip irrigation.md", "# Drip irrigation\nThe drip line waters the beds at dawn. Drip, drip.\n")
	writeFile(t, dir, "Music room.md", "# Music room\nThe old xylophone stands in the corner.\n")
	if _, err := ix.Sync(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if got := paths(search(t, ix, Request{Query: "xylophnoe music"})); len(got) == 0 || got[0] != "Music room.md" {
		t.Errorf("xylophnoe music: %v, want Music room.md first", got)
	}
}

// Words close together count more than the same words apart.
func TestProximity(t *testing.T) {
	// far.md is the shorter note, so without proximity it would win.
	filler := " lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
	dir := writeVault(t, map[string]string{
		"near.md": "# Notes\nWe planned the garden sensor rollout." + filler + filler + "incididunt labore\n",
		"far.md":  "# Notes\nWe planned the garden." + filler + "Then the sensor rollout." + filler + "\n",
	})
	ix := openIndex(t, dir, "")
	if got := paths(search(t, ix, Request{Query: "garden sensor"})); len(got) != 2 || got[0] != "near.md" {
		t.Errorf("garden sensor: %v, want near.md (adjacent words) first", got)
	}
}

// The query language keeps its meaning around ranked words.
func TestRankingKeepsOperators(t *testing.T) {
	ix := fixtureIndex(t)
	for _, tt := range []struct {
		query string
		check func([]string) bool
		why   string
	}{
		{"starter -bread", func(got []string) bool { return !slices.Contains(got, "recipes/Country Sourdough Loaf.md") },
			"an excluded word excludes"},
		{`"partial index" postgres`, func(got []string) bool { return len(got) > 0 && got[0] == "kb/databases/Postgres Indexing.md" },
			"a phrase must match, free words rank"},
		{"tag:recipe starter", func(got []string) bool {
			for _, p := range got {
				if p[:8] != "recipes/" {
					return false
				}
			}
			return len(got) > 0
		}, "a tag filters"},
		{"shakshuka OR galette", func(got []string) bool {
			return slices.Contains(got, "recipes/Shakshuka.md") && slices.Contains(got, "recipes/Crêpes Bretonnes.md")
		}, "either side of OR matches"},
	} {
		if got := paths(search(t, ix, Request{Query: tt.query, Limit: 50})); !tt.check(got) {
			t.Errorf("%q: %v: %s", tt.query, got, tt.why)
		}
	}
}

func TestKeepWords(t *testing.T) {
	var words []rankWord
	var dfs []uint64
	for i := range maxRankWords + 8 {
		words = append(words, rankWord{token: fmt.Sprint("w", i), filler: i%10 == 0})
		dfs = append(dfs, uint64(i+1))
	}
	dfs[3] = 0 // a word no note holds
	keep := keepWords(words, dfs)
	n := 0
	for i, k := range keep {
		if k {
			n++
		}
		if k && (words[i].filler || i == 3) {
			t.Errorf("kept %s (filler %v, df %d) over rarer content words", words[i].token, words[i].filler, dfs[i])
		}
	}
	if n != maxRankWords {
		t.Errorf("kept %d words, want %d", n, maxRankWords)
	}
}

// TestComparisonWordsAreFiller: the words that frame a comparison
// ("difference between X and Y", "X versus Y") say nothing about which
// note is meant; a note named after the word "difference" does not
// outrank the notes about the things compared.
func TestComparisonWordsAreFiller(t *testing.T) {
	files := map[string]string{
		"games/Spot the Difference.md": "# Spot the Difference\n\nA puzzle: find the differences between two pictures. Compare them closely.\n",
		"coffee/Espresso.md":           "# Espresso\n\nEspresso is brewed by forcing hot water through finely ground coffee under pressure.\n",
		"coffee/Pour-over.md":          "# Pour-over\n\nPour-over coffee drips slowly through a paper filter; it is lighter than espresso.\n",
		"coffee/Beans.md":              "# Beans\n\nWhere I buy beans, and the grinder settings I use for each.\n",
	}
	// Espresso and pour-over are common words of this vault; difference is
	// rare, and would weigh most were it not filler.
	for i := range 4 {
		files[fmt.Sprintf("coffee/Cafe %d.md", i)] = fmt.Sprintf("# Cafe %d\n\nTheir espresso was bitter; the pour-over was fine.\n", i)
	}
	dir := writeVault(t, files)
	ix := openIndex(t, dir, t.TempDir())
	for _, q := range []string{"difference between espresso and pour-over", "compare espresso versus pour-over"} {
		got := paths(search(t, ix, Request{Query: q}))
		if len(got) == 0 || got[0] == "games/Spot the Difference.md" {
			t.Errorf("%q: results %v: the note named after the comparison word ranks first", q, got)
		}
	}
}
