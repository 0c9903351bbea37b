package search

import (
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/go-porterstemmer"
	"github.com/blevesearch/segment"
)

// Analysis is most of the cost of indexing, and most of analysis was
// bleve's unicode tokenizer (a Unicode word segmenter, UAX #29, run over
// every byte) and the porter stemmer (which converts every word to runes
// and back). wordTokenizer and stemFilter produce exactly the tokens those
// do (wordTokenizer's tests compare the two on the repository's notes and
// on random text), faster: ASCII text, nearly all of a vault, is segmented
// by a direct implementation of the UAX #29 rules for ASCII, and stems are
// remembered.

const (
	wordTokenizerName = "vault_words"
	stemFilterName    = "vault_stem"
)

func init() {
	if err := registry.RegisterTokenizer(wordTokenizerName, func(map[string]interface{}, *registry.Cache) (analysis.Tokenizer, error) {
		return wordTokenizer{}, nil
	}); err != nil {
		panic(err)
	}
	if err := registry.RegisterTokenFilter(stemFilterName, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return defaultStems, nil
	}); err != nil {
		panic(err)
	}
}

// Word-break classes of the ASCII characters (UAX #29, as the segment
// package implements it). Characters of class wbOther never join a
// neighbour: a word ends before and after them.
const (
	wbOther     = iota
	wbLetter    // A-Z a-z
	wbNumeric   // 0-9
	wbExtendNum // _
	wbMidLetter // :
	wbMidNumLet // . '
	wbMidNum    // , ;
)

var wbClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = wbLetter, wbLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = wbNumeric
	}
	t['_'] = wbExtendNum
	t[':'] = wbMidLetter
	t['.'], t['\''] = wbMidNumLet, wbMidNumLet
	t[','], t[';'] = wbMidNum, wbMidNum
	return t
}()

// wordTokenizer splits text into words as bleve's unicode tokenizer does.
// Text is cut into runs at the ASCII characters that never join a word
// (spaces, most punctuation); a run of ASCII letters, digits and joiners is
// segmented here, and a run holding any other character by the segment
// package, as the unicode tokenizer does for all text.
type wordTokenizer struct{}

func (wordTokenizer) Tokenize(input []byte) analysis.TokenStream {
	t := tokenWriter{pos: 1}
	t.slab = make([]analysis.Token, 0, min(1024, len(input)/6+1))
	t.tokenize(input)
	return t.out
}

// tokenize appends the tokens of input to t.out.
func (t *tokenWriter) tokenize(input []byte) {
	if !utf8.Valid(input) {
		// The segmenter stops at the first invalid byte; so does the
		// unicode tokenizer. (Note text is made valid before indexing.)
		t.unicodeRun(input, 0, len(input))
		return
	}
	i := 0
	for i < len(input) {
		c := input[i]
		if c < utf8.RuneSelf && wbClass[c] == wbOther {
			i++
			continue
		}
		// A run: up to the next ASCII character that never joins.
		j, ascii := i, true
		for j < len(input) {
			c := input[j]
			if c < utf8.RuneSelf {
				if wbClass[c] == wbOther {
					break
				}
			} else {
				ascii = false
			}
			j++
		}
		if ascii {
			t.asciiRun(input, i, j)
		} else {
			t.unicodeRun(input, i, j)
		}
		i = j
	}
}

// tokenWriter collects the tokens of one text, allocating them in slabs.
type tokenWriter struct {
	out  analysis.TokenStream
	slab []analysis.Token
	pos  int
	// filled counts the tokens of the slabs filled before slab: a
	// pooled writer's next slab holds them all.
	filled int
}

// maxPooledTokens bounds the slab a pooled writer keeps (4 MiB of tokens).
const maxPooledTokens = 1 << 16

// reset readies a pooled writer for another text; the tokens of the last
// one must be dead by then.
func (t *tokenWriter) reset() {
	need := t.filled + len(t.slab)
	clear(t.slab)
	clear(t.out)
	switch {
	case need > maxPooledTokens:
		t.slab = nil
	case t.filled > 0:
		t.slab = make([]analysis.Token, 0, need)
	}
	t.slab, t.out, t.pos, t.filled = t.slab[:0], t.out[:0], 1, 0
}

