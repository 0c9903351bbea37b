package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// A quoted phrase matches the notes holding its words one after another in
// a field. Bleve's phrase searcher finds the notes holding all of them,
// then, for each, turns the positions of its words into maps
// (DocumentMatch.Complete) before it looks for the phrase: in a large
// vault most notes hold two common words somewhere, and a phrase of them
// allocated 16 MB a search at 100,000 notes, more than half of what all
// searches allocate, which sets how much room the collector needs. The
// phrase query below matches the same notes with the same scores (the
// same term, disjunction and conjunction searchers, the same query norm),
// checking the positions in the list the term searchers left them in,
// with scratch space kept from note to note.

// phraseQuery is an exact phrase in one field, as bleve's MatchPhraseQuery
// without fuzziness: the text is analysed with the field's analyzer, and
// the words it drops (stop words) match any word in their place.
type phraseQuery struct {
	text, field string
	boost       float64
}

func (q *phraseQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	an := m.AnalyzerNamed(m.AnalyzerNameForPath(q.field))
	if an == nil {
		return nil, fmt.Errorf("phrase in %s: no analyzer", q.field)
	}
	terms := phraseTerms(an.Analyze([]byte(q.text)))
	if len(terms) == 0 {
		return searcher.NewMatchNoneSearcher(r)
	}
	opts.IncludeTermVectors = true
	var parts []bsearch.Searcher
	fail := func(err error, open ...bsearch.Searcher) (bsearch.Searcher, error) {
		for _, s := range append(parts, open...) {
			_ = s.Close()
		}
		return nil, fmt.Errorf("phrase in %s: %w", q.field, err)
	}
	for _, slot := range terms {
		switch len(slot) {
		case 0: // a word the analyzer dropped
		case 1:
			ts, err := searcher.NewTermSearcher(ctx, r, slot[0], q.field, q.boost, opts)
			if err != nil {
				return fail(err)
			}
			parts = append(parts, ts)
		default: // words at the same position: any of them
			var alts []bsearch.Searcher
			for _, t := range slot {
				ts, err := searcher.NewTermSearcher(ctx, r, t, q.field, q.boost, opts)
				if err != nil {
					return fail(err, alts...)
				}
				alts = append(alts, ts)
			}
			d, err := searcher.NewDisjunctionSearcher(ctx, r, alts, 1, opts)
			if err != nil {
				return fail(err, alts...)
			}
			parts = append(parts, d)
		}
	}
	must, err := searcher.NewConjunctionSearcher(ctx, r, parts, opts)
	if err != nil {
		return fail(err)
	}
	must.SetQueryNorm(1 / math.Sqrt(must.Weight()))
	return &phraseSearcher{must: must, terms: terms, slots: make([][]phrasePos, len(terms))}, nil
}

// phraseTerms returns the terms of the phrase by position from its first
// word: nil where the analyzer dropped a word, several where it put more
// than one at a position (bleve's tokenStreamToPhrase).
func phraseTerms(toks analysis.TokenStream) [][]string {
	if len(toks) == 0 {
		return nil
	}
	first, last := toks[0].Position, toks[0].Position
	for _, t := range toks {
		first, last = min(first, t.Position), max(last, t.Position)
	}
	out := make([][]string, last-first+1)
	for _, t := range toks {
		out[t.Position-first] = append(out[t.Position-first], string(t.Term))
	}
	return out
}

// phrasePos is a position of a word of the phrase in a note, and the index
// of its location in the note's match.
type phrasePos struct {
	pos uint64
	loc int
}

// phraseSearcher passes on the matches of the conjunction of the phrase's
// words that hold the phrase.
type phraseSearcher struct {
	must    bsearch.Searcher
	terms   [][]string
	curr    *bsearch.DocumentMatch
	started bool
	// scratch: the positions of each word of the phrase in the current
	// note, and the locations that make up the phrase there.
	slots [][]phrasePos
	used  []bool
}

func (s *phraseSearcher) start(ctx *bsearch.SearchContext) error {
	s.started = true
	var err error
	s.curr, err = s.must.Next(ctx)
	return err
}

