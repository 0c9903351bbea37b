package search

import (
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/vault-agent/vault-agent/vault"
)

// snippetRunes is the target snippet length in characters.
const snippetRunes = 200

// addSnippets fills Snippet, Heading and ChunkIndex of each result from the
// chunk with the most distinct query terms: its best sentences, as a reader
// sees them (see clean.go), matches in "**". The note is read from disk; a
// note that vanished since indexing keeps its result without a snippet.
func (ix *Index) addSnippets(res *Results, c *compiler) {
	if len(res.Results) == 0 {
		return
	}
	terms := make(map[string]int, len(c.terms))
	anyCJK := false
	for _, t := range c.terms {
		if f, ok := terms[t.term]; !ok || t.fuzzy > f {
			terms[t.term] = t.fuzzy
		}
		anyCJK = anyCJK || hasCJK(t.term)
	}
	// Reading and parsing the notes dominates; spread it over the cores.
	workers := min(runtime.GOMAXPROCS(0), len(res.Results))
	var next atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(res.Results) {
					return
				}
				r := &res.Results[i]
				chunks, err := ix.readForSnippet(r.Path)
				if err != nil || len(chunks) == 0 {
					continue
				}
				ch, hits := ix.bestChunk(chunks, terms, anyCJK, ix.titleTerms(r.Title, terms, anyCJK))
				r.Heading = ch.Heading
				r.ChunkIndex = ch.Index
				r.Snippet = bestSentences(ch.Text, hits, snippetRunes)
			}
		}()
	}
	wg.Wait()
}

type span struct{ start, end int } // byte offsets

// hit is a match of a query term in a text.
type hit struct {
	span
	term string
}

// snippetMaxBytes bounds how much of a note is read and analyzed for its
// snippet: a huge note (an exported log, a pasted dump) would otherwise
// cost seconds on every search that finds it.
const snippetMaxBytes = 256 << 10

// readForSnippet returns the chunks of a note for its snippet: of the whole
// note when it is small, of its first snippetMaxBytes otherwise.
func (ix *Index) readForSnippet(path string) ([]snipChunk, error) {
	raw, err := ix.v.ReadRaw(path, snippetMaxBytes)
	if err != nil {
		return nil, err
	}
	return ix.chunks.chunks(raw, ix.v.ChunkSize()), nil
}

// bestChunk picks the chunk matching the most distinct query terms that
// are not in the note's title (inTitle), then the most distinct terms, then
// the most matches; ties go to the earlier chunk. A word of the title says
// which note, not which of its sections: for "how do I keep my starter
// alive" in a note titled Starter, the section about keeping it wins over
// the introduction that names it.
func (ix *Index) bestChunk(chunks []snipChunk, terms map[string]int, anyCJK bool, inTitle map[string]bool) (snipChunk, []hit) {
	best, bestOwn, bestDistinct, bestCount := -1, 0, 0, 0
	var bestHits []hit
	for i, ch := range chunks {
		hits := ix.matchHits(ch.Text, terms, anyCJK)
		distinct := distinctTerms(hits)
		if distinct == 0 {
			continue
		}
		own := distinct - distinctIn(hits, inTitle)
		if own > bestOwn || (own == bestOwn && (distinct > bestDistinct || (distinct == bestDistinct && len(hits) > bestCount))) {
			best, bestOwn, bestDistinct, bestCount, bestHits = i, own, distinct, len(hits), hits
		}
	}
	if best < 0 {
		// Nothing to highlight (a filter-only search): the first chunk
		// with prose, not a lone title heading.
		for _, ch := range chunks {
			if ch.prose {
				return ch, nil
			}
		}
		return chunks[0], nil
	}
	return chunks[best], bestHits
}

// titleTerms returns the query terms found in a note's title.
func (ix *Index) titleTerms(title string, terms map[string]int, anyCJK bool) map[string]bool {
	hits := ix.matchHits(title, terms, anyCJK)
	if len(hits) == 0 {
		return nil
	}
	in := make(map[string]bool, len(hits))
	for _, h := range hits {
		in[h.term] = true
	}
	return in
}

// distinctIn counts the distinct terms of hits that are in set.
func distinctIn(hits []hit, set map[string]bool) int {
	if len(set) == 0 {
		return 0
	}
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		if set[h.term] {
			seen[h.term] = true
		}
	}
	return len(seen)
}

