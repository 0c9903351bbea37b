package search

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sort"

	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// Proximity. Words of the query close together in a note, or in one of its
// headings or its title, say more than the same words scattered: "sync
// between devices" in one sentence is about syncing devices. The ranked
// search finds the best notes without positions (reading positions for
// every posting of every common word would cost more than the search);
// the best proxCandidates of them are then re-scored with a bonus for each
// pair of content words within proxWindow words of each other, decaying
// with the distance, as the unordered windows of the sequential dependence
// model do, and re-sorted.

// proxCandidates is how many of the best hits are re-scored, and
// maxProxTerms how many of the query's words (the rarest) are looked for.
const (
	proxCandidates = 30
	maxProxTerms   = 8
)

// proxTerm is one content word of a ranked group: its tokens (with the
// corrections of a typo and compounds) and its IDF.
type proxTerm struct {
	tokens []string
	idf    float64
}

// proximityRerank adds the proximity bonus to the scores of hits; the
// caller sorts them again (run orders them by byScoreThenID).
func proximityRerank(ctx context.Context, r index.IndexReader, hits bsearch.DocumentMatchCollection, terms []proxTerm) {
	if len(terms) < 2 || len(hits) < 2 {
		return
	}
	if len(terms) > maxProxTerms {
		terms = slices.Clone(terms)
		sort.SliceStable(terms, func(i, j int) bool { return terms[i].idf > terms[j].idf })
		terms = terms[:maxProxTerms]
	}
	type cand struct {
		id  index.IndexInternalID
		hit *bsearch.DocumentMatch
	}
	cands := make([]cand, 0, len(hits))
	for _, h := range hits {
		id, err := r.InternalID(h.ID)
		if err != nil || id == nil {
			continue
		}
		cands = append(cands, cand{append(index.IndexInternalID(nil), id...), h})
	}
	sort.Slice(cands, func(i, j int) bool { return bytes.Compare(cands[i].id, cands[j].id) < 0 })

	// pos[c][t] holds the positions of term t in candidate c, per field in
	// turn; positions of different headings (or title and alias) are set
	// apart by their array position.
	bonus := make([]float64, len(cands))
	pos := make([][][]uint64, len(cands))
	for c := range pos {
		pos[c] = make([][]uint64, len(terms))
	}
	for _, f := range rankFields {
		if f.prox == 0 {
			continue
		}
		for c := range pos {
			for t := range pos[c] {
				pos[c][t] = pos[c][t][:0]
			}
		}
		for t, term := range terms {
			for _, tok := range term.tokens {
				tfr, err := r.TermFieldReader(ctx, []byte(tok), f.name, true, false, true)
				if err != nil {
					continue
				}
				if tfr.Count() == 0 {
					tfr.Close()
					continue
				}
				var d index.TermFieldDoc
				for c, cd := range cands {
					got, err := tfr.Advance(cd.id, d.Reset())
					if err != nil || got == nil {
						break
					}
					if !bytes.Equal(got.ID, cd.id) {
						continue
					}
					for _, v := range got.Vectors {
						k := v.Pos
						if len(v.ArrayPositions) > 0 {
							k += v.ArrayPositions[0] << 32
						}
						pos[c][t] = append(pos[c][t], k)
					}
				}
				tfr.Close()
			}
		}
		for c := range cands {
			bonus[c] += f.prox * pairBonus(pos[c], terms)
		}
	}
	for c, cd := range cands {
		cd.hit.Score += bonus[c]
	}
}

// byScoreThenID orders hits by score, ties by path: an order that does not
// depend on where the notes sit in the index's segments.
func byScoreThenID(a, b *bsearch.DocumentMatch) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// pairBonus sums, over pairs of terms both present, the proximity bonus of
// their nearest occurrences.
func pairBonus(pos [][]uint64, terms []proxTerm) float64 {
	b := 0.0
	for i := range pos {
		if len(pos[i]) == 0 {
			continue
		}
		if len(pos[i]) > 1 {
			sort.Slice(pos[i], func(a, c int) bool { return pos[i][a] < pos[i][c] })
		}
	}
	for i := range pos {
		if len(pos[i]) == 0 {
			continue
		}
		for j := i + 1; j < len(pos); j++ {
			if len(pos[j]) == 0 {
				continue
			}
			d := minGap(pos[i], pos[j])
			if d > proxWindow {
				continue
			}
			w := math.Min(terms[i].idf, terms[j].idf)
			b += proxWeight * w * float64(proxWindow+1-d) / float64(proxWindow)
		}
	}
	return b
}

// minGap returns the smallest distance between a position of a and one of
// b (both sorted); the same position counts as adjacent (a word and its
// correction).
func minGap(a, b []uint64) uint64 {
	best := uint64(math.MaxUint64)
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		var d uint64
		if a[i] < b[j] {
			d = b[j] - a[i]
			i++
		} else {
			d = a[i] - b[j]
			j++
		}
		best = min(best, d)
	}
	return max(best, 1)
}
