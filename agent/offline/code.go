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

// codeListing is a fenced code block as written (less the indentation of
// its fence), with the heading it sits under, cut at codeLines lines or
// codeRunes. cut reports whether lines were left out.
type codeListing struct {
	lang, heading string
	lines         []string
	cut           bool
	indent        int    // the indentation of the fence
	fence         string // "~~~" for a block fenced so; else "```"
	runes         int
}

// add appends a line of the block, unless the listing is full.
func (c *codeListing) add(l string) {
	if c.cut {
		return
	}
	if len(c.lines) == codeLines || c.runes > 0 && c.runes+len(l) > codeRunes {
		c.cut = true
		return
	}
	// The block's lines are indented as its fence is (inside a list
	// item): that indentation is the list's, not the code's.
	for i := 0; i < c.indent && len(l) > 0 && (l[0] == ' ' || l[0] == '\t'); i++ {
		l = l[1:]
	}
	c.lines = append(c.lines, l)
	c.runes += len(l) + 1
}

// head is the listing cut at n lines.
func (c codeListing) head(n int) codeListing {
	if len(c.lines) <= n {
		return c
	}
	c.lines, c.cut, c.runes = c.lines[:n], true, 0
	for _, l := range c.lines {
		c.runes += len(l) + 1
	}
	return c
}

// empty reports whether the listing holds no text.
func (c codeListing) empty() bool { return strings.TrimSpace(strings.Join(c.lines, "")) == "" }

// firstCode finds the first fenced code block of content, with the
// heading it sits under (heading until content's first heading line); ok
// is false when content has none with text.
func firstCode(content, heading string) (codeListing, bool) {
	var found *codeListing
	proseLines(content, &heading, func(string) {}, func() {}, func(c codeListing) {
		if found == nil && !c.empty() {
			c.heading = heading
			found = &c
		}
	})
	if found == nil {
		return codeListing{}, false
	}
	return *found, true
}

// render writes the listing as a fenced block, saying so when it was cut.
func (c codeListing) render() string {
	fence := c.fence
	if fence == "" {
		fence = "```"
	}
	out := fence + c.lang + "\n" + strings.Join(c.lines, "\n") + "\n" + fence
	if c.cut {
		out += "\n\n(The listing goes on in the note.)"
	}
	return out
}
