package search

import (
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
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
	length int
	freqs  index.TokenFrequencies
}

// fastFields replaces the analysed text fields of doc (as the mapping made
// them) with fastTextFields.
func fastFields(doc *document.Document) {
	for i, f := range doc.Fields {
		if tf, ok := f.(*document.TextField); ok && tf.Options().IsIndexed() && tf.Analyzer() != nil {
			doc.Fields[i] = &fastTextField{TextField: tf}
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
	a, ok := f.Analyzer().(*analysis.DefaultAnalyzer)
	if ok {
		_, ok = a.Tokenizer.(wordTokenizer)
	}
	if !ok || len(a.CharFilters) > 0 {
		tokens := f.Analyzer().Analyze(v)
		f.length = len(tokens)
		f.freqs = tokenFrequencies(tokens, f.ArrayPositions(), f.Options())
		return
	}
	// The text analyzer: the same tokenizer and filters, with tokens from
	// a pooled slab. Once the frequencies are built nothing points at the
	// tokens (terms are their own bytes), so the slab goes back.
	t := tokenPool.Get().(*tokenWriter)
	t.tokenize(v)
	tokens := t.out
	for _, tf := range a.TokenFilters {
		tokens = tf.Filter(tokens)
	}
	f.length = len(tokens)
	f.freqs = tokenFrequencies(tokens, f.ArrayPositions(), f.Options())
	t.reset()
	tokenPool.Put(t)
}

var tokenPool = sync.Pool{New: func() any { return &tokenWriter{pos: 1} }}

func (f *fastTextField) AnalyzedLength() int { return f.length }

func (f *fastTextField) AnalyzedTokenFrequencies() index.TokenFrequencies { return f.freqs }

// tokenFrequencies is analysis.TokenFrequency with slab allocation: the
// same terms, frequencies and locations (in token order). Map keys share
// the term bytes, which nothing changes once analysed. Each Locations slice
// is full (len == cap), so appending to it (bleve merges the fields of one
// name that way) copies instead of writing into its neighbour's.
func tokenFrequencies(tokens analysis.TokenStream, arrayPositions []uint64, options index.FieldIndexingOptions) index.TokenFrequencies {
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
			locs[i] = index.TokenLocation{
				ArrayPositions: arrayPositions,
				Start:          tok.Start,
				End:            tok.End,
				Position:       tok.Position,
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
