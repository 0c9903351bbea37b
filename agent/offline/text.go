package offline

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/search"
)

// This file holds the text handling of the offline model: keywords, time
// expressions, sentence splitting and scoring. Everything is deterministic.

var stopWords = toSet(`a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each else ever every few for from further get got had hadn't has hasn't have haven't having he her
here hers herself him himself his how however i i'd i'll i'm i've if in into is isn't it it's its itself just
let let's like made make many may me might more most much must my myself need no nor not now of off often on
once only or other ought our ours ourselves out over own please really said same say says see she should
shouldn't show so some such tell than that that's the their theirs them themselves then there there's these
they they'd they'll they're they've thing things this those through to too under until up upon us use used
using very want was wasn't we we'd we'll we're we've were weren't what what's when where where's which while
who who's whom whose why will with within without won't would wouldn't yet you you'd you'll you're you've your
yours yourself yourselves
note notes vault obsidian find search look looking know give list summarize summarise summary explain
anything something everything write written wrote mention mentioned mentions regarding related info
information details detail any one ones kind sort lot lots thanks thank hi hello hey`)

// timeWords are removed from the keywords when the goal names a period.
var timeWords = toSet(`today yesterday tomorrow tonight week weeks month months year years day days ago last past
previous this since during recent recently lately morning evening quarter weekend holidays christmas
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday`)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// timeStarts are the words a time expression may start with.
var timeStarts = toSet(`between from since after until first second third fourth 1st 2nd 3rd 4th last this next past previous
early mid late mid-january mid-february mid-march mid-april mid-may mid-june mid-july mid-august mid-september mid-october
mid-november mid-december today yesterday tomorrow tonight weekend holidays christmas xmas summer winter
spring autumn fall q1 q2 q3 q4 earlier
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday`)

var reTimeToken = regexp.MustCompile(`^(?:\d{4}(?:-\d{1,2}(?:-\d{1,2})?)?|\d{1,2}(?:st|nd|rd|th)?)$`)

// maxTimeWords bounds the words of one time expression.
const maxTimeWords = 8

// findTimeExpression returns the time expression of goal and the goal with
// it removed, or "" when there is none: the longest run of words, from a
// word that can start one, that search.ParseTimeRange understands.
func findTimeExpression(goal string) (expr, rest string) {
	words := reWord.FindAllStringIndex(goal, -1)
	now := time.Now()
	for i, w := range words {
		first := strings.ToLower(strings.Trim(goal[w[0]:w[1]], ".,;:!?"))
		if !timeStarts[first] && !reTimeToken.MatchString(first) {
			continue
		}
		for n := min(maxTimeWords, len(words)-i); n >= 1; n-- {
			end := words[i+n-1][1]
			cand := strings.TrimRight(goal[w[0]:end], ".,;:!?")
			last := strings.ToLower(strings.Trim(cand[strings.LastIndexByte(" "+cand, ' '):], ".,;:!?"))
			if !timeWordIn(last) && !(reTimeToken.MatchString(last) && timeWordIn(cand)) {
				continue // an expression ends on a word of time (or a day's number)
			}
			if _, err := search.ParseTimeRange(cand, now); err == nil {
				expr = strings.ToLower(strings.Join(strings.Fields(cand), " "))
				return expr, goal[:w[0]] + " " + goal[w[0]+len(cand):]
			}
		}
	}
	return "", goal
}

var reWord = regexp.MustCompile(`\S+`)

// timeWordIn reports whether a candidate holds a word that names time, so
// the date parser's fallback never reads "on it" as a date.
func timeWordIn(s string) bool {
	for _, w := range strings.Fields(strings.ToLower(s)) {
		w = strings.Trim(w, ".,;:!?")
		if timeWords[w] || timeStarts[w] && !stopWords[w] || reTimeToken.MatchString(w) && (len(w) >= 4 || strings.ContainsAny(w, "-")) ||
			strings.HasPrefix(w, "mid-") || w == "weekend" || w == "holidays" || w == "christmas" || w == "xmas" ||
			seasons[w] || len(w) == 2 && w[0] == 'q' && w[1] >= '1' && w[1] <= '4' {
			return true
		}
	}
	return false
}

