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
var rankFields = rankFieldsArray[:]

var rankFieldsArray = [...]rankField{
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
const (
	bm25K1 = 1.2
	// coordPower softens the coordination factor: a note holding half of
	// the query's IDF keeps 71% of its score.
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
	// literalBonus puts first among them those whose title or alias is
	// the query as typed, not only once stemmed: "modals" asks for the
	// note Modals before the two named Modal.
	literalBonus = 100
	// namedBoost raises the notes the query names by their whole title
	// among its other words (namedTitles).
	namedBoost = 3
	// minNamedWords is the fewest words of a title that name a note
	// within a longer query.
	minNamedWords = 2
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
	best      int          // most content terms one note matched
	held      float64      // largest share of the query's IDF one note holds
	content   int          // content terms searched for
	tokens    []string     // the tokens searched for: the query's, and corrections of typos
	corrected []string     // tokens added as corrections of typos
	fixed     bool         // a term absent from the index was corrected
	prox      []proxTerm   // the content terms some note holds, for proximity
	weights   []TermWeight // each word's weight, once, for Match.Terms
}

// weigh records a word's weight in the vault, once per word (a query's
// searcher may be opened more than once).
func (st *rankStats) weigh(tw TermWeight) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, w := range st.weights {
		if w.Word == tw.Word {
			return
		}
	}
	st.weights = append(st.weights, tw)
}

// rankQuery is a bleve query scoring free terms as described above.
type rankQuery struct {
	words   []rankWord // the query's words, analyzed
	exact   []string   // notes whose title or alias is exactly the query
	literal []string   // those of them whose title or alias is the query as typed
	named   []string   // notes named by their whole title among the query's words (namedTitles)
	avg     [numLenFields]float64
	fuzzAll bool // correct every word of 4+ letters (the fuzzy fallback)
	stats   *rankStats
	// titleFixes returns the tokens of title words a misspelt word may
	// mean (see Index.titleFixes); nil for none.
	titleFixes func(word string) []string
}

// rankWord is one analyzed token of the query with its weight.
type rankWord struct {
	token   string
	surface string // as typed, lower-cased
	filler  bool
	// joined is the token of this word written together with the next
	// one ("word" "count" → "wordcount"), "" for the last word.
	joined string
	// variants are the tokens of its other spellings (variants.go).
	variants []string
}

// Searcher implements bleve's query.Query.
func (q *rankQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, err
	}
	s := &rankSearcher{q: q, n: float64(max(n, 1)), score: opts.Score != "none"}
	if err := s.open(ctx, r); err != nil {
		s.Close()
		return nil, err
	}
	heap.Init(&s.heap)
	s.exact = internalIDs(r, q.exact)
	s.literal = internalIDs(r, q.literal)
	s.named = internalIDs(r, q.named)
	return s, nil
}

// readers are the posting readers of one token, one per rankFields entry.
type readers [len(rankFieldsArray)]index.TermFieldReader

// openReaders opens the readers of token.
func openReaders(ctx context.Context, r index.IndexReader, token string) (*readers, error) {
	var rs readers
	for fi, f := range rankFields {
		tfr, err := r.TermFieldReader(ctx, []byte(token), f.name, true, true, false)
		if err != nil {
			rs.close()
			return nil, err
		}
		rs[fi] = tfr
	}
	return &rs, nil
}

// df is the number of notes holding the token in some ranked field,
// estimated as its largest count in one field. URLs do not count: the words
// of a link every note carries ("github", a vault's own repository name)
// would make a word look common that notes rarely say.
func (rs *readers) df() uint64 {
	var df uint64
	for fi, f := range rankFields {
		if f.name != fURL && rs[fi] != nil {
			df = max(df, rs[fi].Count())
		}
	}
	return df
}

func (rs *readers) close() {
	for i, tfr := range rs {
		if tfr != nil {
			tfr.Close()
			rs[i] = nil
		}
	}
}

