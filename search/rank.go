package search

import (
	"bytes"
	"container/heap"
	"context"
	"math"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// Ranking of free terms.
//
// The free terms of a query are ranked by our own scorer, a bleve query
// (rankQuery) that reads the postings of each term in each field:
//
//   - BM25F: for each term, its frequencies in the weighted fields (rankFields)
//     are normalized by each field's length against that field's mean length
//     in the index, summed with the field weights, and then saturated once,
//     so a word in the title and the body counts more than in either, but
//     not twice as much.
//   - No minimum: a note holding any term is a candidate, so the note with
//     the one distinctive word of a paraphrased question is never dropped.
//     Instead the score is multiplied by an IDF-weighted coordination
//     factor: the share of the query's total IDF that the note holds, so
//     notes holding more of the words, and the rarer ones, rank first.
//   - Conversational filler ("way", "want", "need"...) and question words
//     that are not stop words weigh a fraction of a content word, in the
//     score and in the coordination, and are never needed.
//   - Proximity: pairs of query words close together in the body, or in
//     the same heading or title, add a bonus that decays with the distance
//     (an unordered window, as in the sequential dependence model).
//   - A note whose title or alias is exactly the query (same words) ranks
//     first.
//   - Typos: a word absent from the index, or far rarer than a word one
//     edit away, also matches its most frequent close spellings (see
//     typo.go), weighted down, and never weighing more than the most
//     distinctive real word of the query: a fuzzy expansion never outranks
//     exact matches of the other words.

// rankField is one field free terms are scored in.
type rankField struct {
	name   string
	len    int     // index in lenFields
	weight float64 // BM25F weight
	b      float64 // length normalization
	prox   float64 // weight of proximity in this field; 0: none (no term vectors)
	fuzzy  bool    // corrections of typos are looked up in this field's terms
}

// rankFields weigh the fields: a note is what its title and aliases say it
// is, then its headings; other notes' links to it describe it almost as
// well as its headings; URLs hardly at all.
var rankFields = []rankField{
	{fTitle, 0, 6, 0.4, 1.5, true},
	{fHeadings, 1, 3, 0.5, 1.5, true},
	{fTagText, 2, 2, 0.4, 0, false},
	{fPathText, 3, 1.5, 0.4, 0, false},
	{fBody, 4, 1, 0.75, 1, true},
	{fURL, 5, 0.2, 0.75, 0, false},
	{fAnchor, 6, 3, 0.5, 0, false},
	{fLinkText, 7, 1.2, 0.75, 0, false},
}

// Ranking constants.
var (
	bm25K1 = 1.2
	// coordPower sharpens the coordination factor.
	coordPower = 0.5
	// fillerWeight is the weight of a filler word relative to a content word.
	fillerWeight = 0.25
	// correctionWeight scales the term frequency of a typo's correction.
	correctionWeight = 0.8
	// proxWeight scales the proximity bonus of a pair of words.
	proxWeight = 0.6
	// proxWindow is the distance in words beyond which a pair earns nothing.
	proxWindow uint64 = 8
	// exactBonus puts notes whose title or alias is the query first.
	exactBonus = 1e4
	// trustedDF is how many notes a correction must be in to weigh as
	// much as its rarity says; a rarer one weighs at most as much as the
	// most distinctive real word of the query.
	trustedDF uint64 = 3
)

// rankTerm is one word of the query.
type rankTerm struct {
	alts   []rankAlt // the word's token first, then corrections of a typo
	weight float64   // 1, or fillerWeight
	idf    float64
}

// rankAlt is one token a rankTerm matches.
type rankAlt struct {
	token string
	w     float64 // 1, or correctionWeight
}

// rankStats is what a ranked search learns, read once the search is done.
type rankStats struct {
	mu        sync.Mutex
	best      int      // most content terms one note matched
	corrected []string // tokens added as corrections of typos
	fixed     bool     // a term absent from the index was corrected
}

// rankQuery is a bleve query scoring free terms as described above.
type rankQuery struct {
	words   []rankWord // the query's words, analyzed
	exact   []string   // notes whose title or alias is exactly the query
	avg     [numLenFields]float64
	fuzzAll bool // correct every word of 4+ letters (the fuzzy fallback)
	stats   *rankStats
}

// rankWord is one analyzed token of the query with its weight.
type rankWord struct {
	token  string
	filler bool
}

// content reports how many words of q are not filler.
func (q *rankQuery) content() int {
	n := 0
	for _, w := range q.words {
		if !w.filler {
			n++
		}
	}
	return n
}

// Searcher implements bleve's query.Query.
func (q *rankQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	s := &rankSearcher{q: q, n: float64(max(n, 1)), score: opts.Score != "none"}
	terms := q.terms(r, s.n)
	s.terms = terms
	multi := 0
	for _, t := range terms {
		if t.weight == 1 {
			multi++
		}
	}
	for ti, t := range terms {
		s.totalIDF += t.weight * t.idf
		for ai, a := range t.alts {
			for fi, f := range rankFields {
				vectors := f.prox > 0 && multi > 1 && t.weight == 1
				tfr, err := r.TermFieldReader(ctx, []byte(a.token), f.name, true, true, vectors)
				if err != nil {
					s.Close()
					return nil, err
				}
				if tfr.Count() == 0 {
					tfr.Close()
					continue
				}
				p := &posting{term: ti, alt: ai, field: fi, r: tfr}
				s.count += tfr.Count()
				if err := p.next(); err != nil {
					s.Close()
					return nil, err
				}
				if p.cur != nil {
					s.heap = append(s.heap, p)
				} else {
					tfr.Close()
				}
			}
		}
	}
	heap.Init(&s.heap)
	for _, p := range q.exact {
		if id, err := r.InternalID(p); err == nil && id != nil {
			s.exact = append(s.exact, append([]byte(nil), id...))
		}
	}
	return s, nil
}

// terms turns the query words into rank terms with their IDF and
// corrections.
func (q *rankQuery) terms(r index.IndexReader, n float64) []*rankTerm {
	dfs := make([]uint64, len(q.words))
	maxIDF := 0.0
	for i, w := range q.words {
		dfs[i] = docFreq(r, w.token)
		if dfs[i] > 0 && !w.filler {
			maxIDF = math.Max(maxIDF, idf(float64(dfs[i]), n))
		}
	}
	out := make([]*rankTerm, 0, len(q.words))
	for i, w := range q.words {
		t := &rankTerm{alts: []rankAlt{{token: w.token, w: 1}}, weight: 1}
		if w.filler {
			t.weight = fillerWeight
		}
		df := dfs[i]
		if !w.filler {
			if fixes := corrections(r, w.token, df, q.fuzzAll); len(fixes) > 0 {
				best := uint64(0)
				for _, c := range fixes {
					t.alts = append(t.alts, rankAlt{token: c.token, w: correctionWeight})
					best = max(best, c.df)
				}
				q.stats.mu.Lock()
				for _, c := range fixes {
					q.stats.corrected = append(q.stats.corrected, c.token)
				}
				if df == 0 {
					q.stats.fixed = true
				}
				q.stats.mu.Unlock()
				if df == 0 {
					df = best
					t.idf = idf(float64(df), n)
					// A spelling that few notes share may be a
					// coincidental neighbour of a word the vault
					// lacks: it never weighs more than the query's
					// real words.
					if maxIDF > 0 && best < trustedDF {
						t.idf = math.Min(t.idf, maxIDF)
					}
				}
			}
		}
		if t.idf == 0 {
			t.idf = idf(float64(max(df, 1)), n)
		}
		out = append(out, t)
	}
	return out
}

// docFreq is the number of notes holding token in some ranked field,
// estimated as its largest count in one field. URLs do not count: the words
// of a link every note carries ("github", a vault's own repository name)
// would make a word look common that notes rarely say.
func docFreq(r index.IndexReader, token string) uint64 {
	var df uint64
	for _, f := range rankFields {
		if f.name == fURL {
			continue
		}
		tfr, err := r.TermFieldReader(context.Background(), []byte(token), f.name, false, false, false)
		if err != nil {
			continue
		}
		df = max(df, tfr.Count())
		tfr.Close()
	}
	return df
}

// idf is BM25's inverse document frequency.
func idf(df, n float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// posting is one (term, token, field) posting list being walked.
type posting struct {
	term, alt, field int
	r                index.TermFieldReader
	cur              *index.TermFieldDoc
	buf              [2]index.TermFieldDoc
	flip             int
}

func (p *posting) next() error {
	p.flip ^= 1
	d, err := p.r.Next(p.buf[p.flip].Reset())
	p.cur = d
	return err
}

func (p *posting) advance(id index.IndexInternalID) error {
	p.flip ^= 1
	d, err := p.r.Advance(id, p.buf[p.flip].Reset())
	p.cur = d
	return err
}

// postingHeap orders postings by their current document.
type postingHeap []*posting

func (h postingHeap) Len() int           { return len(h) }
func (h postingHeap) Less(i, j int) bool { return bytes.Compare(h[i].cur.ID, h[j].cur.ID) < 0 }
func (h postingHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *postingHeap) Push(x any)        { *h = append(*h, x.(*posting)) }
func (h *postingHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// rankSearcher walks the postings of every (term, token, field) in
// document order and scores each document holding any of them.
type rankSearcher struct {
	q        *rankQuery
	terms    []*rankTerm
	n        float64
	totalIDF float64
	heap     postingHeap
	done     []*posting // postings of the current document
	exact    [][]byte
	count    uint64
	score    bool
	closed   []*posting
	// per document scratch
	tf    []float64
	pos   [][]uint64 // positions of each term in the current proximity field
	match []bool
}

func (s *rankSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	if len(s.heap) == 0 {
		return nil, nil
	}
	id := s.heap[0].cur.ID
	s.done = s.done[:0]
	for len(s.heap) > 0 && bytes.Equal(s.heap[0].cur.ID, id) {
		s.done = append(s.done, heap.Pop(&s.heap).(*posting))
	}
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = append(dm.IndexInternalID[:0], id...)
	if s.score {
		dm.Score = s.scoreDoc(dm.IndexInternalID)
	}
	for _, p := range s.done {
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.cur != nil {
			heap.Push(&s.heap, p)
		} else {
			s.closed = append(s.closed, p)
		}
	}
	return dm, nil
}

func (s *rankSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	moved := false
	for i := 0; i < len(s.heap); {
		p := s.heap[i]
		if bytes.Compare(p.cur.ID, id) >= 0 {
			i++
			continue
		}
		if err := p.advance(id); err != nil {
			return nil, err
		}
		moved = true
		if p.cur == nil {
			s.heap[i] = s.heap[len(s.heap)-1]
			s.heap = s.heap[:len(s.heap)-1]
			s.closed = append(s.closed, p)
			continue
		}
		i++
	}
	if moved {
		heap.Init(&s.heap)
	}
	return s.Next(ctx)
}

// scoreDoc scores the current document from the postings in s.done.
func (s *rankSearcher) scoreDoc(id []byte) float64 {
	nt := len(s.terms)
	if cap(s.tf) < nt {
		s.tf = make([]float64, nt)
		s.match = make([]bool, nt)
		s.pos = make([][]uint64, nt)
	}
	tf, match := s.tf[:nt], s.match[:nt]
	for i := range tf {
		tf[i], match[i] = 0, false
	}
	avg := &s.q.avg
	for _, p := range s.done {
		f := &rankFields[p.field]
		norm := p.cur.Norm
		length := 1.0
		if norm > 0 {
			length = 1 / (norm * norm)
		}
		a := avg[f.len]
		tf[p.term] += s.terms[p.term].alts[p.alt].w * f.weight * float64(p.cur.Freq) / (1 - f.b + f.b*length/a)
		match[p.term] = true
	}
	score, held, contentHeld := 0.0, 0.0, 0
	for i, t := range s.terms {
		if !match[i] {
			continue
		}
		score += t.weight * t.idf * tf[i] * (bm25K1 + 1) / (bm25K1 + tf[i])
		held += t.weight * t.idf
		if t.weight == 1 {
			contentHeld++
		}
	}
	if contentHeld > 1 {
		score += s.proximity()
	}
	if s.totalIDF > 0 {
		score *= math.Pow(held/s.totalIDF, coordPower)
	}
	s.q.stats.mu.Lock()
	s.q.stats.best = max(s.q.stats.best, contentHeld)
	s.q.stats.mu.Unlock()
	for _, e := range s.exact {
		if bytes.Equal(e, id) {
			score += exactBonus
		}
	}
	return score
}

// proximity is the bonus of the current document for pairs of content
// words near each other in a field with positions.
func (s *rankSearcher) proximity() float64 {
	bonus := 0.0
	for fi, f := range rankFields {
		if f.prox == 0 {
			continue
		}
		pos := s.pos[:len(s.terms)]
		for i := range pos {
			pos[i] = pos[i][:0]
		}
		have := 0
		for _, p := range s.done {
			if p.field != fi || len(p.cur.Vectors) == 0 {
				continue
			}
			if len(pos[p.term]) == 0 {
				have++
			}
			for _, v := range p.cur.Vectors {
				k := v.Pos
				if len(v.ArrayPositions) > 0 {
					// Positions of different headings (or title and
					// alias) never count as near.
					k += v.ArrayPositions[0] << 32
				}
				pos[p.term] = append(pos[p.term], k)
			}
		}
		if have < 2 {
			continue
		}
		for i := range pos {
			if len(pos[i]) > 1 {
				sort.Slice(pos[i], func(a, b int) bool { return pos[i][a] < pos[i][b] })
			}
		}
		for i := 0; i < len(pos); i++ {
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
				w := math.Min(s.terms[i].idf, s.terms[j].idf)
				bonus += f.prox * proxWeight * w * float64(proxWindow+1-d) / float64(proxWindow)
			}
		}
	}
	return bonus
}

// minGap returns the smallest distance between a position of a and one of
// b (both sorted).
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
		if d < best {
			best = d
		}
	}
	if best == 0 {
		best = 1 // the same word matched twice (a token and its correction)
	}
	return best
}

func (s *rankSearcher) Close() error {
	var err error
	for _, set := range [][]*posting{s.heap, s.done, s.closed} {
		for _, p := range set {
			if p.r != nil {
				if e := p.r.Close(); e != nil && err == nil {
					err = e
				}
				p.r = nil
			}
		}
	}
	return err
}

func (s *rankSearcher) Weight() float64            { return 1 }
func (s *rankSearcher) SetQueryNorm(float64)       {}
func (s *rankSearcher) Count() uint64              { return s.count }
func (s *rankSearcher) Min() int                   { return 0 }
func (s *rankSearcher) Size() int                  { return 64 * (len(s.heap) + len(s.done) + len(s.closed) + 1) }
func (s *rankSearcher) DocumentMatchPoolSize() int { return 1 }