var seasons = toSet(`spring summer autumn fall winter`)

var quoted = regexp.MustCompile(`"([^"]{2,80})"|“([^”]{2,80})”`)

// queryTerms are the search terms of a goal.
type queryTerms struct {
	phrases  []string // quoted phrases, lower-cased
	keywords []string // single keywords, lower-cased, stop words removed
}

// all returns phrases then keywords.
func (q queryTerms) all() []string {
	return append(append([]string(nil), q.phrases...), q.keywords...)
}

func (q queryTerms) empty() bool { return len(q.phrases) == 0 && len(q.keywords) == 0 }

// query renders the terms in the search query language, within the
// search's limits: the terms that do not fit (those a long pasted goal
// ends with) are left out.
func (q queryTerms) query() string {
	parts := make([]string, 0, len(q.phrases)+len(q.keywords))
	for _, p := range q.phrases {
		parts = append(parts, `"`+p+`"`)
	}
	parts = append(parts, q.keywords...)
	var b strings.Builder
	words := 0
	for _, p := range parts {
		n := len(strings.Fields(p))
		if words+n > search.MaxQueryTerms || b.Len()+1+len(p) > search.MaxQueryBytes {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
		words += n
	}
	return b.String()
}

// salient returns up to n terms, longest first (ties keep goal order):
// longer words carry more meaning than short ones.
func (q queryTerms) salient(n int) []string {
	var words []string
	seen := map[string]bool{}
	for _, p := range q.phrases {
		for _, w := range tokenize(p) {
			if !stopWords[w] && !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	for _, w := range q.keywords {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	slices.SortStableFunc(words, func(a, b string) int {
		return utf8.RuneCountInString(b) - utf8.RuneCountInString(a)
	})
	if len(words) > n {
		words = words[:n]
	}
	return words
}

// extractTerms pulls the search terms out of a goal: quoted phrases are
// kept, stop words, question words and (when timeRemoved) time words are
// dropped.
func extractTerms(goal string, dropTimeWords bool) queryTerms {
	var q queryTerms
	for _, m := range quoted.FindAllStringSubmatch(goal, -1) {
		p := m[1]
		if p == "" {
			p = m[2]
		}
		p = strings.ToLower(strings.Join(strings.Fields(p), " "))
		if p != "" {
			q.phrases = append(q.phrases, p)
		}
	}
	rest := quoted.ReplaceAllString(goal, " ")
	seen := map[string]bool{}
	for _, w := range tokenize(rest) {
		if seen[w] || stopWords[w] || (dropTimeWords && timeWords[w]) {
			continue
		}
		if !hasCJK(w) && utf8.RuneCountInString(w) < 2 {
			continue
		}
		seen[w] = true
		q.keywords = append(q.keywords, w)
	}
	if len(q.keywords) > 8 {
		q.keywords = q.keywords[:8]
	}
	return q
}

// tokenize splits text into lower-cased words: runs of letters and digits,
// keeping inner hyphens and apostrophes; a CJK run is one token.
func tokenize(s string) []string {
	var out []string
	var b strings.Builder
	cjk := false
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.Trim(b.String(), "-'’"))
			b.Reset()
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case isCJK(r):
			if !cjk {
				flush()
			}
			cjk = true
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if cjk {
				flush()
			}
			cjk = false
			b.WriteRune(r)
		case (r == '-' || r == '\'' || r == '’') && b.Len() > 0 && !cjk:
			b.WriteRune(r)
		default:
			flush()
			cjk = false
		}
	}
	flush()
	res := out[:0]
	for _, w := range out {
		if w != "" {
			res = append(res, w)
		}
	}
	return res
}

func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo, the first CJK block: the common case
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}

// stems returns the match units of a word: its Porter stem, or for CJK text
// its character bigrams (single characters for one-character runs).
func stems(w string) []string {
	if hasCJK(w) {
		rs := []rune(w)
		if len(rs) == 1 {
			return []string{w}
		}
		out := make([]string, 0, len(rs)-1)
		for i := 0; i+1 < len(rs); i++ {
			out = append(out, string(rs[i:i+2]))
		}
		return out
	}
	return []string{stemOf(w)}
}