func (t *tokenWriter) add(term []byte, start, end int, typ analysis.TokenType) {
	if len(t.slab) == cap(t.slab) {
		t.filled += len(t.slab)
		t.slab = make([]analysis.Token, 0, min(1024, max(64, 2*cap(t.slab))))
	}
	t.slab = append(t.slab, analysis.Token{Term: term, Start: start, End: end, Position: t.pos, Type: typ})
	t.out = append(t.out, &t.slab[len(t.slab)-1])
	t.pos++
}

// asciiRun segments in[i:j], ASCII letters, digits and joiners only.
func (t *tokenWriter) asciiRun(in []byte, i, j int) {
	for i < j {
		c := wbClass[in[i]]
		if c >= wbMidLetter { // a joiner on its own is not a word
			i++
			continue
		}
		// A word: letters, digits and _ join each other (WB5, WB8-10,
		// WB13a-b); a joiner between two letters (:, ., ') or two digits
		// (., ', ,, ;) joins them (WB6-7, WB11-12).
		start, letter, digit := i, c == wbLetter, c == wbNumeric
		k := i + 1
		for k < j {
			n := wbClass[in[k]]
			if n <= wbExtendNum {
				letter = letter || n == wbLetter
				digit = digit || n == wbNumeric
				k++
				continue
			}
			if k+1 >= j {
				break
			}
			prev, next := wbClass[in[k-1]], wbClass[in[k+1]]
			if prev == wbLetter && next == wbLetter && (n == wbMidLetter || n == wbMidNumLet) ||
				prev == wbNumeric && next == wbNumeric && (n == wbMidNum || n == wbMidNumLet) {
				k += 2
				continue
			}
			break
		}
		typ := analysis.AlphaNumeric
		if digit && !letter {
			typ = analysis.Numeric
		}
		t.add(in[start:k:k], start, k, typ)
		i = k
	}
}

// unicodeRun segments in[i:j] with the segment package.
func (t *tokenWriter) unicodeRun(in []byte, i, j int) {
	seg := segment.NewWordSegmenterDirect(in[i:j])
	start := i
	for seg.Segment() {
		b := seg.Bytes()
		end := start + len(b)
		if typ := seg.Type(); typ != segment.None {
			tt := analysis.AlphaNumeric
			switch typ {
			case segment.Ideo, segment.Kana:
				tt = analysis.Ideographic
			case segment.Number:
				tt = analysis.Numeric
			}
			t.add(b, start, end, tt)
		}
		start = end
	}
}

// stemFilter is bleve's porter stemmer (stemmer_porter) with a bounded
// memory of the stems it computed: the same few thousand words make up
// most of any text. The words and stems kept are copied into blocks of
// each shard's (an entry is never removed): kept one by one among the
// garbage of the text being analysed, each pinned a page of its own size
// nearly empty, 7 MB of pages for under 1 MB of words after the titles of
// 100,000 notes were analysed.
type stemFilter struct {
	shards [16]stemShard
}

type stemShard struct {
	mu    sync.RWMutex
	m     map[string][]byte
	words strArena
}

// maxStemsPerShard bounds the memory: 16 shards of 4,096 words, a few MB.
const maxStemsPerShard = 4096

// stemBlock is the size of the blocks a shard keeps its words and stems
// in: small, as a small vault's shards hold few.
const stemBlock = 8 << 10

var defaultStems = &stemFilter{}

func (f *stemFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, tok := range input {
		if tok.KeyWord {
			continue
		}
		tok.Term = f.stem(tok.Term)
	}
	return input
}

// stem returns the porter stem of a lower-cased word; the slice returned
// may be shared and must not be modified.
func (f *stemFilter) stem(w []byte) []byte {
	if len(w) <= 2 {
		// The stemmer leaves words of one or two letters alone; a new
		// slice all the same, as bleve's filter returns.
		return append([]byte(nil), w...)
	}
	h := uint32(2166136261)
	for _, c := range w {
		h = (h ^ uint32(c)) * 16777619
	}
	sh := &f.shards[h%uint32(len(f.shards))]
	sh.mu.RLock()
	s, ok := sh.m[string(w)]
	sh.mu.RUnlock()
	if ok {
		return s
	}
	s = analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing([]rune(string(w))))
	s = s[:len(s):len(s)] // an append by a later filter copies
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string][]byte)
		sh.words.size = stemBlock
	}
	if _, ok := sh.m[string(w)]; !ok && len(sh.m) < maxStemsPerShard {
		sh.m[sh.words.str(w)] = sh.words.bytes(s)
	}
	sh.mu.Unlock()
	return s
}
