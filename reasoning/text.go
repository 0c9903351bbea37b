package reasoning

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/internal/truncate"
)

// collapseSpace joins all whitespace runs (newlines included) into single
// spaces and trims the ends, so a step is always one line.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cleanStep makes s a one-line step without control characters.
func cleanStep(s string) string {
	return collapseSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s))
}

var (
	fenceRe     = regexp.MustCompile("(?s)```.*?(```|$)")
	commentRe   = regexp.MustCompile(`(?s)<!--.*?(-->|$)`)
	tagRe       = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>`)
	imageRe     = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	linkRe      = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	wikiAliasRe = regexp.MustCompile(`!?\[\[[^\]|]*\|([^\]]*)\]\]`)
	wikiRe      = regexp.MustCompile(`!?\[\[([^\]]*)\]\]`)
	strongRe    = regexp.MustCompile("\\*\\*|__|~~|`")
	emphasisRe  = regexp.MustCompile(`(^|[\s(])[*_]+|[*_]+($|[\s.,;:!?)])`)
	headingRe   = regexp.MustCompile(`^#{1,6}\s+`)
	listRe      = regexp.MustCompile(`^(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+|>\s*)`)
)

// abbreviations that end with a period without ending a sentence.
var abbreviations = []string{"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "Mr.", "Ms.", "Mrs.", "Dr.", "St.", "No."}

// FirstSentence returns the first sentence of a model's text as one short
// line of at most n runes (n <= 0: no cap). Markdown is stripped lightly:
// code fences, HTML comments (reasoning markers included) and tags are
// dropped; headings, list bullets and quotes lose their markers; links and
// wikilinks keep their text; emphasis marks go. The first paragraph that is
// not a heading is preferred; whitespace is collapsed.
func FirstSentence(s string, n int) string {
	s = fenceRe.ReplaceAllString(s, "\n")
	s = commentRe.ReplaceAllString(s, " ")
	s = tagRe.ReplaceAllString(s, " ")
	s = imageRe.ReplaceAllString(s, "$1")
	s = linkRe.ReplaceAllString(s, "$1")
	s = wikiAliasRe.ReplaceAllString(s, "$1")
	s = wikiRe.ReplaceAllString(s, "$1")

	para, heading := firstParagraph(s)
	if para == "" {
		para = heading
	}
	para = strongRe.ReplaceAllString(para, "")
	// Single * and _ only go at word edges, so snake_case survives; the
	// surrounding space or punctuation is kept.
	para = emphasisRe.ReplaceAllStringFunc(para, func(m string) string {
		return strings.Map(func(r rune) rune {
			if r == '*' || r == '_' {
				return -1
			}
			return r
		}, m)
	})
	para = collapseSpace(para)
	return truncate.Runes(cutSentence(para), n)
}

// firstParagraph returns the first run of non-heading text lines (a list
// item or quote ends it once text was collected) and the first heading seen.
func firstParagraph(s string) (para, heading string) {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			if len(lines) > 0 {
				break
			}
			continue
		}
		if headingRe.MatchString(t) {
			if len(lines) > 0 {
				break
			}
			if heading == "" {
				heading = headingRe.ReplaceAllString(t, "")
			}
			continue
		}
		if listRe.MatchString(t) {
			if len(lines) > 0 {
				break
			}
			t = listRe.ReplaceAllString(t, "")
		}
		lines = append(lines, t)
	}
	return strings.Join(lines, " "), heading
}

// cutSentence returns s up to and including the first sentence end: '.',
// '!' or '?' followed by a space (or the end), skipping common
// abbreviations, or a CJK full stop.
func cutSentence(s string) string {
	for i, r := range s {
		switch r {
		case '。', '！', '？':
			return s[:i+utf8.RuneLen(r)]
		case '.', '!', '?':
			end := i + 1
			if end < len(s) && s[end] != ' ' {
				continue
			}
			if r == '.' && isAbbreviation(s[:end]) {
				continue
			}
			return s[:end]
		}
	}
	return s
}

func isAbbreviation(prefix string) bool {
	for _, a := range abbreviations {
		if strings.HasSuffix(prefix, a) {
			start := len(prefix) - len(a)
			if start == 0 || prefix[start-1] == ' ' || prefix[start-1] == '(' {
				return true
			}
		}
	}
	return false
}