// stemOf is the match unit of a word that is not CJK.
func stemOf(w string) string {
	stemCache.Lock()
	defer stemCache.Unlock()
	if s, ok := stemCache.m[w]; ok {
		return s
	}
	if len(stemCache.m) >= maxStemCache {
		clear(stemCache.m) // bounded: a long-running server sees many words
	}
	s := porterstemmer.StemString(w)
	stemCache.m[w] = s
	return s
}

// maxStemCache bounds the words whose stems are remembered: an answer
// stems the same words of the notes read several times.
const maxStemCache = 50_000

var stemCache = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// stemSet returns the set of match units of text.
func stemSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range tokenize(text) {
		for _, s := range stems(w) {
			set[s] = true
		}
		// A hyphenated word ("one-shot", a file name like
		// "random-wikipedia-article") holds each of its parts too.
		if strings.Contains(w, "-") {
			for _, part := range strings.Split(w, "-") {
				if part != "" && !stopWords[part] {
					for _, s := range stems(part) {
						set[s] = true
					}
				}
			}
		}
	}
	return set
}

// termStems returns the match units of the goal's terms, one group per term
// (a phrase or a CJK word has several units).
func termStems(q queryTerms) [][]string {
	var groups [][]string
	seen := map[string]bool{}
	for _, t := range q.all() {
		var g []string
		for _, w := range tokenize(t) {
			if stopWords[w] {
				continue
			}
			for _, s := range stems(w) {
				if !seen[s] {
					seen[s] = true
					g = append(g, s+variantStems(w, s))
				}
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// variantStems are the stems of the other spellings of w whose stem is s
// (search.SpellingVariants), each after a "|": one unit, any spelling
// counts in full ("colour" in a note answers "color").
func variantStems(w, s string) string {
	var b strings.Builder
	for _, v := range search.SpellingVariants(w) {
		if vs := stemOf(v); vs != s && !strings.Contains(b.String()+"|", "|"+vs+"|") {
			b.WriteString("|" + vs)
		}
	}
	return b.String()
}

// sentence is one candidate sentence of a note.
type sentence struct {
	text    string
	pos     int // order within the note
	heading string
}

var (
	reWikiAlias  = regexp.MustCompile(`!?\[\[([^\]|#]*)(?:#[^\]|]*)?\|([^\]]+)\]\]`)
	reWiki       = regexp.MustCompile(`!?\[\[([^\]|#]+)(?:#([^\]]*))?\]\]`)
	reMdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	reListMarker = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)
	reEmphasis   = regexp.MustCompile(`(\*\*|__|~~|==)`)
	reEmphasis1  = regexp.MustCompile(`(^|[\s(])[*_]([^\s*_](?:[^*_]*[^\s*_])?)[*_]([\s).,;:!?]|$)`)
	reBlockID    = regexp.MustCompile(`(^|\s)\^[A-Za-z0-9-]+`)
	reSentEnd    = regexp.MustCompile(`([.!?])\s+|([。！？])`)
	reHTMLTag    = regexp.MustCompile(`<[^>]{1,80}>`)
)

// splitSentences splits markdown content into plain sentences. Code blocks,
// headings, tables, frontmatter, embeds and boilerplate (see boilerplate)
// are skipped; list items and lines are sentence boundaries; CJK
// punctuation 。！？ ends sentences too.
func splitSentences(content string) []string {
	var out []string
	for _, s := range noteSentences(content, "") {
		out = append(out, s.text)
	}
	return out
}

var (
	reHTMLComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	reObsComment  = regexp.MustCompile(`(?s)%%.*?%%`)
	reHeadingLine = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*$`)
)

// proseLines calls line for each line of markdown content a reader
// reads: frontmatter, HTML and Obsidian comments and fenced code are left
// out. A heading line is a boundary: flush is called, then *heading is set
// to it. A code fence is a boundary too, unless code is given: then each
// fenced block is handed to code whole (cut as codeListing says), and what
// it ends is for code to decide.
func proseLines(content string, heading *string, line func(text string), flush func(), code func(codeListing)) {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	content = reHTMLComment.ReplaceAllString(content, "\n")
	content = reObsComment.ReplaceAllString(content, "\n")
	lines := strings.Split(content, "\n")
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
				start = i + 1
				break
			}
		}
	}
	var listing *codeListing // the fenced block being read
	fence := ""
	for _, l := range lines[start:] {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				if listing != nil {
					code(*listing)
				}
				fence, listing = "", nil
			} else if listing != nil {
				listing.add(l)
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			if code == nil {
				flush()
			} else {
				listing = &codeListing{lang: strings.TrimSpace(strings.Trim(t, "`~")), indent: indentWidth(l), fence: fence}
			}
			continue
		}
		if m := reHeadingLine.FindStringSubmatch(t); m != nil {
			flush()
			*heading = cleanHeading(m[2])
			continue
		}
		line(l)
	}
	if listing != nil {
		code(*listing) // a block the chunk boundary cut
	}
}