// open works out the rank terms of the query (IDF, corrections of typos)
// and opens their postings.
func (s *rankSearcher) open(ctx context.Context, r index.IndexReader) error {
	q := s.q
	words := make([]*readers, len(q.words))
	defer func() { // readers not handed to postings
		for _, rs := range words {
			if rs != nil {
				rs.close()
			}
		}
	}()
	dfs := make([]uint64, len(q.words))
	long := len(q.words) > maxRankWords
	if long {
		// Choose the words to search for by how many notes' text holds
		// them: one lookup per word instead of one per field.
		for i, w := range q.words {
			if tfr, err := r.TermFieldReader(ctx, []byte(w.token), fBody, false, false, false); err == nil {
				dfs[i] = tfr.Count()
				tfr.Close()
			}
		}
	}
	keep := keepWords(q.words, dfs)
	for i, w := range q.words {
		if !keep[i] {
			continue
		}
		rs, err := openReaders(ctx, r, w.token)
		if err != nil {
			return err
		}
		words[i] = rs
		dfs[i] = rs.df()
	}
	maxIDF := 0.0
	corrBudget := maxCorrectedWords
	for i, w := range q.words {
		if keep[i] && dfs[i] > 0 && !w.filler {
			maxIDF = math.Max(maxIDF, idf(float64(dfs[i]), s.n))
		}
	}
	// Words written together in notes ("wordcount" for "word count"):
	// a note holding the compound holds both words. Not looked for in
	// long queries (pasted text), where a pair is rarely one thing.
	joined := make([][]string, len(q.words))
	for i, w := range q.words {
		if long || w.joined == "" || w.filler || i+1 == len(q.words) || q.words[i+1].filler || !keep[i] || !keep[i+1] {
			continue
		}
		rs, err := openReaders(ctx, r, w.joined)
		if err != nil {
			return err
		}
		if rs.df() > 0 {
			joined[i] = append(joined[i], w.joined)
			joined[i+1] = append(joined[i+1], w.joined)
		}
		rs.close()
	}
	q.stats.mu.Lock()
	for i, w := range q.words {
		if keep[i] {
			q.stats.tokens = append(q.stats.tokens, w.token)
			if !w.filler {
				q.stats.content++
			}
		}
	}
	q.stats.mu.Unlock()
	for i, w := range q.words {
		if !keep[i] {
			continue
		}
		t := &rankTerm{alts: []rankAlt{{token: w.token, w: 1}}, weight: 1}
		if w.filler {
			t.weight = fillerWeight
		}
		alts := []*readers{words[i]}
		words[i] = nil
		// openAlt opens the postings of another token of the word; on
		// an error, those of the word's tokens opened are closed.
		openAlt := func(tok string) (*readers, error) {
			rs, err := openReaders(ctx, r, tok)
			if err != nil {
				for _, a := range alts {
					a.close()
				}
			}
			return rs, err
		}
		df := dfs[i]
		for _, j := range joined[i] {
			rs, err := openAlt(j)
			if err != nil {
				return err
			}
			t.alts = append(t.alts, rankAlt{token: j, w: 1})
			alts = append(alts, rs)
		}
		// Other spellings of the word are the word: their notes hold it
		// (none for filler, nor in a pasted page: newRankQuery).
		if len(w.variants) > 0 {
			for _, v := range w.variants {
				rs, err := openAlt(v)
				if err != nil {
					return err
				}
				c := rs.df()
				if c == 0 {
					rs.close()
					continue
				}
				t.alts = append(t.alts, rankAlt{token: v, w: 1})
				alts = append(alts, rs)
				df += c
				q.stats.mu.Lock()
				q.stats.tokens = append(q.stats.tokens, v)
				q.stats.mu.Unlock()
			}
			df = min(df, uint64(s.n))
		}
		if !w.filler && corrBudget > 0 && (dfs[i] > 0 || df == 0) {
			fixes := corrections(r, w.token, dfs[i], q.fuzzAll)
			if len(fixes) == 0 && df == 0 && q.titleFixes != nil {
				for _, tok := range q.titleFixes(w.surface) {
					if tok == w.token {
						continue
					}
					if rs, err := openReaders(ctx, r, tok); err == nil {
						if c := rs.df(); c > 0 {
							fixes = append(fixes, correction{token: tok, df: c, dist: 1})
						}
						rs.close()
					}
				}
			}
			if len(fixes) > 0 {
				corrBudget--
			}
			best := uint64(0)
			for _, c := range fixes {
				rs, err := openAlt(c.token)
				if err != nil {
					return err
				}
				t.alts = append(t.alts, rankAlt{token: c.token, w: correctionWeight})
				alts = append(alts, rs)
				best = max(best, c.df)
			}
			if len(fixes) > 0 {
				q.stats.mu.Lock()
				for _, c := range fixes {
					q.stats.corrected = append(q.stats.corrected, c.token)
					q.stats.tokens = append(q.stats.tokens, c.token)
				}
				q.stats.fixed = q.stats.fixed || df == 0
				q.stats.mu.Unlock()
			}
			if df == 0 && best > 0 {
				df = best
				t.idf = idf(float64(df), s.n)
				// A spelling that few notes share may be a
				// coincidental neighbour of a word the vault
				// lacks: it never weighs more than the query's
				// real words.
				if maxIDF > 0 && best < trustedDF {
					t.idf = math.Min(t.idf, maxIDF)
				}
			}
		}
		if t.idf == 0 {
			t.idf = idf(float64(max(df, 1)), s.n)
		}
		q.stats.weigh(TermWeight{Word: w.surface, IDF: t.idf, Filler: w.filler, Missing: df == 0})
		ti := len(s.terms)
		s.terms = append(s.terms, t)
		if !w.filler && df > 0 {
			pt := proxTerm{idf: t.idf}
			for _, a := range t.alts {
				pt.tokens = append(pt.tokens, a.token)
			}
			q.stats.mu.Lock()
			q.stats.prox = append(q.stats.prox, pt)
			q.stats.mu.Unlock()
		}
		if df > 0 {
			// A word no note holds, even misspelt, cannot tell notes
			// apart: it stays out of the coordination.
			s.totalIDF += t.weight * t.idf
		} else if !w.filler {
			// But the query holds it: Match.Held counts it as missing.
			s.missingIDF += t.weight * t.idf
		}
		for ai, rs := range alts {
			contentDF := rs.df()
			for fi, f := range rankFields {
				tfr := rs[fi]
				rs[fi] = nil
				if tfr == nil {
					continue
				}
				// The words of URLs count only for a word that the
				// notes never say otherwise (a site's name, say).
				if tfr.Count() == 0 || f.name == fURL && contentDF > 0 {
					tfr.Close()
					continue
				}
				p := &posting{term: ti, alt: ai, field: fi, r: tfr}
				s.count += tfr.Count()
				if err := p.next(); err != nil {
					tfr.Close()
					return err
				}
				if p.cur == nil {
					tfr.Close()
					continue
				}
				s.heap = append(s.heap, p)
			}
		}
	}
	return nil
}

