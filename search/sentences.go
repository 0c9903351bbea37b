package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// bestSentences builds a snippet of about width characters from display
// text: the sentence holding the most distinct query terms (then the most
// matches, then the earliest), grown with its neighbours while they fit
// (the one adding more new terms first, else the following one). Matches
// are wrapped in "**", lines are joined with " · ", and "…" marks text cut
// before or after. A best sentence longer than width is cut around its
// densest run of matches. Without hits the snippet is the start of text.
func bestSentences(text string, hits []hit, width int) string {
	if len(hits) == 0 {
		return buildSnippet(text, nil, width)
	}
	sents := sentenceSpans(text)
	if len(sents) == 0 {
		return buildSnippet(text, hitSpans(text, hits), width)
	}
	termsIn := func(s span) map[string]int {
		m := map[string]int{}
		for _, h := range hits {
			if h.start >= s.start && h.end <= s.end {
				m[h.term]++
			}
		}
		return m
	}
	best, bestD, bestN := 0, -1, -1
	for i, s := range sents {
		m := termsIn(s)
		n := 0
		for _, c := range m {
			n += c
		}
		if len(m) > bestD || len(m) == bestD && n > bestN {
			best, bestD, bestN = i, len(m), n
		}
	}
	s := sents[best]
	if runeLen(text[s.start:s.end]) > width {
		var inner []hit
		for _, h := range hits {
			if h.start >= s.start && h.end <= s.end {
				inner = append(inner, hit{span{h.start - s.start, h.end - s.start}, h.term})
			}
		}
		out := buildSnippet(text[s.start:s.end], hitSpans(text[s.start:s.end], inner), width)
		if s.start > 0 && !strings.HasPrefix(out, "…") {
			out = "…" + out
		}
		if s.end < len(strings.TrimRight(text, " \t\n")) && !strings.HasSuffix(out, "…") {
			out += "…"
		}
		return out
	}
	have := termsIn(s)
	lo, hi := best, best
	length := runeLen(text[s.start:s.end])
	for {
		gain := func(i int) int {
			g := 0
			for t := range termsIn(sents[i]) {
				if have[t] == 0 {
					g++
				}
			}
			return g
		}
		next, prev := -1, -1
		if hi+1 < len(sents) && length+1+runeLen(text[sents[hi+1].start:sents[hi+1].end]) <= width {
			next = hi + 1
		}
		if lo > 0 && length+1+runeLen(text[sents[lo-1].start:sents[lo-1].end]) <= width {
			prev = lo - 1
		}
		pick := next
		switch {
		case next < 0 && prev < 0:
		case next < 0 || prev >= 0 && gain(prev) > gain(next):
			pick = prev
		}
		if pick < 0 {
			break
		}
		for t, c := range termsIn(sents[pick]) {
			have[t] += c
		}
		length += 1 + runeLen(text[sents[pick].start:sents[pick].end])
		if pick < lo {
			lo = pick
		} else {
			hi = pick
		}
	}
	from, to := sents[lo].start, sents[hi].end
	var inner []span
	for _, sp := range hitSpans(text, hits) {
		if sp.start >= from && sp.end <= to {
			inner = append(inner, sp)
		}
	}
	out := renderRange(text, from, to, inner)
	if lo > 0 {
		out = "…" + out
	}
	if hi < len(sents)-1 {
		out += "…"
	}
	return out
}

// sentenceSpans splits text into sentences: at line ends, and after '.',
// '!' or '?' followed by white space. Spans are trimmed; empty ones are
// dropped.
func sentenceSpans(text string) []span {
	var out []span
	add := func(a, b int) {
		for a < b && isSpaceByte(text[a]) {
			a++
		}
		for b > a && isSpaceByte(text[b-1]) {
			b--
		}
		if b > a {
			out = append(out, span{a, b})
		}
	}
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			add(start, i)
			start = i + 1
		case (c == '.' || c == '!' || c == '?') && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '\t'):
			add(start, i+1)
			start = i + 1
		}
	}
	add(start, len(text))
	return out
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// renderRange writes text[from:to] with spans (inside it, sorted, not
// overlapping) wrapped in "**", white space collapsed and line breaks shown
// as " · " (or a space after a sentence's end).
func renderRange(text string, from, to int, spans []span) string {
	var b strings.Builder
	k := 0
	pendingBreak, pendingSpace := false, false
	lastRune := rune(0)
	flush := func() {
		if b.Len() == 0 {
			pendingBreak, pendingSpace = false, false
			return
		}
		switch {
		case pendingBreak && !strings.ContainsRune(".!?:;·", lastRune):
			b.WriteString(" · ")
		case pendingBreak || pendingSpace:
			b.WriteByte(' ')
		}
		pendingBreak, pendingSpace = false, false
	}
	for i := from; i < to; {
		if k < len(spans) && i == spans[k].start {
			flush()
			b.WriteString("**")
			b.WriteString(collapseSpace(text[spans[k].start:spans[k].end]))
			b.WriteString("**")
			lastRune = '*'
			i = spans[k].end
			k++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r == '\n':
			pendingBreak = true
		case unicode.IsSpace(r):
			pendingSpace = true
		default:
			flush()
			b.WriteRune(r)
			lastRune = r
		}
	}
	return b.String()
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
