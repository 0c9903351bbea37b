package semantic

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
)

func paths(rs []search.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Path
	}
	return out
}

// A filtered vault: tags, folders and dates.
func filterVault(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "bread/starter.md", "---\ntags: [baking]\ndate: 2024-01-10\n---\n# Starter\n\nFeed the sourdough starter with flour and water every day.\n")
	writeFile(t, dir, "bread/loaf.md", "---\ntags: [baking]\ndate: 2024-03-10\n---\n# Loaf\n\nShape the sourdough loaf and bake it hot.\n")
	writeFile(t, dir, "work/starter-kit.md", "---\ntags: [work]\ndate: 2024-01-12\n---\n# Starter kit\n\nThe project starter kit for new hires.\n")
	writeFile(t, dir, "garden/compost.md", "---\ntags: [garden]\ndate: 2024-01-11\n---\n# Compost\n\nTurn the compost heap; feed it kitchen scraps and water.\n")
	return dir
}

func TestFiltersApplyInEveryMode(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, map[string]string{"leaven": "sourdough"}))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	jan := func(r *search.Request) {
		r.From = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		r.To = time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC)
	}
	filters := []struct {
		name string
		set  func(*search.Request)
		ok   func(p string) bool
	}{
		{"tags", func(r *search.Request) { r.Tags = []string{"baking"} }, func(p string) bool { return strings.HasPrefix(p, "bread/") }},
		{"folders", func(r *search.Request) { r.Folders = []string{"work"} }, func(p string) bool { return strings.HasPrefix(p, "work/") }},
		{"time", jan, func(p string) bool { return p != "bread/loaf.md" }},
		{"query tag", func(r *search.Request) { r.Query += " tag:#garden" }, func(p string) bool { return p == "garden/compost.md" }},
		{"query path", func(r *search.Request) { r.Query += " path:bread/" }, func(p string) bool { return strings.HasPrefix(p, "bread/") }},
		{"exclusion", func(r *search.Request) { r.Query += " -kit" }, func(p string) bool { return p != "work/starter-kit.md" }},
		{"excludes", func(r *search.Request) { r.Excludes = []string{"bread/"} }, func(p string) bool { return !strings.HasPrefix(p, "bread/") }},
	}
	for _, mode := range []string{search.ModeLexical, search.ModeSemantic, search.ModeHybrid} {
		for _, fl := range filters {
			t.Run(mode+"/"+fl.name, func(t *testing.T) {
				req := search.Request{Query: "starter feed water", Mode: mode, Limit: 10}
				fl.set(&req)
				res, err := e.Search(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Results) == 0 {
					t.Fatal("no result")
				}
				for _, r := range res.Results {
					if !fl.ok(r.Path) {
						t.Errorf("%s passed the filter: %v", r.Path, paths(res.Results))
					}
				}
			})
		}
	}
}

