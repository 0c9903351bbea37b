package vault

import "bytes"

// The markdown library does work per line for every open container (block
// quote, list item) and, inside a line, may rescan the rest of the line for
// each bracket. Both are fine for notes people write and quadratic for
// hostile or broken ones: one line of a million '>' (a block quote nested a
// million deep), a list nested 1,500 levels, or a long line of "[a](". So
// the parser is given a guarded copy of the body, the same length as the
// body, in which
//
//   - a container marker ('>', a list bullet, "1." or "1)") past
//     maxContainerDepth markers on one line, or after more than
//     maxContainerIndent columns of indentation, is turned into a letter,
//     so the rest of the line is plain text of the innermost container;
//   - "[[" is given as two letters: wikilinks are found by this package,
//     not by the parser, and every '[' costs the parser a delimiter it
//     keeps until the paragraph ends (100,000 unclosed "[[" took seconds);
//   - a line longer than maxMarkdownLine bytes is cut into shorter lines: at
//     a space followed by a letter (a soft line break, which changes
//     nothing a reader sees), outside [[wikilinks]]; a line with no such
//     space for maxMarkdownLine bytes (a run of brackets, a data: URI) is cut
//     at an ASCII byte that cannot start a block.
//
// Offsets are unchanged, so every segment the parser reports still points
// at the same bytes of the real body, which is what tags, links, headings
// and chunks are read from. Notes that need none of this are parsed from the
// body itself, without a copy.
const (
	maxContainerDepth  = 32
	maxContainerIndent = 64
	maxMarkdownLine    = 1024
)

// guardMarkdown returns src, or the guarded copy described above when src
// needs one.
func guardMarkdown(src []byte) []byte {
	g := guard{src: src}
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		g.prefix(start, end)
		g.wikilinks(start, end)
		if end-start > maxMarkdownLine {
			g.longLine(start, end)
		}
		start = end + 1
	}
	if g.out == nil {
		return src
	}
	return g.out
}

type guard struct {
	src []byte
	out []byte // nil until the first change
}

func (g *guard) set(i int, c byte) {
	if g.out == nil {
		g.out = bytes.Clone(g.src)
	}
	g.out[i] = c
}

// prefix caps the container markers at the start of the line src[start:end].
func (g *guard) prefix(start, end int) {
	depth, col := 0, 0
	for i := start; i < end; {
		switch g.src[i] {
		case ' ':
			col++
			i++
			continue
		case '\t':
			col += 4 - col%4
			i++
			continue
		}
		m := containerMarker(g.src[i:end])
		if m == 0 {
			return
		}
		if depth >= maxContainerDepth || col > maxContainerIndent {
			g.set(i, 'x')
			return
		}
		depth++
		col += m
		i += m
	}
}

// containerMarker returns the length of the block quote or list marker line
// starts with, or 0.
func containerMarker(line []byte) int {
	if len(line) == 0 {
		return 0
	}
	endsMarker := func(n int) int {
		if n == len(line) || line[n] == ' ' || line[n] == '\t' || line[n] == '\r' {
			return n
		}
		return 0
	}
	switch c := line[0]; {
	case c == '>':
		return 1
	case c == '-' || c == '*' || c == '+':
		return endsMarker(1)
	case c >= '0' && c <= '9':
		n := 1
		for n < len(line) && n < 10 && line[n] >= '0' && line[n] <= '9' {
			n++
		}
		if n < len(line) && (line[n] == '.' || line[n] == ')') {
			return endsMarker(n + 1)
		}
	}
	return 0
}

// wikilinks hides the "[[" of the line src[start:end] from the parser.
func (g *guard) wikilinks(start, end int) {
	for i := start; i+1 < end; i++ {
		if g.src[i] == '[' && g.src[i+1] == '[' {
			g.set(i, 'x')
			g.set(i+1, 'x')
			i++
		}
	}
}

// wikilinkSpan is how far a "[[" keeps the line cutter from cutting at a
// space: a wikilink is never that long, and an unclosed "[[" must not stop
// the cutting for the rest of the line.
const wikilinkSpan = 512

// longLine cuts the long line src[start:end] into lines of at most about
// maxMarkdownLine bytes.
func (g *guard) longLine(start, end int) {
	src := g.src
	last := start // start of the current (cut) line
	openAt := -1  // offset of an unclosed "[[", or -1
	for i := start; i+1 < end; i++ {
		c, next := src[i], src[i+1]
		switch {
		case c == '[' && next == '[':
			openAt = i
		case c == ']' && next == ']':
			openAt = -1
		}
		if openAt >= 0 && i-openAt > wikilinkSpan {
			openAt = -1
		}
		n := i - last
		soft := n >= maxMarkdownLine/2 && c == ' ' && isASCIILetter(next) && openAt < 0
		forced := n >= maxMarkdownLine && expendable(c) && safeLineStart(next)
		if soft || forced {
			g.set(i, '\n')
			last = i + 1
		}
	}
}

// expendable reports an ASCII byte the parser may see as a line break
// instead: a space or punctuation that is part of no tag, wikilink or
// escape.
func expendable(c byte) bool {
	return c == ' ' || c < 0x80 && c > ' ' && !isASCIILetter(c) && !(c >= '0' && c <= '9') &&
		!bytes.ContainsRune([]byte("[]!#\\_-/"), rune(c))
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// safeLineStart reports whether a line starting with c is ordinary
// paragraph text: not indented, and not the start of a heading, quote, list,
// thematic break, setext underline, code fence, HTML block or table.
func safeLineStart(c byte) bool {
	return c < 0x80 && c > ' ' && !bytes.ContainsRune([]byte("#>-*+=`~<_|\\0123456789"), rune(c))
}
