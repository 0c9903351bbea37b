package semantic

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
)

func TestFuse(t *testing.T) {
	exact := 1e4 + 3 // the score of a note whose title is the query
	lex := lexHits
	// The vectors rank x, y, z, w first and know a, b, c as poor matches.
	sem := semList{paths: []string{"x", "y", "z", "w", "c", "b"}, scores: []float32{0.9, 0.88, 0.86, 0.84, 0.5, 0.45}}
	cosOf := func(p string) (float32, bool) { return map[string]float32{"a": 0.3}[p], p == "a" }
	f := defaultFusion
	f.semFloorRank = 6
	all := search.Match{Held: 1}
	cases := []struct {
		name string
		lex  []search.Result
		m    search.Match
		beta float64
		want string
	}{
		{"no weight: the lexical order", lex(10, 6, 5), all, 0, "[a b c"},
		{"all weight: the semantic order", lex(6, 6, 5), search.Match{Held: 0.4}, 1, "[x y z w c a b]"},
		{"an exact title stays first", lex(exact, 6, 5), all, 1, "[a x y"},
		{"a strong first hit stays in the top 3", lex(10, 5, 4), all, 1, "[x y a z"},
		{"not strong without all the words", lex(10, 5, 4), search.Match{Held: 0.8}, 1, "[x y z w c a b]"},
		{"not strong without a margin", lex(10, 9, 4), all, 1, "[x y z w c a b]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, d := range f.fuse(c.lex, c.m, sem, cosOf, c.beta) {
				got = append(got, d.path)
			}
			if s := fmt.Sprint(got); !strings.HasPrefix(s, c.want) {
				t.Errorf("fused %s, want %s...", s, c.want)
			}
		})
	}
	// Half the weight each: b, second by its words and close to the query
	// by its vectors, passes a, first by its words only, and x, first by
	// its vectors only.
	agree := semList{paths: []string{"x", "b", "y", "z", "w", "c"}, scores: []float32{0.9, 0.88, 0.86, 0.84, 0.5, 0.45}}
	var got []string
	for _, d := range f.fuse(lex(10, 9, 4), all, agree, cosOf, 0.5) {
		got = append(got, d.path)
	}
	if s := fmt.Sprint(got); !strings.HasPrefix(s, "[b a x") {
		t.Errorf("agreement: fused %s, want [b a x...", s)
	}
}

func TestBeta(t *testing.T) {
	f := defaultFusion
	tied := lexHits(10, 10) // the words cannot tell the first two notes apart
	for _, c := range []struct {
		name              string
		held, trust, want float64
		lex               []search.Result
	}{
		{"all words held", 1, 1, f.betaHeld, tied},
		{"held at the high mark", f.heldHigh, 1, f.betaHeld, tied},
		{"held at the low mark", f.heldLow, 1, f.betaMiss, tied},
		{"few words held", 0.1, 1, f.betaMiss, tied},
		{"half way", (f.heldHigh + f.heldLow) / 2, 1, (f.betaHeld + f.betaMiss) / 2, tied},
		{"no trust", 0.1, 0, 0, tied},
		{"half trust", 0.1, 0.5, f.betaMiss / 2, tied},
		{"one hit", 0.1, 1, f.betaMiss, lexHits(10)},
		{"first far ahead", 0.1, 1, 0, lexHits(10, 10*f.marginLow)},
		{"first ahead", 0.1, 1, f.betaMiss / 2, lexHits(10, 10*(1+f.marginLow)/2)},
		{"exact title first, then close", 0.1, 1, f.betaMiss, append(exactHit("t"), tied...)},
		{"exact title first, then far ahead", 0.1, 1, 0, append(exactHit("t"), lexHits(10, 1)...)},
	} {
		if got := f.beta(search.Match{Held: c.held}, c.lex, c.trust); fmt.Sprintf("%.6f", got) != fmt.Sprintf("%.6f", c.want) {
			t.Errorf("%s: beta(held %.2f, trust %.1f) = %.3f, want %.3f", c.name, c.held, c.trust, got, c.want)
		}
	}
}

// lexHits are lexical results a, b, c... with these scores.
func lexHits(scores ...float64) []search.Result {
	out := make([]search.Result, len(scores))
	for i, s := range scores {
		out[i] = search.Result{Path: string(rune('a' + i)), Score: s}
	}
	return out
}

func exactHit(path string) []search.Result {
	return []search.Result{{Path: path, Score: 1e4 + 5}}
}

// A vault of notes of several sections, on varied subjects.
func sectionsVault(t *testing.T, n int) string {
	dir := t.TempDir()
	words := strings.Fields("apple river stone cloud engine garden piano window forest candle rocket silver violin harbor meadow lantern copper tiger maple comet")
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for s := range 2 + i%4 {
			fmt.Fprintf(&b, "## Part %d\n\n%s %s %s %s\n\n", s, words[(i+s)%len(words)], words[(i*3+s)%len(words)], words[(i*7+s*5)%len(words)], words[(i*11)%len(words)])
		}
		writeFile(t, dir, fmt.Sprintf("n%03d.md", i), b.String())
	}
	return dir
}

// Vectors without signal are not trusted at all, so hybrid search ranks
// exactly as lexical search; vectors with signal are.
func TestRandomVectorsLeaveHybridEqualToLexical(t *testing.T) {
	dir := sectionsVault(t, 160)
	ix := openIndex(t, dir)
	for _, c := range []struct {
		name    string
		fn      llmtest.EmbedFunc
		trusted bool
	}{
		{"random", llmtest.RandomVectors(dims), false},
		{"words", llmtest.WordVectors(dims, nil), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.fn)
			e := f.open(t, ix, f.embedder(t, c.name, 64), "", 64)
			syncOK(t, e)
			trust, measured := e.trust()
			if !measured || (trust > 0) != c.trusted {
				t.Fatalf("trust %.2f (measured %v, effect %.2f), want trusted %v", trust, measured, e.coh.effect, c.trusted)
			}
			if c.trusted {
				return
			}
			for _, q := range []string{"apple", "river stone", "piano window forest", "tiger comet", "maple lantern harbor", "a candle by the river"} {
				lex, err := e.Search(context.Background(), search.Request{Query: q, Mode: search.ModeLexical})
				if err != nil {
					t.Fatal(err)
				}
				hyb, err := e.Search(context.Background(), search.Request{Query: q, Mode: search.ModeHybrid})
				if err != nil {
					t.Fatal(err)
				}
				if a, b := fmt.Sprint(paths(lex.Results)), fmt.Sprint(paths(hyb.Results)); a != b {
					t.Errorf("%q: hybrid %s, lexical %s", q, b, a)
				}
			}
		})
	}
}