// A word no note uses is found through the vectors (the embedder maps
// "leaven" onto "sourdough"), in semantic and hybrid mode, not lexical.
func TestSemanticFindsWhatWordsMiss(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, map[string]string{"leaven": "sourdough"}))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	for mode, want := range map[string]bool{search.ModeLexical: false, search.ModeSemantic: true, search.ModeHybrid: true, "": true} {
		res, err := e.Search(context.Background(), search.Request{Query: "leaven", Mode: mode, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(res.Results, func(r search.Result) bool { return strings.HasPrefix(r.Path, "bread/") })
		if got != want {
			t.Errorf("mode %q: found the sourdough notes %v, want %v (%v)", mode, got, want, paths(res.Results))
		}
	}
	if _, err := e.Search(context.Background(), search.Request{Query: "x", Mode: "fuzzy"}); err == nil {
		t.Error("an unknown mode is accepted")
	}
}

func TestRelated(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	res, err := e.Related(context.Background(), "Starter", 2)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(res.Results)
	if len(got) != 2 || slices.Contains(got, "bread/starter.md") {
		t.Errorf("related to the starter: %v", got)
	}
	if _, err := e.Related(context.Background(), "no such note", 2); err == nil {
		t.Error("an unknown note has related notes")
	}
}

func TestFreeText(t *testing.T) {
	if got := freeText(`"rising agent" OR yeast -rye tag:#baking path:bread/ file:x`); got != "rising agent yeast" {
		t.Errorf("freeText = %q", got)
	}
}

// Vectors without signal get no weight in hybrid search, whatever the
// lengths of the notes; vectors that agree with the words get some.
func TestWeightIgnoresNoise(t *testing.T) {
	dir := t.TempDir()
	words := strings.Fields("apple river stone cloud engine garden piano window forest candle rocket silver violin harbor meadow lantern")
	for i := range 120 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for s := range 1 + i%7 { // 1 to 7 sections: long and short notes
			fmt.Fprintf(&b, "## Part %d\n\n%s %s %s\n\n", s, words[(i+s)%len(words)], words[(i*3+s)%len(words)], words[(i*7+s*5)%len(words)])
		}
		writeFile(t, dir, fmt.Sprintf("n%03d.md", i), b.String())
	}
	ix := openIndex(t, dir)
	for _, c := range []struct {
		name   string
		fn     llmtest.EmbedFunc
		weighs func(n int) bool
	}{
		{"random", llmtest.RandomVectors(dims), func(n int) bool { return n <= 1 }},
		{"words", llmtest.WordVectors(dims, nil), func(n int) bool { return n >= 10 }},
	} {
		f := newFixture(t, c.fn)
		e := f.open(t, ix, f.embedder(t, c.name, 64), "", 64)
		syncOK(t, e)
		weighed := 0
		for i, w := range words {
			q := w + " " + words[(i+5)%len(words)]
			lex, err := ix.Search(context.Background(), search.Request{Query: q, Limit: lexDepth})
			if err != nil {
				t.Fatal(err)
			}
			qv, err := e.queryVector(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			if e.weight(e.rank(qv, nil, -1, semDepth, true), lex.Results) > 0 {
				weighed++
			}
		}
		if !c.weighs(weighed) {
			t.Errorf("%s vectors: %d of %d queries gave the vectors weight", c.name, weighed, len(words))
		}
	}
}

// A query the embedder cannot embed: hybrid answers lexically (and logs
// why), semantic fails with the reason.
func TestHybridFallsBackWhenTheQueryCannotBeEmbedded(t *testing.T) {
	dir := filterVault(t)
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	f.srv.FailNext(llmtest.Reply{Status: 400, Message: "model unloaded"})
	res, err := e.Search(context.Background(), search.Request{Query: "compost"})
	if err != nil || len(res.Results) == 0 || res.Results[0].Path != "garden/compost.md" {
		t.Fatalf("hybrid: %v %+v", err, res)
	}
	if !strings.Contains(f.logs(), "hybrid search without vectors") {
		t.Errorf("no warning: %s", f.logs())
	}
	f.srv.FailNext(llmtest.Reply{Status: 400, Message: "model unloaded"})
	if _, err := e.Search(context.Background(), search.Request{Query: "compost", Mode: search.ModeSemantic}); err == nil || !strings.Contains(err.Error(), "model unloaded") {
		t.Errorf("semantic: %v", err)
	}
}

// Related notes have snippets as search's: what a reader sees, without
// the markdown of links, embeds, emphasis and callouts.
func TestRelatedSnippetsAreClean(t *testing.T) {
	dir := t.TempDir()
	body := "# Editing\n\n> [!tip]- Pen\n> Open **[[Settings]]** and click ![[lucide-pen-line.svg#icon]] to edit the [[Note|note]] in place.\n"
	writeFile(t, dir, "a.md", body)
	writeFile(t, dir, "b.md", body+"\nAnother line about editing.\n")
	writeFile(t, dir, "c.md", "# Other\n\nSomething else entirely.\n")
	f := newFixture(t, llmtest.WordVectors(dims, nil))
	e := f.open(t, openIndex(t, dir), f.embedder(t, "m1", 64), "", 64)
	syncOK(t, e)
	res, err := e.Related(context.Background(), "a", 2)
	if err != nil || len(res.Results) == 0 {
		t.Fatalf("related: %v %+v", err, res)
	}
	for _, r := range res.Results {
		for _, raw := range []string{"[[", "]]", "![[", "**", "[!tip]", "> "} {
			if strings.Contains(r.Snippet, raw) {
				t.Errorf("%s: snippet %q holds %q", r.Path, r.Snippet, raw)
			}
		}
		if r.Path == "b.md" && !strings.Contains(r.Snippet, "Open Settings and click to edit the note in place") {
			t.Errorf("b.md: snippet %q, want the text as read", r.Snippet)
		}
	}
}
