package search

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/length"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/stop"
	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
)

// fastTextField is a bleve text field whose analysis allocates a handful of
// slabs per field instead of several objects per term: the same tokens
// through the same analyzer, with the term frequencies and locations
// bleve's analysis.TokenFrequency builds (the segment cannot tell them
// apart), but one slice of TokenFreq, one of locations and one of location
// pointers, and a map sized for the distinct terms rather than for every
// token. On a full index the per-token allocations of TokenFrequency were a
// fifth of all bytes allocated, and the collector's work follows them.
type fastTextField struct {
	*document.TextField
	fused   *fusedChain // the filters of the field's analyzer, fused; nil if not the text analyzer
	offsets bool        // term vectors keep each token's byte offsets
	length  int
	freqs   index.TokenFrequencies
}

// fastFields replaces the analysed text fields of doc (as the mapping made
// them) with fastTextFields; those analysed by fused's analyzer are
// tokenized from a pooled slab and filtered through fused (which may be
// nil), the others by their analyzer. Without offsets, the term vectors
// keep each token's position but not its byte offsets (zero): phrase
// queries and proximity read positions only, and snippets find their
// words in the note's text, so the offsets would be bytes the segments
// encode, merge and store for nothing.
func fastFields(doc *document.Document, fused *fusedChain, offsets bool) {
	for i, f := range doc.Fields {
		if tf, ok := f.(*document.TextField); ok && tf.Options().IsIndexed() && tf.Analyzer() != nil {
			ff := &fastTextField{TextField: tf, offsets: offsets}
			if fused != nil && tf.Analyzer() == fused.an {
				ff.fused = fused
			}
			doc.Fields[i] = ff
		}
	}
}

func (f *fastTextField) Analyze() {
	v := f.Value()
	if f.Options().IsStored() {
		// Tokens may point into the value; a stored value must not be
		// shared with them (bleve copies it too).
		v = append([]byte(nil), v...)
	}
	if f.fused == nil {
		tokens := f.Analyzer().Analyze(v)
		f.length = len(tokens)
		f.freqs = tokenFrequencies(tokens, f.ArrayPositions(), f.Options(), f.offsets)
		return
	}
	// The text analyzer: the same tokenizer and filters, with tokens from
	// a pooled slab. Once the frequencies are built nothing points at the
	// tokens (terms are their own bytes), so the slab goes back.
	t := tokenPool.Get().(*tokenWriter)
	t.tokenize(v)
	tokens := f.fused.filter(t.out)
	f.length = len(tokens)
	f.freqs = tokenFrequencies(tokens, f.ArrayPositions(), f.Options(), f.offsets)
	t.reset()
	tokenPool.Put(t)
}

var tokenPool = sync.Pool{New: func() any { return &tokenWriter{pos: 1} }}

func (f *fastTextField) AnalyzedLength() int { return f.length }

func (f *fastTextField) AnalyzedTokenFrequencies() index.TokenFrequencies { return f.freqs }

// tokenFrequencies is analysis.TokenFrequency with slab allocation: the
// same terms, frequencies and locations (in token order; without offsets,
// their Start and End are zero). Map keys share
// the term bytes, which nothing changes once analysed. Each Locations slice
// is full (len == cap), so appending to it (bleve merges the fields of one
// name that way) copies instead of writing into its neighbour's.
func tokenFrequencies(tokens analysis.TokenStream, arrayPositions []uint64, options index.FieldIndexingOptions, offsets bool) index.TokenFrequencies {
	// First pass: one TokenFreq per distinct term (from slabs that never
	// move), counting its tokens.
	rv := make(index.TokenFrequencies, min(len(tokens), 16+len(tokens)/4))
	slot := make([]*index.TokenFreq, len(tokens))
	var slab []index.TokenFreq
	distinct := make([]*index.TokenFreq, 0, cap(slot)/4)
	for i, tok := range tokens {
		tf := rv[unsafeString(tok.Term)]
		if tf == nil {
			if len(slab) == cap(slab) {
				slab = make([]index.TokenFreq, 0, min(max(64, len(tokens)/4), len(tokens)-i))
			}
			slab = append(slab, index.TokenFreq{Term: tok.Term})
			tf = &slab[len(slab)-1]
			rv[unsafeString(tok.Term)] = tf
			distinct = append(distinct, tf)
		}
		tf.SetFrequency(tf.Frequency() + 1)
		slot[i] = tf
	}
	if options.IncludeTermVectors() {
		// Second pass: each term's locations, carved from one slice of
		// pointers in the order of its tokens.
		locs := make([]index.TokenLocation, len(tokens))
		ptrs := make([]*index.TokenLocation, len(tokens))
		off := 0
		for _, tf := range distinct {
			c := tf.Frequency()
			tf.Locations = ptrs[off : off : off+c]
			off += c
		}
		for i, tok := range tokens {
			locs[i] = index.TokenLocation{ArrayPositions: arrayPositions, Position: tok.Position}
			if offsets {
				locs[i].Start, locs[i].End = tok.Start, tok.End
			}
			slot[i].Locations = append(slot[i].Locations, &locs[i])
		}
	}
	if options.SkipFreqNorm() {
		for _, tf := range distinct {
			tf.SetFrequency(0)
		}
	}
	return rv
}