// noteSentences splits content as splitSentences does, giving each sentence
// its position and the heading it sits under (heading until the content's
// first heading line).
func noteSentences(content, heading string) []sentence {
	var out []sentence
	var para strings.Builder
	flush := func() {
		text := strings.TrimSpace(para.String())
		para.Reset()
		if text == "" {
			return
		}
		for _, s := range splitText(text) {
			if s = cleanSentence(s); s != "" {
				out = append(out, sentence{text: s, pos: len(out), heading: heading})
			}
		}
	}
	proseLines(content, &heading, func(line string) {
		t := strings.TrimSpace(line)
		switch {
		case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "|"), strings.HasPrefix(t, "!["),
			strings.HasPrefix(t, "---"), strings.HasPrefix(t, "%%"), boilerplate(t):
			flush()
			return
		case reListMarker.MatchString(line), strings.HasPrefix(t, ">"):
			flush()
			t = reListMarker.ReplaceAllString(line, "")
			t = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(t), "> "))
			if t == "" || boilerplate(t) {
				return
			}
		}
		if para.Len() > 0 {
			para.WriteString(" ")
		}
		para.WriteString(t)
	}, flush, nil)
	flush()
	return out
}

// cleanHeading is a heading's text as a link target: markup and links
// reduced to their text.
func cleanHeading(h string) string {
	h = reWikiAlias.ReplaceAllString(h, "$2")
	h = reWiki.ReplaceAllString(h, "$1")
	h = reMdLink.ReplaceAllString(h, "$1")
	h = reEmphasis.ReplaceAllString(h, "")
	return strings.TrimSpace(strings.Trim(h, "`*_ "))
}

var (
	reURL      = regexp.MustCompile(`<?https?://[^\s>)]+>?`)
	reCodeSpan = regexp.MustCompile("`[^`]*`")
	reMetaLine = regexp.MustCompile(`^(?:\*\*|__)?[\p{L}][\p{L}\p{N} /-]{0,30}(?:\*\*|__)?\s*:(?:\*\*|__)?(?:\s+(.*))?$`)
	// A line of tags, perhaps labelled ("Tags: #rule #mechanic", the
	// "^Tags:" of notes converted by script).
	reTagOnly   = regexp.MustCompile(`^(?:\^?\p{L}{1,20}\s*:\s*)?(?:#[\p{L}\p{N}_/()-]+[\s,]*)+$`)
	reHTMLStart = regexp.MustCompile(`^</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?/?>`)
)

// boilerplate reports whether a line (list marker removed) is not prose a
// person would quote: HTML, a badge or image, a line of links with hardly
// any words of its own (fewer than three), a bare tag list, or a metadata
// line ("Plugin ID: x", "Developed by: someone", "Mobile compatible: Yes")
// whose value is a few words, a code span or links.
func boilerplate(line string) bool { return notProse(line, 3, false) }

