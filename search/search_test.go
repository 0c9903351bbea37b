package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

// smallVault is a hand-written vault whose expected results are obvious.
var smallVault = map[string]string{
	"recipes/Sourdough Bread.md": joinLines("---", "tags: [recipe/bread, baking]", "aliases: [Levain loaf]", "---",
		"# Sourdough Bread", "Mix the starter with flour and water.", "## Baking", "Bake at 250 degrees in a dutch oven until the crust is dark."),
	"recipes/Rye Crackers.md": joinLines("#recipe/snack", "# Rye Crackers", "Thin crackers with rye flour and caraway seeds. No starter needed."),
	"recipes/Café au lait.md": joinLines("#recipe/drink", "Strong coffee with hot milk, as served in a French café."),
	"people/Jürgen Müller.md": joinLines("# Jürgen Müller", "Met Jürgen at the conference. He works on distributed databases."),
	"projects/Alpha/Plan.md": joinLines("---", "tags: project", "---", "# Alpha plan", "## Milestones",
		"The database migration happens in March.", "We decided to postpone the migration of the billing service.",
		"Unrelated filler text about gardening and tomatoes."),
	"projects/Beta/Notes.md":  joinLines("#project", "Beta is about the mobile app.", "The migration plan for Alpha is elsewhere."),
	"journal/2024-03-01.md":   joinLines("Went running. Thought about the starter for the bread."),
	"日本/東京.md":                joinLines("# 東京タワー", "東京タワーは高さ333メートルの電波塔です。夜景がとても綺麗でした。"),
	"中文/机器学习.md":              joinLines("# 机器学习笔记", "机器学习是人工智能的一个分支。深度学习使用神经网络。"),
	".trash/Sourdough old.md": joinLines("# Sourdough old", "sourdough starter sourdough starter"),
	".obsidian/workspace.md":  "sourdough",
}

