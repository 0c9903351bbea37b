package semantic

import (
	"math"
	"sort"

	"github.com/vault-agent/vault-agent/search"
)

// Hybrid search fuses the lexical ranking and the semantic one by a convex
// combination of normalised scores, with a weight chosen per query.
//
// Why scores and not ranks: reciprocal rank fusion (Cormack et al., 2009)
// throws away how far apart two results are, so a note the words find by
// a wide margin and one the vectors put first by a hair count the same;
// measured with a real sentence encoder, it let a modest model push the
// lexical first hit out of the top ten. A convex combination of scores
// normalised per query (Bruch et al., "An Analysis of Fusion Functions for
// Hybrid Retrieval", 2023; Weaviate's relative score fusion and
// OpenSearch's normalisation processor do the same per query) keeps the
// margins. The lexical score is divided by the best one (theoretical
// min-max: BM25's minimum is 0); the cosine is min-max scaled over the
// semantic list's first semFloorRank notes (the cosine at that rank scores
// 0, the best 1), as relative score fusion does over its window. The rank
// windows are lexDepth and semDepth, and every candidate of either list
// gets both scores (a note outside the semantic window is scored from its
// vectors all the same).
//
// The weight of the vectors, beta, is decided per query from what the
// lexical search itself saw, never from a question set:
//   - how much of the query the vault holds (search.Match.Held, the largest
//     share of the query's words, weighted by rarity, one note holds): a
//     note holding every word leaves the vectors betaHeld; a query whose
//     words the vault barely holds (the person asks in other words than
//     the notes use) leans on the vectors, up to betaMiss;
//   - how far the words set their first note apart: the second lexical
//     score over the first (a common predictor of a ranking's quality, the
//     score gap). At or below marginLow the words name one note far
//     better than any other and the vectors get no weight; the weight
//     grows to its full value as the two scores meet, where the words
//     cannot tell the notes apart and the vectors decide;
//   - a strong lexical hit, a note whose title or alias is the query, or a
//     first hit holding all the query's words with a clear margin over the
//     second, is never pushed out of the first `protect` results;
//   - how far the model can be trusted at all (Engine.trust): vectors
//     without signal get no weight, and hybrid ranks as lexical search.
type fusion struct {
	betaHeld, betaMiss float64 // the weight of the vectors at Held >= heldHigh and <= heldLow
	heldHigh, heldLow  float64
	// protect is the rank a strong lexical hit never falls below.
	protect int
	// strongMargin: the first lexical hit is strong when it holds all
	// the query's words and the second scores at most this share of it.
	strongMargin float64
	// semFloorRank is the rank of the semantic list whose cosine scores 0.
	semFloorRank int
	// marginLow is the ratio of the second lexical score to the first at
	// or below which the vectors get no weight.
	marginLow float64
}

// defaultFusion was chosen on the help vocabulary and rockman question
// sets with Universal Sentence Encoder lite and checked on the hub and
// plain help sets (BENCHMARKS.md), from a plateau rather than its best
// point: the vectors count little while a note holds the
// query's words (a modest model mostly disorders what the words found),
// much when the vault lacks them, and only a note among the semantic
// list's first ten gets a semantic score above 0.
var defaultFusion = fusion{
	betaHeld:     0.1,
	betaMiss:     0.7,
	heldHigh:     0.9,
	heldLow:      0.3,
	protect:      3,
	strongMargin: 0.8,
	semFloorRank: 10,
	marginLow:    0.5,
}

// beta is the weight of the vectors for a query whose lexical search saw
// m and ranked lex, with vectors trusted as far as trust (0..1).
func (f fusion) beta(m search.Match, lex []search.Result, trust float64) float64 {
	t := (f.heldHigh - m.Held) / (f.heldHigh - f.heldLow)
	t = min(max(t, 0), 1)
	gap := (lexMargin(lex) - f.marginLow) / (1 - f.marginLow)
	return trust * min(max(gap, 0), 1) * (f.betaHeld + t*(f.betaMiss-f.betaHeld))
}

// lexMargin is the second lexical score over the first, notes whose title
// or alias is the query left out (they stay first whatever the fusion);
// 1 when there are not two such scores to compare: a single hit is no
// sign that the words found the right note.
func lexMargin(lex []search.Result) float64 {
	var first float64
	for _, x := range lex {
		switch {
		case search.IsExact(x.Score):
		case first == 0:
			first = x.Score
		case first > 0:
			return x.Score / first
		}
	}
	return 1
}

// candidate is a note of either list.
type candidate struct {
	path    string
	lexRank int     // 1-based rank in the lexical list, 0 when absent
	lex     float64 // normalised lexical score, 0..1
	sem     float64 // normalised semantic score, 0..1
	exact   bool    // its title or alias is the query
	score   float64
}

// semList is the semantic list: notes, best first, with their cosines.
type semList struct {
	paths  []string
	scores []float32
}

// fuse ranks the candidates of both lists. cosOf returns the cosine of a
// note's best chunk for notes outside the semantic list (false: no
// vectors). beta is the weight of the vectors.
func (f fusion) fuse(lex []search.Result, m search.Match, sem semList, cosOf func(string) (float32, bool), beta float64) []candidate {
	byPath := make(map[string]*candidate, len(lex)+len(sem.paths))
	order := make([]*candidate, 0, len(lex)+len(sem.paths))
	get := func(p string) *candidate {
		c := byPath[p]
		if c == nil {
			c = &candidate{path: p}
			byPath[p] = c
			order = append(order, c)
		}
		return c
	}
	top := 0.0
	for _, x := range lex {
		if !search.IsExact(x.Score) {
			top = x.Score
			break
		}
	}
	for i, x := range lex {
		c := get(x.Path)
		c.lexRank = i + 1
		c.exact = search.IsExact(x.Score)
		if !c.exact && top > 0 {
			c.lex = x.Score / top
		}
	}
	hi, lo := 0.0, 0.0
	if n := len(sem.scores); n > 0 {
		hi = float64(sem.scores[0])
		lo = float64(sem.scores[min(f.semFloorRank, n)-1])
	}
	scale := func(cos float64) float64 {
		if hi <= lo {
			return 0
		}
		return min(max((cos-lo)/(hi-lo), 0), 1)
	}
	for i, p := range sem.paths {
		get(p).sem = scale(float64(sem.scores[i]))
	}
	for _, c := range order {
		if c.lexRank > 0 && c.sem == 0 {
			if cos, ok := cosOf(c.path); ok {
				c.sem = scale(float64(cos))
			}
		}
		c.score = (1-beta)*c.lex + beta*c.sem
		if c.exact {
			c.score += 2 // above every fused score, in lexical order
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].score > order[j].score })
	f.protectStrong(order, lex, m)
	out := make([]candidate, len(order))
	for i, c := range order {
		out[i] = *c
	}
	return out
}

// protectStrong moves a strong lexical first hit that fell below rank
// f.protect up to it.
func (f fusion) protectStrong(order []*candidate, lex []search.Result, m search.Match) {
	if len(lex) == 0 || search.IsExact(lex[0].Score) || m.Held < 0.999 {
		return // exact hits are first already
	}
	if len(lex) > 1 && lex[1].Score > f.strongMargin*lex[0].Score {
		return
	}
	for i, c := range order {
		if c.path != lex[0].Path {
			continue
		}
		if i >= f.protect {
			copy(order[f.protect:i+1], order[f.protect-1:i])
			order[f.protect-1] = c
			c.score = math.Nextafter(order[f.protect].score, math.Inf(1))
		}
		return
	}
}