func (s *phraseSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	for s.curr != nil {
		dm := s.curr
		found := s.holdsPhrase(dm)
		if found {
			s.curr = nil
		} else {
			ctx.DocumentMatchPool.Put(dm)
		}
		var err error
		if s.curr, err = s.must.Next(ctx); err != nil {
			return nil, err
		}
		if found {
			return dm, nil
		}
	}
	return nil, nil
}

func (s *phraseSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			return nil, err
		}
	}
	if s.curr == nil {
		return nil, nil
	}
	if s.curr.IndexInternalID.Compare(id) >= 0 {
		return s.Next(ctx)
	}
	ctx.DocumentMatchPool.Put(s.curr)
	var err error
	if s.curr, err = s.must.Advance(ctx, id); err != nil {
		return nil, err
	}
	return s.Next(ctx)
}

// holdsPhrase reports whether the words of dm (its term locations) make
// up the phrase: each word of it at the position after the one before (a
// dropped word's place taken by any), in the same value of the field. It
// keeps in dm only the locations that do, as bleve's phrase searcher.
func (s *phraseSearcher) holdsPhrase(dm *bsearch.DocumentMatch) bool {
	ftls := dm.FieldTermLocations
	for i := range s.slots {
		s.slots[i] = s.slots[i][:0]
	}
	for j := range ftls {
		for i, slot := range s.terms {
			if slices.Contains(slot, ftls[j].Term) {
				s.slots[i] = append(s.slots[i], phrasePos{ftls[j].Location.Pos, j})
			}
		}
	}
	byPos := func(a phrasePos, pos uint64) int { return cmp.Compare(a.pos, pos) }
	for i := range s.slots {
		slices.SortFunc(s.slots[i], func(a, b phrasePos) int { return byPos(a, b.pos) })
	}
	if cap(s.used) < len(ftls) {
		s.used = make([]bool, len(ftls))
	}
	s.used = s.used[:len(ftls)]
	clear(s.used)
	found := false
	for _, first := range s.slots[0] {
		ap := ftls[first.loc].Location.ArrayPositions
		ok := true
		for i := 1; i < len(s.terms) && ok; i++ {
			if len(s.terms[i]) == 0 {
				continue
			}
			want := first.pos + uint64(i)
			ok = false
			k, _ := slices.BinarySearchFunc(s.slots[i], want, byPos)
			for ; k < len(s.slots[i]) && s.slots[i][k].pos == want; k++ {
				if ftls[s.slots[i][k].loc].Location.ArrayPositions.Equals(ap) {
					ok = true
					break
				}
			}
		}
		if !ok {
			continue
		}
		found = true
		// Mark every location of this occurrence of the phrase.
		s.used[first.loc] = true
		for i := 1; i < len(s.terms); i++ {
			k, _ := slices.BinarySearchFunc(s.slots[i], first.pos+uint64(i), byPos)
			for ; k < len(s.slots[i]) && s.slots[i][k].pos == first.pos+uint64(i); k++ {
				if l := s.slots[i][k].loc; ftls[l].Location.ArrayPositions.Equals(ap) {
					s.used[l] = true
				}
			}
		}
	}
	if !found {
		return false
	}
	// Keep the locations of the phrase, swapped rather than copied so that
	// each keeps its own array positions for bleve to reuse.
	n := 0
	for j := range ftls {
		if s.used[j] {
			ftls[n], ftls[j] = ftls[j], ftls[n]
			n++
		}
	}
	dm.FieldTermLocations = ftls[:n]
	return true
}

func (s *phraseSearcher) Close() error              { return s.must.Close() }
func (s *phraseSearcher) Weight() float64           { return s.must.Weight() }
func (s *phraseSearcher) SetQueryNorm(norm float64) { s.must.SetQueryNorm(norm) }
func (s *phraseSearcher) Count() uint64             { return s.must.Count() }
func (s *phraseSearcher) Min() int                  { return 0 }
func (s *phraseSearcher) Size() int                 { return 64 + s.must.Size() }
func (s *phraseSearcher) DocumentMatchPoolSize() int {
	return s.must.DocumentMatchPoolSize() + 1
}