func TestSearchSmallVault(t *testing.T) {
	dir := writeVault(t, smallVault)
	ix := openIndex(t, dir, "")
	if got := ix.Count(); got != 9 {
		t.Fatalf("Count = %d, want 9 (dot-folders skipped): %v", got, ix.Paths())
	}

	tests := []struct {
		name  string
		req   Request
		top   string   // expected first hit ("" = no results)
		set   []string // if set: exact result set, sorted
		last  string   // with set: the last hit
		fuzzy bool
	}{
		{name: "title wins", req: Request{Query: "sourdough"}, top: "recipes/Sourdough Bread.md"},
		{name: "alias", req: Request{Query: "levain"}, top: "recipes/Sourdough Bread.md"},
		{name: "stemming", req: Request{Query: "cracker"}, top: "recipes/Rye Crackers.md"},
		{name: "stemming both sides", req: Request{Query: "baking dutch ovens"}, top: "recipes/Sourdough Bread.md"},
		{name: "fold query", req: Request{Query: "cafe"}, top: "recipes/Café au lait.md"},
		{name: "fold text", req: Request{Query: "muller"}, top: "people/Jürgen Müller.md"},
		{name: "fold both", req: Request{Query: "Jürgen"}, top: "people/Jürgen Müller.md"},
		// No term is required: the journal note has only "starter" and
		// comes last, after the two notes with both words.
		{name: "two terms, both first", req: Request{Query: "starter flour"},
			set: []string{"journal/2024-03-01.md", "recipes/Rye Crackers.md", "recipes/Sourdough Bread.md"}, last: "journal/2024-03-01.md"},
		{name: "phrase", req: Request{Query: `"rye flour"`}, set: []string{"recipes/Rye Crackers.md"}},
		{name: "phrase with stop words", req: Request{Query: `"migration of the billing service"`}, set: []string{"projects/Alpha/Plan.md"}},
		{name: "phrase order matters", req: Request{Query: `"flour rye"`}, top: ""},
		{name: "exclusion", req: Request{Query: "starter -bread"}, set: []string{"recipes/Rye Crackers.md"}},
		{name: "phrase exclusion", req: Request{Query: `starter -"dutch oven"`},
			set: []string{"journal/2024-03-01.md", "recipes/Rye Crackers.md"}},
		{name: "tag nested", req: Request{Query: "tag:#recipe"},
			set: []string{"recipes/Café au lait.md", "recipes/Rye Crackers.md", "recipes/Sourdough Bread.md"}},
		{name: "tag exact nested", req: Request{Query: "tag:recipe/bread"}, set: []string{"recipes/Sourdough Bread.md"}},
		{name: "tag no partial", req: Request{Query: "tag:reci"}, top: ""},
		{name: "bare hashtag", req: Request{Query: "#project"}, set: []string{"projects/Alpha/Plan.md", "projects/Beta/Notes.md"}},
		{name: "tag plus term", req: Request{Query: "tag:recipe starter"},
			set: []string{"recipes/Rye Crackers.md", "recipes/Sourdough Bread.md"}},
		{name: "path prefix", req: Request{Query: "path:projects/ migration"},
			set: []string{"projects/Alpha/Plan.md", "projects/Beta/Notes.md"}},
		{name: "path case-insensitive", req: Request{Query: "path:Projects/alpha/"}, set: []string{"projects/Alpha/Plan.md"}},
		{name: "file", req: Request{Query: "file:plan"}, set: []string{"projects/Alpha/Plan.md"}},
		{name: "file with ext", req: Request{Query: "file:Plan.md"}, set: []string{"projects/Alpha/Plan.md"}},
		{name: "file wildcard", req: Request{Query: "file:*bread*"}, set: []string{"recipes/Sourdough Bread.md"}},
		{name: "or", req: Request{Query: "caraway OR databases"},
			set: []string{"people/Jürgen Müller.md", "projects/Alpha/Plan.md", "recipes/Rye Crackers.md"}},
		{name: "group", req: Request{Query: "(caraway OR coffee) tag:recipe"},
			set: []string{"recipes/Café au lait.md", "recipes/Rye Crackers.md"}},
		{name: "fuzzy", req: Request{Query: "sourdugh"}, top: "recipes/Sourdough Bread.md", fuzzy: true},
		{name: "fuzzy 2 edits", req: Request{Query: "migrasion"}, set: []string{"projects/Alpha/Plan.md", "projects/Beta/Notes.md"}, fuzzy: true},
		{name: "no fuzzy for short", req: Request{Query: "rey"}, top: ""},
		{name: "no fuzzy on the first letter", req: Request{Query: "tourdough"}, top: ""},
		{name: "cjk japanese", req: Request{Query: "東京タワー"}, top: "日本/東京.md"},
		{name: "cjk chinese", req: Request{Query: "神经网络"}, top: "中文/机器学习.md"},
		{name: "cjk phrase", req: Request{Query: `"深度学习"`}, set: []string{"中文/机器学习.md"}},
		// A question written without spaces: ranked by its pairs of
		// characters, most of which cross words no note holds.
		{name: "cjk question", req: Request{Query: "深度学习怎么使用神经网络"}, top: "中文/机器学习.md"},
		{name: "cjk question one pair is not enough", req: Request{Query: "东京学习方法论"}, top: ""},
		{name: "trash never found", req: Request{Query: "old"}, top: ""},
		{name: "filter tags", req: Request{Query: "starter", Tags: []string{"#baking"}}, set: []string{"recipes/Sourdough Bread.md"}},
		{name: "filter tags any", req: Request{Tags: []string{"recipe/drink", "project"}},
			set: []string{"projects/Alpha/Plan.md", "projects/Beta/Notes.md", "recipes/Café au lait.md"}},
		{name: "filter folders", req: Request{Query: "starter", Folders: []string{"journal/"}}, set: []string{"journal/2024-03-01.md"}},
		{name: "filter folder not prefix of name", req: Request{Folders: []string{"project"}}, top: ""},
		{name: "negation only", req: Request{Query: "-tag:recipe -tag:project"},
			set: []string{"journal/2024-03-01.md", "people/Jürgen Müller.md", "中文/机器学习.md", "日本/東京.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := search(t, ix, tt.req)
			if res.Fuzzy != tt.fuzzy {
				t.Errorf("Fuzzy = %v, want %v", res.Fuzzy, tt.fuzzy)
			}
			if tt.set != nil {
				if got := sortedPaths(res); !reflect.DeepEqual(got, tt.set) {
					t.Fatalf("results = %v, want %v", got, tt.set)
				}
				if res.Total != len(tt.set) {
					t.Errorf("Total = %d, want %d", res.Total, len(tt.set))
				}
				if got := paths(res); tt.last != "" && got[len(got)-1] != tt.last {
					t.Errorf("results = %v, want %s last", got, tt.last)
				}
				return
			}
			if tt.top == "" {
				if len(res.Results) != 0 {
					t.Fatalf("results = %v, want none", paths(res))
				}
				return
			}
			if len(res.Results) == 0 || res.Results[0].Path != tt.top {
				t.Fatalf("results = %v, want %s first", paths(res), tt.top)
			}
		})
	}
}

