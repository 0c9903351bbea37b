package vault

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseCapsHugeNotes(t *testing.T) {
	manyTags := func(n int) string {
		var b strings.Builder
		b.WriteString("---\ntags: [")
		for i := range n {
			fmt.Fprintf(&b, "t%d, ", i)
		}
		b.WriteString("]\n---\nbody\n")
		return b.String()
	}
	tests := []struct {
		name    string
		in      string
		check   func(t *testing.T, n *Note)
		cutWord string // a word the Cut reason must contain
	}{
		{"body", "# Big\n\n" + strings.Repeat("lorem ipsum dolor sit amet\n", MaxBodyBytes/27+1000), func(t *testing.T, n *Note) {
			if len(n.Body) > MaxBodyBytes || len(n.Body) < MaxBodyBytes-1024 {
				t.Errorf("body is %d bytes, want the first %d (cut at a line end)", len(n.Body), MaxBodyBytes)
			}
			if !strings.HasSuffix(n.Body, "\n") {
				t.Errorf("body cut mid-line: %q", n.Body[len(n.Body)-20:])
			}
		}, "body"},
		{"inline tags", strings.Repeat("#t", 1) + strings.Join(strings.Fields(strings.Repeat("x ", MaxTags+50)), ""), nil, ""},
		{"unique inline tags", func() string {
			var b strings.Builder
			for i := range MaxTags + 500 {
				fmt.Fprintf(&b, "#tag%d ", i)
			}
			return b.String()
		}(), func(t *testing.T, n *Note) {
			if len(n.Tags) != MaxTags || n.Tags[0] != "tag0" {
				t.Errorf("%d tags (first %q), want the first %d", len(n.Tags), n.Tags[0], MaxTags)
			}
		}, "tags"},
		{"frontmatter tags", manyTags(MaxTags + 10), func(t *testing.T, n *Note) {
			if len(n.Tags) != MaxTags {
				t.Errorf("%d tags, want %d", len(n.Tags), MaxTags)
			}
		}, "tags"},
		{"huge frontmatter", manyTags(100_000), func(t *testing.T, n *Note) {
			if n.Properties != nil || len(n.Tags) != 0 || n.Body != "body\n" {
				t.Errorf("properties %d, tags %d, body %q: want the frontmatter skipped and the body kept", len(n.Properties), len(n.Tags), n.Body)
			}
			if !strings.Contains(n.FrontmatterError, "larger than") {
				t.Errorf("frontmatter error %q", n.FrontmatterError)
			}
		}, "frontmatter"},
		{"links", strings.Repeat("[[a]] ", MaxLinks+100), func(t *testing.T, n *Note) {
			if len(n.Links) != MaxLinks {
				t.Errorf("%d links, want %d", len(n.Links), MaxLinks)
			}
		}, "links"},
		{"headings", strings.Repeat("# h\n", MaxHeadings+100), func(t *testing.T, n *Note) {
			if len(n.Headings) != MaxHeadings {
				t.Errorf("%d headings, want %d", len(n.Headings), MaxHeadings)
			}
		}, "headings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tc.in), t0, 0)
			if tc.check != nil {
				tc.check(t, n)
			}
			if tc.cutWord == "" {
				if len(n.Cut) != 0 {
					t.Errorf("cut = %q, want nothing", n.Cut)
				}
				return
			}
			if len(n.Cut) != 1 || !strings.HasPrefix(n.Cut[0], tc.cutWord) {
				t.Errorf("cut = %q, want one reason about %s", n.Cut, tc.cutWord)
			}
			if n.Size != int64(len(tc.in)) {
				t.Errorf("size %d, want the whole file's %d", n.Size, len(tc.in))
			}
			checkCover(t, n)
		})
	}
}

func TestParseInvalidUTF8(t *testing.T) {
	in := "---\ntitle: caf\xe9\n---\n# H\xffead\n\nalpha\xffbravo #ta\xc3g [[No\xe2\x82te]] echo\n"
	n := Parse("n.md", []byte(in), t0, 0)
	for what, s := range map[string]string{"body": n.Body, "title": n.Title, "heading": n.Headings[0].Text, "link": n.Links[0].Target} {
		if !utf8.ValidString(s) {
			t.Errorf("%s %q is not valid UTF-8", what, s)
		}
	}
	if want := "alpha\uFFFDbravo #ta\uFFFDg [[No\uFFFDte]] echo\n"; !strings.HasSuffix(n.Body, want) {
		t.Errorf("body = %q, want it to end with %q", n.Body, want)
	}
	if n.Title != "caf\uFFFD" {
		t.Errorf("title = %q", n.Title)
	}
	if n.Hash != Parse("n.md", []byte(in), t0, 0).Hash || n.Size != int64(len(in)) {
		t.Errorf("hash and size must be the file's")
	}
}

// Old Mac files end lines with a lone CR; the frontmatter, headings and
// line numbers must still be found.
func TestParseCROnlyLineEndings(t *testing.T) {
	in := "---\rtitle: Old Mac\rtags: [retro]\r---\r# One\r\rtext #inline\r## Two\r"
	n := Parse("n.md", []byte(in), t0, 0)
	if n.Title != "Old Mac" || n.FrontmatterError != "" {
		t.Errorf("title %q, frontmatter error %q: frontmatter not found", n.Title, n.FrontmatterError)
	}
	if strings.Join(n.Tags, ",") != "retro,inline" {
		t.Errorf("tags = %q", n.Tags)
	}
	want := []Heading{{1, "One", 5}, {2, "Two", 8}}
	if fmt.Sprint(n.Headings) != fmt.Sprint(want) {
		t.Errorf("headings = %v, want %v", n.Headings, want)
	}
	if strings.Contains(n.Body, "\r") {
		t.Errorf("body %q keeps lone CRs", n.Body)
	}
}