func distinctTerms(hits []hit) int {
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		seen[h.term] = true
	}
	return len(seen)
}

// hasProse reports text with a line that is neither blank nor a heading.
func hasProse(text string) bool {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return true
		}
	}
	return false
}

// matchHits analyzes text with the index analyzers and returns the matches
// of query terms, in text order.
func (ix *Index) matchHits(text string, terms map[string]int, anyCJK bool) []hit {
	if len(terms) == 0 || text == "" {
		return nil
	}
	var hits []hit
	for _, tok := range ix.analyzeCandidates(text, terms) {
		if t, ok := matchTerm(string(tok.Term), terms); ok {
			hits = append(hits, hit{span{tok.Start, tok.End}, t})
		}
	}
	if anyCJK && hasCJK(text) {
		for _, tok := range ix.cjkAn.Analyze([]byte(text)) {
			if _, ok := terms[string(tok.Term)]; ok && hasCJK(string(tok.Term)) {
				hits = append(hits, hit{span{tok.Start, tok.End}, string(tok.Term)})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	}
	return hits
}

// matchSpans returns the spans of text to highlight and how many distinct
// terms hit.
func (ix *Index) matchSpans(text string, terms map[string]int, anyCJK bool) ([]span, int) {
	hits := ix.matchHits(text, terms, anyCJK)
	return hitSpans(text, hits), distinctTerms(hits)
}

// hitSpans merges the spans of hits for highlighting.
func hitSpans(text string, hits []hit) []span {
	spans := make([]span, len(hits))
	for i, h := range hits {
		spans[i] = h.span
	}
	return joinSpans(text, mergeSpans(spans))
}

// joinSpans joins matches separated only by spaces, so a matched phrase is
// highlighted as one: "**rye flour**".
func joinSpans(text string, s []span) []span {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if gap := text[last.end:x.start]; gap != "" && strings.Trim(gap, " \t") == "" {
			last.end = x.end
			continue
		}
		out = append(out, x)
	}
	return out
}

// analyzeCandidates returns the analyzed tokens of text that may match a
// term. Running bleve's unicode segmenter and stemmer over every chunk of
// every hit costs more than the search itself, so a simple scanner splits
// words (letters, digits, '_' and inner apostrophes and dots, like UAX #29
// for the scripts the text analyzer handles) and only words sharing their
// first two folded characters with a term go through the analyzer's
// filters. Porter stemming only rewrites suffixes, so no match is lost.
func (ix *Index) analyzeCandidates(text string, terms map[string]int) analysis.TokenStream {
	da, ok := ix.textAn.(*analysis.DefaultAnalyzer)
	if !ok {
		return ix.textAn.Analyze([]byte(text))
	}
	prefixes := make(map[string]bool, len(terms))
	fuzzy := false
	for t, f := range terms {
		prefixes[firstRunes(t, 2)] = true
		fuzzy = fuzzy || f > 0
	}
	var toks analysis.TokenStream
	pos := 0
	scanWords(text, func(start, end int) {
		word := text[start:end]
		if !fuzzy {
			key := firstRunes(word, 2)
			if !isASCII([]byte(key)) {
				key = firstRunes(string(asciiFolder.Filter([]byte(strings.ToLower(key)))), 2)
			} else {
				key = strings.ToLower(key)
			}
			if !prefixes[key] {
				return
			}
		}
		pos++
		toks = append(toks, &analysis.Token{Start: start, End: end, Term: []byte(word), Position: pos, Type: analysis.AlphaNumeric})
	})
	for _, f := range da.TokenFilters {
		toks = f.Filter(toks)
	}
	return toks
}

func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// scanWords calls fn with the byte span of each word of s. CJK characters
// separate words (the CJK analyzer handles them).
func scanWords(s string, fn func(start, end int)) {
	start := -1
	prevWord := false
	for i, r := range s {
		word := isWordRune(r)
		if !word && start >= 0 && (r == '\'' || r == '’' || r == '.' || r == ',') {
			// Inner punctuation joins "don't", "e.g", "3.14" when a word
			// character follows.
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if prevWord && isWordRune(next) && (r != ',' || unicode.IsDigit(next)) {
				prevWord = false
				continue
			}
		}
		if word {
			if start < 0 {
				start = i
			}
			prevWord = true
			continue
		}
		if start >= 0 {
			fn(start, i)
			start = -1
		}
		prevWord = false
	}
	if start >= 0 {
		fn(start, len(s))
	}
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	if isCJKRune(r) {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func matchTerm(tok string, terms map[string]int) (string, bool) {
	if _, ok := terms[tok]; ok {
		return tok, true
	}
	for t, f := range terms {
		if f > 0 && sameFirstRune(tok, t) && withinDistance(tok, t, f) {
			return t, true
		}
	}
	return "", false
}

// sameFirstRune mirrors the fuzzy queries' prefix of one character, so a
// snippet highlights exactly the words the search matched.
func sameFirstRune(a, b string) bool {
	ra, _ := utf8.DecodeRuneInString(a)
	rb, _ := utf8.DecodeRuneInString(b)
	return ra == rb
}

// mergeSpans sorts spans and merges overlapping ones (CJK bigrams overlap).
func mergeSpans(s []span) []span {
	if len(s) < 2 {
		return s
	}
	sort.Slice(s, func(i, j int) bool { return s[i].start < s[j].start })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.start <= last.end {
			if x.end > last.end {
				last.end = x.end
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// buildSnippet cuts a window of about width characters from text around
// the densest run of spans, wraps the spans in "**" and collapses
// whitespace. Without spans it returns the start of the text.
func buildSnippet(text string, spans []span, width int) string {
	// Rune offsets of the spans.
	type rspan struct{ start, end int }
	rs := make([]rspan, len(spans))
	prevByte, prevRune := 0, 0
	for i, s := range spans {
		prevRune += utf8.RuneCountInString(text[prevByte:s.start])
		prevByte = s.start
		rs[i].start = prevRune
		prevRune += utf8.RuneCountInString(text[prevByte:s.end])
		prevByte = s.end
		rs[i].end = prevRune
	}
	total := prevRune + utf8.RuneCountInString(text[prevByte:])

	// Densest window: the start span whose following spans fit most
	// within width.
	ws := 0
	if len(rs) > 0 {
		bestI, bestN, j := 0, 0, 0
		for i := range rs {
			if j < i {
				j = i
			}
			for j+1 < len(rs) && rs[j+1].end-rs[i].start <= width {
				j++
			}
			if n := j - i + 1; n > bestN {
				bestI, bestN = i, n
			}
		}
		last := bestI
		for last+1 < len(rs) && rs[last+1].end-rs[bestI].start <= width {
			last++
		}
		covered := rs[last].end - rs[bestI].start
		ws = rs[bestI].start - (width-covered)/2
		if ws < 0 {
			ws = 0
		}
	}
	we := ws + width
	if we > total {
		we = total
		if ws = we - width; ws < 0 {
			ws = 0
		}
	}

	runes := []rune(text)
	// Snap to word boundaries, without moving more than a few characters
	// and without cutting a match.
	firstMatch, lastMatch := total, 0
	for _, s := range rs {
		if s.start >= ws && s.end <= we {
			if s.start < firstMatch {
				firstMatch = s.start
			}
			if s.end > lastMatch {
				lastMatch = s.end
			}
		}
	}
	if ws > 0 {
		for k := ws; k < ws+15 && k < len(runes) && k < firstMatch; k++ {
			if unicode.IsSpace(runes[k-1]) {
				ws = k
				break
			}
		}
	}
	if we < total {
		for k := we; k > we-15 && k > ws && k > lastMatch; k-- {
			if unicode.IsSpace(runes[k]) {
				we = k
				break
			}
		}
	}

	opens := make(map[int]bool)
	closes := make(map[int]bool)
	for _, s := range rs {
		if s.start >= ws && s.end <= we && s.end > s.start {
			opens[s.start] = true
			closes[s.end] = true
		}
	}
	var b strings.Builder
	if ws > 0 {
		b.WriteString("…")
	}
	space := false
	for k := ws; k <= we; k++ {
		if closes[k] {
			b.WriteString("**")
		}
		if k == we {
			break
		}
		if opens[k] {
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString("**")
		}
		r := runes[k]
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	out := strings.TrimSpace(b.String())
	if we < total && out != "" {
		out += "…"
	}
	return out
}

// withinDistance reports whether the Levenshtein distance of a and b is at
// most k.
func withinDistance(a, b string, k int) bool { return vault.EditDistance(a, b, k+1) <= k }