func TestSearchResultFields(t *testing.T) {
	dir := writeVault(t, smallVault)
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "journal", "2024-03-01.md"), old, old); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, dir, "")

	res := search(t, ix, Request{Query: "migration billing"})
	if len(res.Results) != 2 || res.Results[0].Path != "projects/Alpha/Plan.md" {
		t.Fatalf("results = %v, want the note with both words first", paths(res))
	}
	r := res.Results[0]
	if r.Title != "Plan" || r.Heading != "Alpha plan > Milestones" || r.Score <= 0 || !reflect.DeepEqual(r.Tags, []string{"project"}) {
		t.Errorf("result = %+v", r)
	}
	if !strings.Contains(r.Snippet, "**billing**") || !strings.Contains(r.Snippet, "**migration**") {
		t.Errorf("snippet = %q, want highlighted terms", r.Snippet)
	}
	if res.TookMs <= 0 {
		t.Errorf("TookMs = %v", res.TookMs)
	}

	// Diacritics: the original spelling is highlighted.
	res = search(t, ix, Request{Query: "muller"})
	if s := res.Results[0].Snippet; !strings.Contains(s, "**Müller**") {
		t.Errorf("snippet = %q, want **Müller**", s)
	}
	// CJK highlight.
	res = search(t, ix, Request{Query: "神经网络"})
	if s := res.Results[0].Snippet; !strings.Contains(s, "**神经网络**") {
		t.Errorf("snippet = %q, want **神经网络**", s)
	}
	// Fuzzy highlight.
	res = search(t, ix, Request{Query: "sourdugh"})
	if s := res.Results[0].Snippet; !strings.Contains(s, "**Sourdough**") && !strings.Contains(s, "**sourdough**") {
		t.Errorf("fuzzy snippet = %q", s)
	}

	// mtime range and filter-only ordering (newest first).
	res = search(t, ix, Request{To: old.Add(time.Second)})
	if got := paths(res); !reflect.DeepEqual(got, []string{"journal/2024-03-01.md"}) {
		t.Errorf("To filter: %v", got)
	}
	if res.Results[0].MTime != old.UnixMilli() {
		t.Errorf("MTime = %d, want %d", res.Results[0].MTime, old.UnixMilli())
	}
	// A range matches notes modified in it or dated in it: the journal
	// note, modified in 2020, is dated 2024-03-01 by its name.
	res = search(t, ix, Request{From: old.Add(time.Second), Query: "starter"})
	if got := sortedPaths(res); !reflect.DeepEqual(got, []string{"journal/2024-03-01.md", "recipes/Rye Crackers.md", "recipes/Sourdough Bread.md"}) {
		t.Errorf("From filter: %v", got)
	}
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.Local)
	res = search(t, ix, Request{From: day, To: day.Add(24*time.Hour - time.Millisecond)})
	if got := paths(res); !reflect.DeepEqual(got, []string{"journal/2024-03-01.md"}) {
		t.Errorf("the day of a daily note: %v", got)
	} else if res.Results[0].Date != day.UnixMilli() || res.Results[0].MTime != old.UnixMilli() {
		t.Errorf("date %d mtime %d, want %d and %d", res.Results[0].Date, res.Results[0].MTime, day.UnixMilli(), old.UnixMilli())
	}
	res = search(t, ix, Request{Query: "path:/", Limit: 100})
	if len(res.Results) != 9 || res.Results[8].Path != "journal/2024-03-01.md" {
		t.Errorf("filter-only results should be newest first, oldest last: %v", paths(res))
	}

	// Limit and Total.
	res = search(t, ix, Request{Query: "tag:recipe", Limit: 2})
	if len(res.Results) != 2 || res.Total != 3 {
		t.Errorf("limit 2: %d results, total %d", len(res.Results), res.Total)
	}

	// A note deleted behind the index's back still yields its result.
	if err := os.Remove(filepath.Join(dir, "people", "Jürgen Müller.md")); err != nil {
		t.Fatal(err)
	}
	res = search(t, ix, Request{Query: "muller"})
	if len(res.Results) != 1 || res.Results[0].Snippet != "" {
		t.Errorf("vanished note: %+v", res.Results)
	}
}

