package vault

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestParseTags(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"simple", "hello #tag world", []string{"tag"}},
		{"start of line", "#tag at start", []string{"tag"}},
		{"nested", "see #Area/Work and #area/work", []string{"area/work"}},
		{"lowercase dedupe order", "#B #a #b", []string{"b", "a"}},
		{"unicode", "#日本語 #café #русский", []string{"日本語", "café", "русский"}},
		{"devanagari marks", "#हिन्दी", []string{"हिन्दी"}},
		{"digits only", "#123 #2024/01 #1a", []string{"1a"}},
		{"underscore dash", "#my_tag #my-tag", []string{"my_tag", "my-tag"}},
		{"trailing punctuation", "end #done.", []string{"done"}},
		{"not mid-word", "a#b c#d", nil},
		{"url fragment", "see http://x/y#frag and https://e.com/#/route", nil},
		{"autolink", "<http://x.org/a#frag>", nil},
		{"markdown link url", "[t](http://x.org/#frag) [u](note.md#sec)", nil},
		{"inline code", "`#code` and ``#more``", nil},
		{"fenced code", "```\n#notatag\n```\n", nil},
		{"tilde fence", "~~~python\n# comment #x\n~~~\n", nil},
		{"indented code", "para\n\n    #notatag\n", nil},
		{"heading marker", "# Heading\n## Sub #real", []string{"real"}},
		{"escaped", `\#nope`, nil},
		{"entity", "&#35;nope", nil},
		{"bold tag", "**#bold** (#paren)", []string{"bold", "paren"}},
		{"inside wikilink heading", "[[Note#Heading]] #ok", []string{"ok"}},
		{"html comment", "<!-- #hidden -->\n\ntext", nil},
		{"trailing slash", "#a/ #b/c/", []string{"a", "b/c"}},
		{"emoji stops tag", "#fire🔥 ", []string{"fire"}},
		{"no spaces ever", "#a b", []string{"a"}},
		{"in list and quote", "- item #li\n> quote #bq", []string{"li", "bq"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tc.in), t0, 0)
			if !reflect.DeepEqual(n.Tags, tc.want) {
				t.Errorf("tags = %q, want %q", n.Tags, tc.want)
			}
		})
	}
}

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		title      string
		aliases    []string
		tags       []string
		props      map[string]any
		fmErr      bool
		body       string
		firstChunk int // StartLine of chunk 0
	}{
		{
			name:  "full",
			in:    "---\ntitle: My Title\naliases: [One, Two]\ntags: [Alpha, \"#beta\", area/x]\ncount: 3\n---\nbody #inline\n",
			title: "My Title", aliases: []string{"One", "Two"}, tags: []string{"alpha", "beta", "area/x", "inline"},
			props: map[string]any{"title": "My Title", "aliases": []any{"One", "Two"}, "tags": []any{"Alpha", "#beta", "area/x"}, "count": 3},
			body:  "body #inline\n", firstChunk: 7,
		},
		{
			name:  "string forms",
			in:    "---\naliases: a one, b\ntags: \"#x, y z\"\n---\n",
			title: "n", aliases: []string{"a one", "b"}, tags: []string{"x", "y", "z"},
			props: map[string]any{"aliases": "a one, b", "tags": "#x, y z"},
			body:  "", firstChunk: 5,
		},
		{
			name:  "dates and nested maps",
			in:    "---\ncreated: 2024-01-02\nat: 2024-01-02T10:30:00Z\nm: {1: a, b: {c: d}}\nn: .nan\n---\nx",
			title: "n",
			props: map[string]any{"created": "2024-01-02", "at": "2024-01-02T10:30:00Z", "m": map[string]any{"1": "a", "b": map[string]any{"c": "d"}}, "n": "NaN"},
			body:  "x", firstChunk: 7,
		},
		{
			name:  "broken yaml keeps body",
			in:    "---\ntitle: [unclosed\ntags: x\n---\n# Body #kept\n",
			title: "n", tags: []string{"kept"}, fmErr: true,
			body: "# Body #kept\n", firstChunk: 5,
		},
		{
			name:  "not a mapping",
			in:    "---\n- a\n- b\n---\ntext",
			title: "n", fmErr: true, body: "text", firstChunk: 5,
		},
		{
			name:  "no closing delimiter means no frontmatter",
			in:    "---\ntitle: x\nno close",
			title: "n", body: "---\ntitle: x\nno close", firstChunk: 1,
		},
		{
			name:  "not at start",
			in:    "\n---\ntitle: x\n---\n",
			title: "n", body: "\n---\ntitle: x\n---\n", firstChunk: 1,
		},
		{
			name:  "crlf and bom",
			in:    "\xEF\xBB\xBF---\r\ntitle: T\r\n---\r\nbody\r\n",
			title: "T", props: map[string]any{"title": "T"}, body: "body\r\n", firstChunk: 4,
		},
		{
			name:  "empty frontmatter",
			in:    "---\n---\nbody",
			title: "n", body: "body", firstChunk: 3,
		},
		{
			name:  "numeric title",
			in:    "---\ntitle: 2024\n---\n",
			title: "2024", props: map[string]any{"title": 2024}, firstChunk: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Parse("dir/n.md", []byte(tc.in), t0, 0)
			if n.Title != tc.title {
				t.Errorf("title = %q, want %q", n.Title, tc.title)
			}
			if !reflect.DeepEqual(n.Aliases, tc.aliases) {
				t.Errorf("aliases = %q, want %q", n.Aliases, tc.aliases)
			}
			if !reflect.DeepEqual(n.Tags, tc.tags) {
				t.Errorf("tags = %q, want %q", n.Tags, tc.tags)
			}
			if !reflect.DeepEqual(n.Properties, tc.props) {
				t.Errorf("properties = %#v, want %#v", n.Properties, tc.props)
			}
			if (n.FrontmatterError != "") != tc.fmErr {
				t.Errorf("frontmatterError = %q, want error %v", n.FrontmatterError, tc.fmErr)
			}
			if n.Body != tc.body {
				t.Errorf("body = %q, want %q", n.Body, tc.body)
			}
			if got := n.Chunks[0].StartLine; got != tc.firstChunk {
				t.Errorf("chunk 0 start line = %d, want %d", got, tc.firstChunk)
			}
			if _, err := json.Marshal(n); err != nil {
				t.Errorf("note does not marshal: %v", err)
			}
		})
	}
}