// Bounds on one ranked group, so a pasted page or a list of 500 words
// costs no more than a question: the maxRankWords most distinctive words
// are searched for (content words before filler), and at most
// maxCorrectedWords of them get typo corrections.
const (
	maxRankWords      = 32
	maxCorrectedWords = 4
)

// keepWords chooses the words to search for: all of them when they are
// few, else the maxRankWords with the fewest notes (content words first).
func keepWords(words []rankWord, dfs []uint64) []bool {
	keep := make([]bool, len(words))
	if len(words) <= maxRankWords {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	order := make([]int, len(words))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		wa, wb := words[order[a]], words[order[b]]
		if wa.filler != wb.filler {
			return !wa.filler
		}
		// A word no note holds is least useful (unless misspelt, which
		// the few kept may be); then rarer first.
		da, db := dfs[order[a]], dfs[order[b]]
		if (da == 0) != (db == 0) {
			return da != 0
		}
		return da < db
	})
	for _, i := range order[:maxRankWords] {
		keep[i] = true
	}
	return keep
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

func (h postingHeap) Len() int { return len(h) }

// Less orders postings by document, then by term, field and spelling, so
// that a document's postings leave the heap in one order whatever the
// segments the index holds: a score sums their parts in that order, and
// floating-point sums in another order differ in the last bits.
func (h postingHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].cur.ID, h[j].cur.ID); c != 0 {
		return c < 0
	}
	a, b := h[i], h[j]
	if a.term != b.term {
		return a.term < b.term
	}
	if a.field != b.field {
		return a.field < b.field
	}
	return a.alt < b.alt
}
func (h postingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *postingHeap) Push(x any)   { *h = append(*h, x.(*posting)) }
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
	// missingIDF is the IDF of the query's content words no note holds.
	missingIDF float64
	heap       postingHeap
	done       []*posting // postings of the current document
	exact      [][]byte
	literal    [][]byte
	named      [][]byte
	count      uint64
	score      bool
	closed     []*posting
	// per document scratch
	tf    []float64
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
	if s.totalIDF > 0 {
		score *= math.Pow(held/s.totalIDF, coordPower)
	}
	s.q.stats.mu.Lock()
	s.q.stats.best = max(s.q.stats.best, contentHeld)
	if all := s.totalIDF + s.missingIDF; all > 0 {
		s.q.stats.held = max(s.q.stats.held, held/all)
	}
	s.q.stats.mu.Unlock()
	for _, e := range s.exact {
		if bytes.Equal(e, id) {
			score += exactBonus
		}
	}
	for _, e := range s.literal {
		if bytes.Equal(e, id) {
			score += literalBonus
		}
	}
	for _, e := range s.named {
		if bytes.Equal(e, id) {
			score *= namedBoost
		}
	}
	return score
}

// internalIDs returns the internal ids of the notes at paths that r holds.
func internalIDs(r index.IndexReader, paths []string) [][]byte {
	var ids [][]byte
	for _, p := range paths {
		if id, err := r.InternalID(p); err == nil && id != nil {
			ids = append(ids, append([]byte(nil), id...))
		}
	}
	return ids
}

// IsExact reports whether a lexical score is that of a note whose title
// or alias is exactly the query.
func IsExact(score float64) bool { return score >= exactBonus }

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