func TestSearchErrors(t *testing.T) {
	ix := openIndex(t, writeVault(t, smallVault), "")
	// Nothing to search for: empty, a lone "-", only stop words or
	// punctuation.
	for _, q := range []string{"", "  ", "-", "the and of", "?!?... ,,, ()", "how do I"} {
		if _, err := ix.Search(context.Background(), Request{Query: q}); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("Search(%q) err = %v, want ErrEmptyQuery", q, err)
		}
	}
	if _, err := ix.Search(context.Background(), Request{Query: "a)"}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("err = %v, want ErrBadQuery", err)
	}
}

func TestTagsAndPaths(t *testing.T) {
	ix := openIndex(t, writeVault(t, smallVault), "")
	tags := map[string]int{}
	for _, tc := range ix.Tags() {
		tags[tc.Tag] = tc.Count
	}
	want := map[string]int{"recipe": 3, "recipe/bread": 1, "recipe/snack": 1, "recipe/drink": 1, "baking": 1, "project": 2}
	if !reflect.DeepEqual(tags, want) {
		t.Errorf("Tags = %v, want %v", tags, want)
	}
	p := ix.Paths()
	if len(p) != 9 || p[0] != "journal/2024-03-01.md" {
		t.Errorf("Paths = %v", p)
	}
	m, ok := ix.Note("recipes/Sourdough Bread.md")
	if !ok || m.Title != "Sourdough Bread" || !reflect.DeepEqual(m.Aliases, []string{"Levain loaf"}) || m.Hash == "" || m.Size == 0 {
		t.Errorf("Note = %+v, %v", m, ok)
	}
}

func TestBuildSnippet(t *testing.T) {
	long := strings.Repeat("filler words here ", 30)
	text := long + "the key phrase is here\n\n  and   more " + long
	i := strings.Index(text, "key")
	s := buildSnippet(text, []span{{i, i + 3}}, 80)
	if !strings.Contains(s, "**key**") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet = %q", s)
	}
	if n := len([]rune(s)); n > 90 {
		t.Errorf("snippet has %d runes", n)
	}
	if strings.Contains(s, "  ") || strings.Contains(s, "\n") {
		t.Errorf("whitespace not collapsed: %q", s)
	}
	if got := buildSnippet("short text", nil, 80); got != "short text" {
		t.Errorf("no spans: %q", got)
	}
	if got := buildSnippet("a b", []span{{0, 1}, {2, 3}}, 80); got != "**a** **b**" {
		t.Errorf("adjacent: %q", got)
	}
}

// FuzzSearch checks that no query string makes Search panic.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{`a "b c" -d tag:#e/f path:g/ file:h OR (i j`, "file:[", "file:*?*", "path:\\", "東京 -\"", "sourdugh*", "\"the\"", "-(-(-x))", "How does the starter work?", "what is the range of sourdough starter", "colour synchronisation organise", "how far", "how does it work"} {
		f.Add(s)
	}
	ix := openIndex(f, writeVault(f, smallVault), "")
	f.Fuzz(func(t *testing.T, q string) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Search(%q) took %v", q, d)
			}
		}()
		_, err := ix.Search(context.Background(), Request{Query: q, Tags: []string{q}, Folders: []string{q}})
		if err != nil && !errors.Is(err, ErrBadQuery) && !errors.Is(err, ErrEmptyQuery) {
			t.Fatalf("Search(%q): %v", q, err)
		}
	})
}