// unsafeString views b as a string without copying; b must not change
// while the string is in use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// fusedChain runs the text analyzer's token filters (length, possessive,
// lowercase, fold, stop words, stem: see newMapping) in one pass over the
// tokens instead of one pass each. An ASCII token, nearly every token of
// most vaults, takes a path that does what those filters do to it without
// their general Unicode work (rune counting, rune-by-rune lower-casing);
// any other token goes through the filters themselves, one token at a
// time. Each of them looks at one token at a time, so one token through all
// of them is the same as all tokens through each.
type fusedChain struct {
	an      analysis.Analyzer // the analyzer whose filters these are
	filters []analysis.TokenFilter
	stop    analysis.TokenFilter
	stems   *stemFilter
}

// fusedChainFor returns the fused chain of an, or nil when an is not the
// text analyzer: its tokenizer, no char filter, and its filters in its
// order with its word length limit.
func fusedChainFor(an analysis.Analyzer) *fusedChain {
	a, ok := an.(*analysis.DefaultAnalyzer)
	if !ok || len(a.CharFilters) > 0 {
		return nil
	}
	if _, ok := a.Tokenizer.(wordTokenizer); !ok {
		return nil
	}
	fc := newFusedChain(a.TokenFilters)
	if fc != nil {
		fc.an = an
	}
	return fc
}

// newFusedChain returns the fused chain of filters, or nil when they are
// not the text analyzer's.
func newFusedChain(filters []analysis.TokenFilter) *fusedChain {
	if len(filters) != 6 {
		return nil
	}
	lf, ok0 := filters[0].(*length.LengthFilter)
	_, ok1 := filters[1].(*en.PossessiveFilter)
	_, ok2 := filters[2].(*lowercase.LowerCaseFilter)
	_, ok3 := filters[3].(foldTokenFilter)
	sf, ok4 := filters[4].(*stop.StopTokensFilter)
	st, ok5 := filters[5].(*stemFilter)
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return nil
	}
	// The length filter's limits are not exported: probe them.
	keeps := func(n int) bool {
		return len(lf.Filter(analysis.TokenStream{{Term: []byte(strings.Repeat("a", n))}})) == 1
	}
	if !keeps(1) || !keeps(maxTokenRunes) || keeps(maxTokenRunes+1) {
		return nil
	}
	return &fusedChain{filters: filters, stop: sf, stems: st}
}

// filter filters tokens in place and returns what is kept.
func (fc *fusedChain) filter(tokens analysis.TokenStream) analysis.TokenStream {
	out := tokens[:0]
	var one [1]*analysis.Token
	for _, tok := range tokens {
		t := tok.Term
		if !isASCII(t) {
			one[0] = tok
			s := analysis.TokenStream(one[:])
			for _, f := range fc.filters {
				if s = f.Filter(s); len(s) == 0 {
					break
				}
			}
			if len(s) == 1 {
				out = append(out, s[0])
			}
			continue
		}
		if len(t) > maxTokenRunes { // length: ASCII runes are bytes
			continue
		}
		if n := len(t); n >= 2 && t[n-1]|0x20 == 's' && t[n-2] == '\'' { // possessive
			t = t[:n-2]
		}
		for i, c := range t { // lowercase, in place as bleve's filter does
			if 'A' <= c && c <= 'Z' {
				t[i] = c + ('a' - 'A')
			}
		}
		tok.Term = t // fold: nothing to fold in ASCII
		one[0] = tok
		if len(fc.stop.Filter(one[:])) == 0 {
			continue
		}
		if !tok.KeyWord {
			tok.Term = fc.stems.stem(tok.Term)
		}
		out = append(out, tok)
	}
	return out
}
