package vault

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
)

// hostileKinds are inputs that made parsing quadratic; hostileNote builds
// one at size n (bytes or levels, as fits each). The fuzz corpus and the
// benchmarks use them too.
var hostileKinds = []string{
	"quote-line", "quote-spaced", "list-markers", "list-nested",
	"ordered-nested", "unclosed-wiki", "unclosed-link", "many-links",
}

func hostileNote(kind string, n int) string {
	switch kind {
	case "quote-line":
		return strings.Repeat(">", n)
	case "quote-spaced":
		return strings.Repeat("> ", n) + "x"
	case "list-markers":
		return strings.Repeat("- ", n) + "x"
	case "list-nested":
		var b strings.Builder
		for i := range n {
			b.WriteString(strings.Repeat("  ", i) + "- item\n")
		}
		return b.String()
	case "ordered-nested":
		return strings.Repeat("1. ", n) + "x"
	case "unclosed-wiki":
		return strings.Repeat("[[", n)
	case "unclosed-link":
		return strings.Repeat("[a](", n)
	case "many-links":
		return strings.Repeat("[[a]] #b ", n)
	}
	panic("unknown hostile note " + kind)
}

// treeDepth is the deepest nesting of blocks in the tree.
func treeDepth(n ast.Node) int {
	d := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			d = max(d, treeDepth(c))
		}
	}
	return d + 1
}

// longestLine is the longest source line of any block in the tree.
func longestLine(n ast.Node) int {
	l := 0
	if n.Type() == ast.TypeBlock {
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			l = max(l, seg.Stop-seg.Start)
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		l = max(l, longestLine(c))
	}
	return l
}

// The markdown parser's work grows with the container depth of a line and,
// inside a line, with the line's length times its brackets. Capping both
// keeps parsing linear; these are the properties the parser is given.
func TestParseMarkdownIsBounded(t *testing.T) {
	// A list level is a List and a ListItem; indentation nests lists two
	// columns a level.
	const maxDepth = 2*(maxContainerDepth+maxContainerIndent/2) + 3
	for _, name := range hostileKinds {
		t.Run(name, func(t *testing.T) {
			doc := parseMarkdown([]byte(hostileNote(name, 1500)))
			if d := treeDepth(doc); d > maxDepth {
				t.Errorf("block depth %d, want at most %d", d, maxDepth)
			}
		})
	}
	for name, in := range map[string]string{
		"brackets": strings.Repeat("[a](", 5000),
		"prose":    strings.Repeat("some words [[a link]] and #tag, ", 500),
	} {
		t.Run(name, func(t *testing.T) {
			if l := longestLine(parseMarkdown([]byte(in))); l > maxMarkdownLine+8 {
				t.Errorf("a line of %d bytes reaches the parser, want at most about %d", l, maxMarkdownLine)
			}
		})
	}
}

// What a note says is found whatever guarding its parse needed.
func TestParseHostileNotesKeepContent(t *testing.T) {
	deepList := func(levels int) string {
		var b strings.Builder
		for i := range levels {
			b.WriteString(strings.Repeat("  ", i) + "- level #t" + fmt.Sprint(i%3) + "\n")
		}
		return b.String()
	}
	long := strings.Repeat("plain words here and there, ", 200)
	tests := []struct {
		name      string
		in        string
		tags      []string
		linkCount int
	}{
		{"deep quote", strings.Repeat(">", 5000) + " #deep [[Target]]", []string{"deep"}, 1},
		{"deep list", deepList(300), []string{"t0", "t1", "t2"}, 0},
		{"long line", long + "#mid [[A]] " + long + "[[B|b]] #end", []string{"mid", "end"}, 2},
		{"long line of links", strings.Repeat("[[a]] #b ", 3000), []string{"b"}, 3000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tc.in), t0, 0)
			if !reflect.DeepEqual(n.Tags, tc.tags) {
				t.Errorf("tags = %q, want %q", n.Tags, tc.tags)
			}
			if len(n.Links) != tc.linkCount {
				t.Errorf("%d links, want %d", len(n.Links), tc.linkCount)
			}
			checkCover(t, n)
		})
	}
}

func TestGuardMarkdownLeavesOrdinaryNotes(t *testing.T) {
	for _, in := range []string{
		"# A\n\n> quote\n> > nested\n\n- a\n  - b\n    1. c\n",
		strings.Repeat("word ", 200) + "\n",
		strings.Repeat("> ", maxContainerDepth) + "x\n" + strings.Repeat(" ", maxContainerIndent) + "- x",
	} {
		if got := guardMarkdown([]byte(in)); string(got) != in {
			t.Errorf("guardMarkdown changed an ordinary note:\n%.200q\n%.200q", in, got)
		}
	}
}

// allocated is the number of bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Scanning wikilinks and tags must not copy the rest of the text per link
// (which made a line of links quadratic): four times the links may cost
// about four times the memory, not sixteen.
func TestParseLinksAndTagsScaleLinearly(t *testing.T) {
	note := func(n int) []byte { return []byte(strings.Repeat("[[a]] #b ", n)) }
	small, large := note(2000), note(8000)
	Parse("n.md", small, t0, 0) // warm up
	a := allocated(func() { Parse("n.md", small, t0, 0) })
	b := allocated(func() { Parse("n.md", large, t0, 0) })
	if ratio := float64(b) / float64(a); ratio > 6 {
		t.Errorf("4x the links allocated %.1fx the memory (%d -> %d bytes), want about 4x", ratio, a, b)
	}
}

// BenchmarkParseHostile parses the inputs that were quadratic, at the sizes
// they were reported at: a 1 MiB line of '>', 100,000 unclosed "[[", a list
// nested 1,500 levels deep, 100,000 unclosed "[a](" and 100,000 links.
func BenchmarkParseHostile(b *testing.B) {
	cases := []struct {
		name string
		n    int
	}{
		{"quote-line", 1 << 20},
		{"unclosed-wiki", 100_000},
		{"list-nested", 1500},
		{"unclosed-link", 100_000},
		{"many-links", 100_000},
	}
	for _, c := range cases {
		in := []byte(hostileNote(c.name, c.n))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				Parse("n.md", in, t0, 0)
			}
		})
	}
}
