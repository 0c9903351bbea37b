package offline

import (
	"strings"
)

// Code blocks are left out of passages: their words are not sentences,
// and a note that explains something says it in prose around them. But a
// note whose part read holds no prose at all (a folder tree, a snippet, a
// template shown as code) says what it has to say in its code block, and
// quoting that block tells more than naming the note.

// Bounds on a code block quoted: codeLines lines within codeRunes.
const (
	codeLines = 20
	codeRunes = 1200
)

// codeListing is the first fenced code block of content, as written, with
// the heading it sits under (heading until content's first heading line),
// cut at codeLines lines or codeRunes; ok is false when content has none
// with text. cut reports whether lines were left out.
type codeListing struct {
	lang, heading string
	lines         []string
	cut           bool
}

// firstCode finds the first fenced code block of content.
func firstCode(content, heading string) (codeListing, bool) {
	var c codeListing
	fence, n := "", 0
	for _, l := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(l)
		if fence == "" {
			if m := reHeadingLine.FindStringSubmatch(t); m != nil {
				heading = cleanHeading(m[2])
				continue
			}
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = t[:3]
				c = codeListing{lang: strings.TrimSpace(strings.Trim(t, "`~")), heading: heading}
			}
			continue
		}
		if strings.HasPrefix(t, fence) {
			if strings.TrimSpace(strings.Join(c.lines, "")) != "" {
				return c, true
			}
			fence, n = "", 0
			continue
		}
		if c.cut {
			continue
		}
		if len(c.lines) == codeLines || n > 0 && n+len(l) > codeRunes {
			c.cut = true
			continue
		}
		c.lines = append(c.lines, l)
		n += len(l) + 1
	}
	if fence != "" && strings.TrimSpace(strings.Join(c.lines, "")) != "" {
		return c, true // a block the chunk boundary cut
	}
	return codeListing{}, false
}

// render writes the listing as a fenced block, saying so when it was cut.
func (c codeListing) render() string {
	out := "```" + c.lang + "\n" + strings.Join(c.lines, "\n") + "\n```"
	if c.cut {
		out += "\n\n(The listing goes on in the note.)"
	}
	return out
}