// A huge note is found, and its snippet comes from its first part without
// reading the whole file for every search.
func TestHugeNoteSnippet(t *testing.T) {
	big := "# Log\n\nThe zanzibar marker opens the file.\n\n" + strings.Repeat("# Entry\n\nfiller text about zanzibar and other things.\n\n", 40000)
	dir := writeVault(t, map[string]string{"huge.md": big, "small.md": "# Small\n\nnothing here"})
	ix := openIndex(t, dir, "")
	res := search(t, ix, Request{Query: "zanzibar"})
	if len(res.Results) != 1 || res.Results[0].Path != "huge.md" {
		t.Fatalf("results = %v", paths(res))
	}
	if !strings.Contains(res.Results[0].Snippet, "**zanzibar**") {
		t.Fatalf("snippet = %q", res.Results[0].Snippet)
	}
	if len(big) <= snippetMaxBytes {
		t.Fatal("the note must be larger than the snippet read limit")
	}
}

// With no term to match (a filter-only search), the snippet comes from the
// first chunk with prose, not a lone title heading.
func TestBestChunkWithoutTerms(t *testing.T) {
	c := newChunkCache(1 << 20)
	raw := func(p, s string) *vault.RawNote {
		return &vault.RawNote{Path: p, Content: []byte(s), ModTime: time.Now()}
	}
	chunks := c.chunks(raw("journal/2026-03-12.md", "# Thursday\n\n## Work\nShipped the outbox.\n"), 1500)
	ix := &Index{}
	ch, spans := ix.bestChunk(chunks, nil, false, nil)
	if !strings.Contains(ch.Text, "Shipped") || spans != nil {
		t.Errorf("chunk %d %q", ch.Index, ch.Text)
	}
	only := c.chunks(raw("x.md", "# Title only\n"), 1500)
	if ch, _ := ix.bestChunk(only, nil, false, nil); ch.Index != 0 {
		t.Errorf("a note without prose: chunk %d", ch.Index)
	}
}

// Tokens longer than maxTokenRunes (base64 blobs, compressed drawings) are
// not indexed; the words around them are.
func TestLongTokensAreNotIndexed(t *testing.T) {
	blob := strings.Repeat("QmFzZTY0", 40) // 320 letters and digits, no break
	dir := writeVault(t, map[string]string{
		"Drawing.excalidraw.md": joinLines("# Whiteboard", "Sketch of the greenhouse layout.", "```compressed-json", blob, "```"),
	})
	ix := openIndex(t, dir, "")
	if res := search(t, ix, Request{Query: "greenhouse"}); len(res.Results) != 1 {
		t.Errorf("greenhouse: %v", paths(res))
	}
	if res, err := ix.Search(context.Background(), Request{Query: blob}); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("a query of a blob: %v, %v; want ErrEmptyQuery (it is no word)", res, err)
	}
	if res := search(t, ix, Request{Query: "greenhouse " + blob}); len(res.Results) != 1 {
		t.Errorf("the blob is ignored, the word found: %v", paths(res))
	}
	if toks := ix.textAn.Analyze([]byte("ok " + blob)); len(toks) != 1 {
		t.Errorf("analyzer kept %d tokens, want 1", len(toks))
	}
}

