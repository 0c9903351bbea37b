package vault

import (
	"strings"
	"unicode/utf8"
)

// chunk splits body into sections at top-level headings and each section
// into pieces of at most max runes. Chunks are contiguous slices of body:
// concatenating their texts gives the body back, so nothing is lost and a
// reader paging through chunks sees the whole note. Each chunk's text starts
// with its heading line (the first piece of a section does); text before the
// first heading is chunk 0 with an empty heading. Blank lines before the
// first heading are not worth a chunk of their own and go with it.
func chunk(body string, sections []section, bodyLine, max int) []Chunk {
	lines := newLineIndex([]byte(body), bodyLine)
	if body == "" {
		return []Chunk{{Index: 0, Text: "", StartLine: bodyLine}}
	}

	type part struct {
		start, stop int
		heading     string
	}
	var parts []part
	var stack []section
	prev, prevHeading := 0, ""
	for _, s := range sections {
		if s.off < prev || s.off > len(body) {
			continue
		}
		if s.off > prev && !(prev == 0 && prevHeading == "" && strings.TrimSpace(body[:s.off]) == "") {
			parts = append(parts, part{prev, s.off, prevHeading})
			prev = s.off
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= s.level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, s)
		prevHeading = headingPath(stack)
	}
	parts = append(parts, part{prev, len(body), prevHeading})

	var out []Chunk
	for _, p := range parts {
		for _, piece := range splitText(body[p.start:p.stop], max) {
			out = append(out, Chunk{
				Index:     len(out),
				Heading:   p.heading,
				Text:      piece.text,
				StartLine: lines.line(p.start + piece.off),
			})
		}
	}
	return out
}

func headingPath(stack []section) string {
	names := make([]string, 0, len(stack))
	for _, s := range stack {
		names = append(names, s.text)
	}
	return strings.Join(names, " > ")
}

type piece struct {
	off  int
	text string
}

// splitText cuts s into contiguous pieces of at most max runes, preferring
// to cut after a paragraph break, then after a sentence or line end, then
// after a space, and only then between two runes. A cut is only taken in
// the last two thirds of the window so pieces do not get tiny.
func splitText(s string, max int) []piece {
	var out []piece
	off := 0
	for off < len(s) {
		rest := s[off:]
		end, fits := runeOffset(rest, max)
		if fits {
			out = append(out, piece{off, rest})
			break
		}
		cut := bestCut(rest[:end])
		out = append(out, piece{off, rest[:cut]})
		off += cut
	}
	if len(out) == 0 {
		out = append(out, piece{0, s})
	}
	return out
}

// runeOffset returns the byte offset just after the first n runes of s, and
// whether s has at most n runes.
func runeOffset(s string, n int) (int, bool) {
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return len(s), true
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i, i >= len(s)
}

var sentenceEnds = []string{". ", "! ", "? ", ".\n", "!\n", "?\n", "。", "！", "？", "\n"}

// bestCut picks where to end a piece inside window w; the result is in
// (0, len(w)] and on a rune boundary.
func bestCut(w string) int {
	min := len(w) / 3
	if i := strings.LastIndex(w, "\n\n"); i >= min && i > 0 {
		return i + 2
	}
	best := -1
	for _, sep := range sentenceEnds {
		if i := strings.LastIndex(w, sep); i >= min && i+len(sep) > best {
			best = i + len(sep)
		}
	}
	if best > 0 {
		return best
	}
	if i := strings.LastIndexAny(w, " \t"); i >= min && i > 0 {
		return i + 1
	}
	return len(w)
}
