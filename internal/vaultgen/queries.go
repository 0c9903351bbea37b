package vaultgen

import (
	"math/rand/v2"
	"strings"
)

// Queries returns n search queries in the project's query language, drawn
// from the same vocabulary and frequency curve as generated notes, for
// search benchmarks: mostly one to three free terms, plus phrases,
// exclusions, tag filters and the odd typo. The same seed gives the same
// queries.
func Queries(n int, seed int64) []string {
	v := getVocab()
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e77))
	out := make([]string, 0, n)
	for len(out) < n {
		t := &v.topics[r.IntN(len(v.topics))]
		g := newTextGen(r, v, t, nil)
		term := func() string {
			if r.IntN(2) == 0 {
				return t.nouns[g.topicZ.Uint64()]
			}
			return g.noun()
		}
		var q string
		switch x := r.IntN(20); {
		case x < 10:
			k := 1 + r.IntN(3)
			terms := make([]string, k)
			for i := range terms {
				terms[i] = term()
			}
			q = strings.Join(terms, " ")
		case x < 13:
			q = `"` + g.adj() + " " + term() + `"`
		case x < 15:
			q = term() + " -" + term()
		case x < 18:
			q = "tag:#" + t.tags[r.IntN(len(t.tags))] + " " + term()
		default:
			// a typo: swap two adjacent letters of a longer word
			w := []rune(term())
			if len(w) >= 5 {
				i := 1 + r.IntN(len(w)-2)
				w[i], w[i+1] = w[i+1], w[i]
			}
			q = string(w)
		}
		out = append(out, q)
	}
	return out
}