// Queries people paste or models write: long, repetitive, lists of words.
// Each gets results or a clear error (the time they take is measured by
// BenchmarkSearchBadInput).
func TestHugeQueries(t *testing.T) {
	ix := openIndex(t, writeVault(t, smallVault), "")
	var distinct []string
	for i := range 500 {
		distinct = append(distinct, fmt.Sprintf("word%03d", i))
	}
	distinct[250] = "sourdough"
	// A pasted page is refused with a clear error (MaxQueryBytes,
	// MaxQueryTerms), not searched for.
	for name, q := range map[string]string{
		"10 KB of one word":   strings.Repeat("starter ", 1250),
		"500 distinct words":  strings.Join(distinct, " "),
		"500 words joined OR": strings.Join(distinct, " OR "),
	} {
		if _, err := ix.Search(context.Background(), Request{Query: q}); !errors.Is(err, ErrQueryTooLarge) || !errors.Is(err, ErrBadQuery) {
			t.Errorf("%s: %v, want ErrQueryTooLarge", name, err)
		}
	}
	// Within the limits: only the most distinctive words are searched for;
	// the rest cannot slow the search down.
	if res := search(t, ix, Request{Query: strings.Join(distinct[220:284], " ")}); len(res.Results) == 0 {
		t.Error("64 words, one of them in a note: no results")
	}
	rq := ix.newRankQuery(strings.Fields(strings.Join(distinct, " ")), false)
	if len(rq.words) > maxQueryTokens {
		t.Errorf("%d words kept of 500, want at most %d", len(rq.words), maxQueryTokens)
	}
	// More phrases and filters than maxFilters cannot pass the word limit;
	// checkSize still bounds a parsed query on its own.
	q, err := ParseQuery(strings.Repeat(`"rye" `, maxFilters))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSize(And{Items: []Node{q.Root, Phrase{Text: "flour"}}}); !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "too many") {
		t.Errorf("%d phrases: %v, want a clear ErrBadQuery", maxFilters+1, err)
	}
}

// Request.Excludes leaves notes out of one search, with or without a
// query, and the index keeps them; a bad pattern is a query error.
func TestSearchExcludes(t *testing.T) {
	ix := openIndex(t, writeVault(t, smallVault), "")
	paths := func(req Request) []string {
		t.Helper()
		res, err := ix.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Results {
			out = append(out, r.Path)
		}
		return out
	}
	for _, tt := range []struct {
		req  Request
		want []string
	}{
		{Request{Query: "starter", Excludes: []string{"recipes/**"}}, []string{"journal/2024-03-01.md"}},
		{Request{Query: "starter", Excludes: []string{"Sourdough*.md", "journal/"}}, []string{"recipes/Rye Crackers.md"}},
		{Request{Folders: []string{"projects"}, Excludes: []string{"Beta/"}}, []string{"projects/Alpha/Plan.md"}},
	} {
		if got := paths(tt.req); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.req, got, tt.want)
		}
	}
	if got := paths(Request{Query: "starter"}); len(got) != 3 || ix.Count() != 9 {
		t.Errorf("after searches with excludes: %v, %d notes in the index", got, ix.Count())
	}
	if _, err := ix.Search(context.Background(), Request{Query: "x", Excludes: []string{"[bad"}}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("a bad pattern: %v", err)
	}
}

// TestRequestWordsWeighLittle: "summarize my notes on TCP" asks for the
// note about TCP; the words that frame the request do not make a note
// that says "summary" and "notes" more relevant. But in "create a new
// note" the note is what the question is about.
func TestRequestWordsWeighLittle(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"net/Tcp.md":                joinLines("# TCP", "Point-to-point, connection-oriented, reliable byte stream."),
		"Week 3 notes summary.md":   joinLines("# Week 3 notes summary", "A summary of my notes: TCP, UDP and routing."),
		"Explained/Note taking.md":  joinLines("# Note taking", "How I summarize and explain my notes."),
		"Create your first note.md": joinLines("# Create your first note", "To create a new note, press Ctrl+N."),
		"Create a base.md":          joinLines("# Create a base", "Create new base: create new views, create new filters, create new columns."),
	}), "")
	wantFirst(t, ix, 3,
		[2]string{"summarize my notes on TCP", "net/Tcp.md"},
		[2]string{"explain my note about tcp", "net/Tcp.md"},
		[2]string{"how do I create a new note", "Create your first note.md"},
	)
}