func TestParseHeadingsAndLinks(t *testing.T) {
	in := "---\ntitle: x\n---\n" +
		"# Top\n" + // line 4
		"Intro [[Other Note]] and [[folder/Target#Part|shown]] and ![[image.png]].\n" +
		"\n" +
		"Setext Title\n" + // line 7
		"============\n" +
		"\n" +
		"## Sub *em*\n" + // line 10
		"[md](other%20note.md#Sec%201) [web](https://x.org/a.md) [mail](mailto:a@b.c) [pic](./p.png) ![emb](./e.md) [root](/abs.md) [up](../up.md) [out](../../out.md)\n" +
		"`[[not a link]]` ![[Embedded Note#^block]] [[a [[inner]]\n" +
		"```\n[[code link]]\n# not heading\n```\n" +
		"> ### Quoted\n" + // line 17
		"| a | [[T\\|alias]] |\n"
	n := Parse("dir/n.md", []byte(in), t0, 0)
	wantH := []Heading{{1, "Top", 4}, {1, "Setext Title", 7}, {2, "Sub *em*", 10}, {3, "Quoted", 17}}
	if !reflect.DeepEqual(n.Headings, wantH) {
		t.Errorf("headings = %+v\nwant %+v", n.Headings, wantH)
	}
	wantL := []Link{
		{Target: "Other Note", Kind: "wikilink"},
		{Target: "folder/Target", Heading: "Part", Alias: "shown", Kind: "wikilink"},
		{Target: "image.png", Embed: true, Kind: "wikilink"},
		{Target: "dir/other note.md", Heading: "Sec 1", Kind: "markdown"},
		{Target: "dir/e.md", Embed: true, Kind: "markdown"},
		{Target: "up.md", Kind: "markdown"},
		{Target: "Embedded Note", Heading: "^block", Embed: true, Kind: "wikilink"},
		{Target: "inner", Kind: "wikilink"},
		{Target: "T", Alias: "alias", Kind: "wikilink"},
	}
	if !reflect.DeepEqual(n.Links, wantL) {
		t.Errorf("links =\n%+v\nwant\n%+v", n.Links, wantL)
	}
}