// notProse is boilerplate with minWords words of its own required once
// links, URLs and code are gone, and, with labels, a line that ends with a
// colon and no value ("Key points:") taken as text, not metadata.
func notProse(line string, minWords int, labels bool) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return true
	}
	if reHTMLStart.MatchString(t) || strings.HasPrefix(t, "[![") || strings.HasPrefix(t, "![") || reTagOnly.MatchString(t) {
		return true
	}
	// What is left once links, URLs and code are gone.
	rest := reWikiAlias.ReplaceAllString(t, " ")
	rest = reWiki.ReplaceAllString(rest, " ")
	rest = reMdLink.ReplaceAllString(rest, " ")
	rest = reURL.ReplaceAllString(rest, " ")
	rest = reCodeSpan.ReplaceAllString(rest, " ")
	rest = reHTMLTag.ReplaceAllString(rest, " ")
	words := 0
	for _, w := range strings.Fields(rest) {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			words++
		}
	}
	if words < minWords && !hasCJK(rest) {
		return true
	}
	// A full-width colon (Chinese, Japanese) is written with no space
	// after it.
	if m := reMetaLine.FindStringSubmatch(strings.ReplaceAll(t, "：", ": ")); m != nil {
		val := strings.TrimSpace(m[1])
		if labels && val == "" {
			return false
		}
		vrest := reMdLink.ReplaceAllString(reWiki.ReplaceAllString(val, " "), " ")
		vrest = reCodeSpan.ReplaceAllString(reURL.ReplaceAllString(vrest, " "), " ")
		if len(strings.Fields(vrest)) <= 2 {
			return true
		}
	}
	return false
}

// splitText splits a paragraph at sentence-ending punctuation.
func splitText(p string) []string {
	var out []string
	last := 0
	for _, m := range reSentEnd.FindAllStringSubmatchIndex(p, -1) {
		end := m[1]
		if m[2] >= 0 {
			end = m[3] // keep the punctuation, drop the space
		}
		out = append(out, p[last:end])
		last = m[1]
	}
	if last < len(p) {
		out = append(out, p[last:])
	}
	return out
}

// linksToText replaces wikilinks and markdown links by the text a reader
// sees: the alias, else the display part, else the target.
func linksToText(s string) string {
	s = reWikiAlias.ReplaceAllString(s, "$2")
	s = reWiki.ReplaceAllStringFunc(s, func(m string) string {
		sm := reWiki.FindStringSubmatch(m)
		if sm[1] != "" {
			return sm[1]
		}
		return sm[2]
	})
	s = reMdLink.ReplaceAllString(s, "$1")
	return s
}

// plainText reduces markdown to the text a reader sees: links to their
// text, emphasis, block ids and HTML tags gone, blanks collapsed.
func plainText(s string) string {
	s = linksToText(s)
	s = reEmphasis.ReplaceAllString(s, "")
	s = reEmphasis1.ReplaceAllString(s, "$1$2$3")
	s = reBlockID.ReplaceAllString(s, "$1")
	s = reHTMLTag.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(s), " ")
}

// cleanSentenceText reduces markdown to the text a reader sees: links to
// their text, emphasis and HTML tags gone, blanks collapsed.
func cleanSentenceText(s string) string {
	s = linksToText(s)
	s = reURL.ReplaceAllString(s, "")
	s = reEmphasis.ReplaceAllString(s, "")
	s = reHTMLTag.ReplaceAllString(s, "")
	return strings.Trim(strings.Join(strings.Fields(s), " "), "`")
}

func cleanSentence(s string) string {
	s = plainText(s)
	// A sentence must say something: letters, and more than a word or two.
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if hasCJK(s) {
		if letters < 2 {
			return ""
		}
	} else if letters < 3 || len(strings.Fields(s)) < 3 {
		return ""
	}
	return truncate.Runes(s, 320)
}

var reQueryOps = regexp.MustCompile(`(?:^|\s)-+|\b(?:OR|AND|NOT)\b|[()]`)

// searchText is text as a search query: one line, without characters the
// query language reads as operators (a leading -, OR, parentheses) unless
// quoted, and without a question's end punctuation.
func searchText(text string) string {
	var b strings.Builder
	last := 0
	for _, loc := range quoted.FindAllStringIndex(text, -1) {
		b.WriteString(reQueryOps.ReplaceAllString(text[last:loc[0]], " "))
		b.WriteString(text[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(reQueryOps.ReplaceAllString(text[last:], " "))
	s := strings.Join(strings.Fields(b.String()), " ")
	s = strings.TrimRight(s, "?!.,;: ")
	return short(s, 300)
}