// TestNameSaidInWordsWithAnArticle: "add a command" names addCommand as
// "add command" does; another stop word between parts the words.
func TestNameSaidInWordsWithAnArticle(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"API/addCommand.md":     joinLines("# addCommand", "Registers a command globally."),
		"Guides/Ribbon.md":      joinLines("# Ribbon", "Add an icon to the ribbon; it can run a command, add a button or add a menu."),
		"Guides/Add it.md":      joinLines("# Add it", "Add things. Add more things. Add a command later."),
		"Guides/Command bar.md": joinLines("# Command bar", "Add a command bar to the editor."),
	}), "")
	wantFirst(t, ix, 4,
		[2]string{"how do I add a command", "API/addCommand.md"},
		[2]string{"add the command", "API/addCommand.md"},
	)
}

// TestHowQuestionFraming: the words that frame a question of "how" ("how
// does X work", "how far can I ...") are not searched for; where they say
// what the question is about ("how do I find remote work"), they are.
func TestHowQuestionFraming(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"Rules/Advantage.md": joinLines("# Advantage", "Roll two d20 and take the higher result."),
		"Items/Breastplate.md": joinLines("# Breastplate",
			"A gold motif is worked into its design; it grants advantage on saves against breath."),
		"Items/Shield.md":  joinLines("# Shield", "Worked steel that grants advantage on checks; it works well."),
		"Spells/Jump.md":   joinLines("# Jump", "You can triple a creature's jump distance."),
		"People/Far.md":    joinLines("# Far Darrig", "A far darrig lives far from towns and can jump."),
		"Jobs/Remote.md":   joinLines("# Remote work", "Find remote work on job boards."),
		"Jobs/Find.md":     joinLines("# Finding things", "Find your keys; remote controls hide under cushions."),
		"Jobs/Anything.md": joinLines("# Anything", "Work is work."),
	}), "")
	wantFirst(t, ix, 4,
		[2]string{"how does advantage work", "Rules/Advantage.md"},
		[2]string{"How does advantage work?", "Rules/Advantage.md"},
		[2]string{"how far can I jump", "Spells/Jump.md"},
		[2]string{"how do I find remote work", "Jobs/Remote.md"},
	)
	// A question that is nothing but its frame is still searched for.
	res, err := ix.Search(context.Background(), Request{Query: "how does it work", Limit: 4})
	if err != nil || len(res.Results) == 0 {
		t.Errorf("how does it work: %v, %v", res, err)
	}
}

// TestQuestionNamesANote: a question that names a note by its whole title
// among other words ("the range of magic missile") ranks that note above
// notes whose titles hold the name and more; a list of keywords does not.
func TestQuestionNamesANote(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"Spells/Magic Missile.md": joinLines("# Magic Missile", "Three darts of magical force. Range: 120 feet."),
		"Spells/Jim's Magic Missile.md": joinLines("# Jim's Magic Missile",
			"A magic missile of Jim's: each missile flies within range; a missile that misses at range explodes. Range is 120 feet for every magic missile."),
		"Items/Wand.md": joinLines("# Wand", "A wand of magic."),
	}), "")
	wantFirst(t, ix, 4,
		[2]string{"what is the range of magic missile", "Spells/Magic Missile.md"},
		[2]string{"What is the range of Magic Missile?", "Spells/Magic Missile.md"},
		[2]string{"range magic missile", "Spells/Jim's Magic Missile.md"},
	)
}

// TestRequestVerbIsNotSearchedFor: the verb that opens a request ("list
// the ...", "show me ...") is not searched for; "list comprehension" is
// about lists.
func TestRequestVerbIsNotSearchedFor(t *testing.T) {
	ix := openIndex(t, writeVault(t, map[string]string{
		"Sec/Fuzzing.md":               joinLines("# Fuzzing", "Tools for fuzzing: AFL, libFuzzer."),
		"Sec/Intruder.md":              joinLines("# Intruder", "Payload lists: list the tools' payloads, list the fuzzing words, list everything."),
		"Python/List comprehension.md": joinLines("# List comprehension", "Build a list in one expression."),
		"Python/Set comprehension.md":  joinLines("# Set comprehension", "Build a set in one expression; a comprehension of sets."),
	}), "")
	wantFirst(t, ix, 4,
		[2]string{"list the tools for fuzzing", "Sec/Fuzzing.md"},
		[2]string{"list comprehension in one expression", "Python/List comprehension.md"},
	)
}
