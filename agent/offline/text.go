package offline

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"

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
previous this since during recent recently lately morning evening quarter
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday`)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

const monthNames = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec`

// timePatterns find a time expression in a goal; the first group (or the
// whole match) is what getTimeRangeMs gets.
var timePatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b((?:last|past|previous)\s+\d{1,4}\s+(?:day|week|month|year)s?)\b`),
	regexp.MustCompile(`(?i)\b(\d{4}-\d{1,2}(?:-\d{1,2})?)\b`),
	regexp.MustCompile(`(?i)\b((?:this|last|past|previous)\s+(?:week|month|year))\b`),
	regexp.MustCompile(`(?i)\b(today|yesterday)\b`),
	regexp.MustCompile(`(?i)\b(\d{1,3}\s+(?:day|week|month)s?\s+ago)\b`),
	regexp.MustCompile(`(?i)\b((?:` + monthNames + `)\s+\d{4})\b`),
	regexp.MustCompile(`(?i)\b(?:in|during|since|from)\s+((?:` + monthNames + `))\b`),
	regexp.MustCompile(`(?i)\b((?:last|this|next)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b`),
	regexp.MustCompile(`(?i)\bin\s+((?:19|20)\d{2})\b`),
}

// findTimeExpression returns the time expression of goal and the goal with it
// removed, or "" when there is none.
func findTimeExpression(goal string) (expr, rest string) {
	for _, re := range timePatterns {
		loc := re.FindStringSubmatchIndex(goal)
		if loc == nil {
			continue
		}
		expr = strings.ToLower(strings.Join(strings.Fields(goal[loc[2]:loc[3]]), " "))
		return expr, goal[:loc[0]] + " " + goal[loc[1]:]
	}
	return "", goal
}

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
	sorted := append([]string(nil), words...)
	for i := 1; i < len(sorted); i++ { // insertion sort: stable, tiny input
		for j := i; j > 0 && utf8.RuneCountInString(sorted[j]) > utf8.RuneCountInString(sorted[j-1]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	if len(sorted) > n {
		sorted = sorted[:n]
	}
	return sorted
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
	return []string{porterstemmer.StemString(w)}
}

// stemSet returns the set of match units of text.
func stemSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range tokenize(text) {
		for _, s := range stems(w) {
			set[s] = true
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
					g = append(g, s)
				}
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// sentence is one candidate sentence of a note.
type sentence struct {
	text  string
	pos   int // order within the note
	score float64
}

var (
	reWikiAlias  = regexp.MustCompile(`!?\[\[([^\]|#]*)(?:#[^\]|]*)?\|([^\]]+)\]\]`)
	reWiki       = regexp.MustCompile(`!?\[\[([^\]|#]+)(?:#([^\]]*))?\]\]`)
	reMdLink     = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	reListMarker = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)
	reEmphasis   = regexp.MustCompile(`(\*\*|__|~~|==)`)
	reSentEnd    = regexp.MustCompile(`([.!?])\s+|([。！？])`)
	reHTMLTag    = regexp.MustCompile(`<[^>]{1,80}>`)
)

// splitSentences splits markdown content into plain sentences. Code blocks,
// headings, tables, frontmatter and embeds are skipped; list items and lines
// are sentence boundaries; CJK punctuation 。！？ ends sentences too.
func splitSentences(content string) []string {
	var out []string
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	inCode := false
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
				start = i + 1
				break
			}
		}
	}
	var para strings.Builder
	flush := func() {
		text := strings.TrimSpace(para.String())
		para.Reset()
		if text == "" {
			return
		}
		for _, s := range splitText(text) {
			if s = cleanSentence(s); s != "" {
				out = append(out, s)
			}
		}
	}
	for _, line := range lines[start:] {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inCode = !inCode
			flush()
			continue
		}
		if inCode {
			continue
		}
		switch {
		case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "|"), strings.HasPrefix(t, "!["),
			strings.HasPrefix(t, "---"), strings.HasPrefix(t, "%%"):
			flush()
			continue
		case reListMarker.MatchString(line), strings.HasPrefix(t, ">"):
			flush()
			t = reListMarker.ReplaceAllString(line, "")
			t = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(t), "> "))
		}
		if para.Len() > 0 {
			para.WriteString(" ")
		}
		para.WriteString(t)
	}
	flush()
	return out
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

func cleanSentence(s string) string {
	s = reWikiAlias.ReplaceAllString(s, "$2")
	s = reWiki.ReplaceAllStringFunc(s, func(m string) string {
		sm := reWiki.FindStringSubmatch(m)
		if sm[1] != "" {
			return sm[1]
		}
		return sm[2]
	})
	s = reMdLink.ReplaceAllString(s, "$1")
	s = reEmphasis.ReplaceAllString(s, "")
	s = reHTMLTag.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
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
	if rs := []rune(s); len(rs) > 320 {
		s = strings.TrimSpace(string(rs[:319])) + "…"
	}
	return s
}

// scoreSentence counts the goal's terms found in the sentence; a phrase or a
// CJK word counts by the share of its units found.
func scoreSentence(s string, groups [][]string) float64 {
	set := stemSet(s)
	score := 0.0
	for _, g := range groups {
		hit := 0
		for _, u := range g {
			if set[u] {
				hit++
			}
		}
		score += float64(hit) / float64(len(g))
	}
	return score
}