func TestParseChunks(t *testing.T) {
	type c struct {
		heading string
		line    int
		prefix  string
	}
	tests := []struct {
		name string
		in   string
		size int
		want []c
	}{
		{"empty", "", 0, []c{{"", 1, ""}}},
		{"frontmatter only", "---\na: 1\n---\n", 0, []c{{"", 4, ""}}},
		{"no headings", "just text\n", 0, []c{{"", 1, "just"}}},
		{"preamble then headings", "intro\n# A\ntext\n## B\nmore\n### C\nx\n# D\ny\n", 0, []c{
			{"", 1, "intro"}, {"A", 2, "# A"}, {"A > B", 4, "## B"}, {"A > B > C", 6, "### C"}, {"D", 8, "# D"},
		}},
		{"blank preamble joins first heading", "\n\n# A\ntext", 0, []c{{"A", 1, "\n\n# A"}}},
		{"skipped level", "## B\n# A\n### C\n", 0, []c{{"B", 1, "## B"}, {"A", 2, "# A"}, {"A > C", 3, "### C"}}},
		{"heading in code is not a split", "# A\n```\n# no\n```\n", 0, []c{{"A", 1, "# A"}}},
		{"paragraph split", "# A\n" + strings.Repeat("word ", 10) + "\n\n" + strings.Repeat("more ", 10), 60, []c{
			{"A", 1, "# A"}, {"A", 4, "more"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Parse("n.md", []byte(tc.in), t0, tc.size)
			var got []c
			for i, ch := range n.Chunks {
				if ch.Index != i {
					t.Errorf("chunk %d has index %d", i, ch.Index)
				}
				p := ch.Text
				if i < len(tc.want) && strings.HasPrefix(p, tc.want[i].prefix) {
					p = tc.want[i].prefix
				}
				got = append(got, c{ch.Heading, ch.StartLine, p})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("chunks = %+v\nwant %+v", got, tc.want)
			}
			checkCover(t, n)
		})
	}
}

func TestSplitRespectsCapAndRunes(t *testing.T) {
	long := strings.Repeat("日本語のテキスト", 400) // no spaces: rune-boundary cuts
	sentences := strings.Repeat("This is a sentence. ", 300)
	for _, in := range []string{long, sentences, "# H\n" + sentences + "\n\n" + long} {
		for _, size := range []int{1, 7, 100, 1500} {
			n := Parse("n.md", []byte(in), t0, size)
			checkCover(t, n)
			for _, ch := range n.Chunks {
				if rc := utf8.RuneCountInString(ch.Text); rc > size {
					t.Fatalf("size %d: chunk %d has %d runes", size, ch.Index, rc)
				}
				if !utf8.ValidString(ch.Text) {
					t.Fatalf("size %d: chunk %d splits a rune", size, ch.Index)
				}
			}
		}
	}
	// Sentence cuts end on the sentence.
	n := Parse("n.md", []byte(sentences), t0, 100)
	if got := n.Chunks[0].Text; !strings.HasSuffix(got, ". ") {
		t.Errorf("first chunk %q does not end at a sentence", got)
	}
}

func TestParseTitleAndHash(t *testing.T) {
	a := Parse("x/My Note.md", []byte("a"), t0, 0)
	b := Parse("x/My Note.md", []byte("b"), t0, 0)
	if a.Title != "My Note" {
		t.Errorf("title = %q", a.Title)
	}
	if a.Hash == b.Hash || len(a.Hash) != 64 {
		t.Errorf("hashes %q %q", a.Hash, b.Hash)
	}
	if a.Size != 1 || !a.ModTime.Equal(t0) {
		t.Errorf("size/mtime = %d %v", a.Size, a.ModTime)
	}
}

// checkCover asserts the chunk texts concatenated give the body back.
func checkCover(t testing.TB, n *Note) {
	t.Helper()
	var sb strings.Builder
	for _, ch := range n.Chunks {
		sb.WriteString(ch.Text)
	}
	if sb.String() != n.Body {
		t.Fatalf("chunks do not cover the body:\nchunks %q\nbody   %q", sb.String(), n.Body)
	}
	if len(n.Chunks) == 0 {
		t.Fatalf("no chunks")
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"", "# A\ntext #tag [[link|alias]] ![[embed#h]]",
		"---\ntitle: x\ntags: [a, b]\n---\nbody",
		"---\n: : :\n---\n```\n#x\n```",
		"Setext\n===\n\n- [ ] #todo\n> [!note] #callout\n",
		"[a](b%2.md) [[", "#", "\xff\xfe#x", strings.Repeat("long sentence. ", 200),
		"---\na: &a [*a, *a]\nb: &b [*a, *a]\n---\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), 40)
	}
	for _, kind := range hostileKinds {
		f.Add([]byte(hostileNote(kind, 2000)), 0)
	}
	// The inputs that once made parsing quadratic, at the sizes that took
	// seconds: a 1 MB ">" line, 100k unclosed "[[", a list nested 1,500
	// levels deep.
	f.Add([]byte(hostileNote("quote-line", 1<<20)), 0)
	f.Add([]byte(hostileNote("unclosed-wiki", 100_000)), 0)
	f.Add([]byte(hostileNote("list-nested", 1500)), 0)
	f.Fuzz(func(t *testing.T, content []byte, size int) {
		if size > 5000 || size < -5 {
			size = 0
		}
		n := Parse("f.md", content, t0, size)
		checkCover(t, n)
		for _, tag := range n.Tags {
			if tag == "" || strings.ContainsFunc(tag, isSpace) {
				t.Fatalf("bad tag %q", tag)
			}
		}
		if _, err := json.Marshal(n); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

func TestParseForIndex(t *testing.T) {
	content := []byte("---\ntitle: T\ntags: [a]\n---\n# H\nbody [[link]] #tag\n\n## Two\nmore text\n")
	mt := time.Unix(1700000000, 0)
	full, idx := Parse("x/n.md", content, mt, 0), ParseForIndex("x/n.md", content, mt)
	if len(full.Chunks) == 0 || idx.Chunks != nil {
		t.Fatalf("chunks: Parse %d, ParseForIndex %v", len(full.Chunks), idx.Chunks)
	}
	full.Chunks = nil
	if !reflect.DeepEqual(full, idx) {
		t.Errorf("ParseForIndex = %+v\nParse = %+v", idx, full)
	}
}
