package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// termRenderer renders an answer's markdown for a terminal: emphasis,
// code and headings styled with SGR codes (none in the "notty" style),
// lists with bullets or their numbers, paragraphs wrapped at the width,
// code blocks indented and never wrapped, links with their address.
//
// It walks the AST of goldmark, the parser the vault's notes are read
// with, and wraps with charmbracelet/x/ansi, which measures text as the
// terminal shows it and keeps styles across breaks. A full renderer such
// as glamour links a syntax highlighter whose lexers and styles are built
// at start-up in every process (4 MB of heap in each front-end serving an
// editor all day); an answer quotes notes, and its code needs no colours.
type termRenderer struct {
	st    termStyle
	width int
	md    parser.Parser
}

// termStyle holds the SGR sequences of each element; all empty for the
// "notty" style.
type termStyle struct {
	bold, italic, code, heading, dim string
}

func newTermRenderer(style string, width int) *termRenderer {
	st := termStyle{}
	if style != "notty" {
		st = termStyle{bold: "\x1b[1m", italic: "\x1b[3m", code: "\x1b[36m", heading: "\x1b[1;35m", dim: "\x1b[2m"}
	}
	return &termRenderer{st: st, width: max(width, 20), md: goldmark.DefaultParser()}
}

// Render returns md rendered, without a trailing newline.
func (r *termRenderer) Render(md string) string {
	src := []byte(md)
	doc := r.md.Parse(text.NewReader(src))
	lines := r.blocks(doc, src, r.width)
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// blocks renders the block children of n at most width columns wide, a
// blank line between them.
func (r *termRenderer) blocks(n ast.Node, src []byte, width int) []string {
	return r.children(n, src, width, true)
}

// children renders the block children of n, a blank line between them when
// apart (the blocks of a tight list's item are not).
func (r *termRenderer) children(n ast.Node, src []byte, width int, apart bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b := r.block(c, src, width)
		if len(b) == 0 {
			continue
		}
		if len(out) > 0 && apart {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	return out
}

func (r *termRenderer) block(n ast.Node, src []byte, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		return r.wrap(r.styled(r.st.heading, r.inline(n, src, nil)), width)
	case *ast.Paragraph, *ast.TextBlock:
		if raw := rawLines(n, src); isTable(raw) {
			return raw // a table's rows stay rows
		}
		return r.wrap(r.inline(n, src, nil), width)
	case *ast.List:
		return r.list(n, src, width)
	case *ast.Blockquote:
		var out []string
		for _, l := range r.blocks(n, src, width-2) {
			out = append(out, r.styled(r.st.dim, "│")+" "+l)
		}
		return out
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		var out []string
		for _, l := range rawLines(n, src) {
			if l = strings.TrimRight(l, " \t"); l == "" {
				out = append(out, "")
				continue
			}
			out = append(out, "  "+r.styled(r.st.code, l))
		}
		return out
	case *ast.ThematicBreak:
		return []string{r.styled(r.st.dim, strings.Repeat("─", min(width, 40)))}
	case *ast.HTMLBlock:
		return rawLines(n, src)
	default:
		if n.Type() == ast.TypeBlock && n.HasChildren() {
			return r.blocks(n, src, width)
		}
		return rawLines(n, src)
	}
}

// list renders a list: each item's first line after its bullet or number,
// the rest under its text; a loose list keeps a blank line between items.
func (r *termRenderer) list(l *ast.List, src []byte, width int) []string {
	var out []string
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		w := ansi.StringWidth(marker)
		pad := strings.Repeat(" ", w)
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		for i, line := range r.children(item, src, width-w, !l.IsTight) {
			switch {
			case i == 0:
				out = append(out, marker+line)
			case line == "":
				out = append(out, "")
			default:
				out = append(out, pad+line)
			}
		}
	}
	return out
}

// inline renders n's inline children, active being the styles in force
// around them (a style closed inside another opens the outer one again).
func (r *termRenderer) inline(n ast.Node, src []byte, active []string) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			switch {
			case c.HardLineBreak():
				b.WriteByte('\n')
			case c.SoftLineBreak():
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			b.WriteString(r.span(r.st.code, codeText(c, src), active))
		case *ast.Emphasis:
			st := r.st.italic
			if c.Level >= 2 {
				st = r.st.bold
			}
			b.WriteString(r.span(st, r.inline(c, src, append(active, st)), active))
		case *ast.Link:
			label := r.inline(c, src, active)
			b.WriteString(label)
			if dest := string(c.Destination); dest != "" && dest != ansi.Strip(label) {
				b.WriteString(r.span(r.st.dim, " ("+dest+")", active))
			}
		case *ast.AutoLink:
			b.Write(c.URL(src))
		case *ast.Image:
			fmt.Fprintf(&b, "[%s]", r.inline(c, src, active))
			b.WriteString(r.span(r.st.dim, " ("+string(c.Destination)+")", active))
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				b.Write(seg.Value(src))
			}
		default:
			b.WriteString(r.inline(c, src, active))
		}
	}
	return b.String()
}

// span is s in style st, the styles of active in force again after it.
func (r *termRenderer) span(st, s string, active []string) string {
	if st == "" {
		return s
	}
	return st + s + ansiReset + strings.Join(active, "")
}

// styled is s in style st.
func (r *termRenderer) styled(st, s string) string {
	return r.span(st, s, nil)
}

// wrap breaks s into lines of at most width columns, at spaces; a word
// longer than the line (an address) is left whole.
func (r *termRenderer) wrap(s string, width int) []string {
	return strings.Split(ansi.Wordwrap(s, max(width, 10), ""), "\n")
}

// codeText is the text of a code span.
func codeText(c *ast.CodeSpan, src []byte) string {
	var b strings.Builder
	for t := c.FirstChild(); t != nil; t = t.NextSibling() {
		if s, ok := t.(*ast.Text); ok {
			b.Write(s.Segment.Value(src))
		}
	}
	return b.String()
}

// rawLines are the source lines of a block, as written.
func rawLines(n ast.Node, src []byte) []string {
	segs := n.Lines()
	out := make([]string, 0, segs.Len())
	for i := 0; i < segs.Len(); i++ {
		seg := segs.At(i)
		out = append(out, strings.TrimRight(string(seg.Value(src)), "\n"))
	}
	return out
}

// isTable reports whether lines are a markdown table: every line a row
// between pipes, at least a header and its rule.
func isTable(lines []string) bool {
	if len(lines) < 2 {
		return false
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); !strings.HasPrefix(t, "|") {
			return false
		}
	}
	return true
}
