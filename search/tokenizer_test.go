package search

import (
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
)

// bleveAnalyzer is the text analyzer as built from bleve's own unicode
// tokenizer and porter stemmer, which wordTokenizer and stemFilter replace.
func bleveAnalyzer(t testing.TB) analysis.Analyzer {
	t.Helper()
	im := mapping.NewIndexMapping()
	if err := im.AddCustomTokenFilter(lengthFilter, map[string]interface{}{"type": "length", "max": float64(maxTokenRunes)}); err != nil {
		t.Fatal(err)
	}
	if err := im.AddCustomAnalyzer("old", map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     unicodetok.Name,
		"token_filters": []interface{}{lengthFilter, en.PossessiveName, lowercase.Name, foldFilter, en.StopName, porter.Name},
	}); err != nil {
		t.Fatal(err)
	}
	a := im.AnalyzerNamed("old")
	if a == nil {
		t.Fatal("no analyzer")
	}
	return a
}

func textAnalyzerOf(t testing.TB) analysis.Analyzer {
	t.Helper()
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	return m.AnalyzerNamed(textAnalyzer)
}

// sameTokens fails unless both analyzers produce the same tokens of text.
func sameTokens(t testing.TB, old, cur analysis.Analyzer, text string) {
	t.Helper()
	want, got := old.Analyze([]byte(text)), cur.Analyze([]byte(text))
	if len(want) != len(got) {
		t.Fatalf("%.200q: %d tokens, bleve's analyzer %d\n got  %v\n want %v", text, len(got), len(want), terms(got), terms(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if string(w.Term) != string(g.Term) || w.Start != g.Start || w.End != g.End || w.Position != g.Position {
			t.Fatalf("%.200q: token %d is %q %d-%d @%d, bleve's analyzer %q %d-%d @%d", text, i,
				g.Term, g.Start, g.End, g.Position, w.Term, w.Start, w.End, w.Position)
		}
	}
}

func terms(ts analysis.TokenStream) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t.Term)
	}
	return out
}

func TestWordTokenizerCases(t *testing.T) {
	old, cur := bleveAnalyzer(t), textAnalyzerOf(t)
	for _, s := range []string{
		"", "a", "_", "___", "_1", "1_", "a_", "_a", "a:b", "1:2", "1,2", "a,b", "1;2", "a'b", "1'2",
		"a.b", "1.2", "a.1", "1.a", "a1", "1a", "a::b", "e.g.", "3.14.15", "a_.b", "a._b", ".5", "x'", "'x",
		"don't stop believing", "John's book", "Get-ChildItem -Path C:\\Windows\\System32 | Select-Object Name",
		"http://example.com/a_b?c=d&e=f#g", "café Müller straße naïve", "x \u0301abc", "(\u0301abc", "a\u0301b",
		"東京タワー is tall", "한국어 텍스트", "emoji 🎉 party", "tab\tand\nnewlines\r\nhere", "don’t",
		"1,000,000.50 dollars; 3:45pm", "v1.2.3-beta+build.5", "snake_case_name CamelCaseName",
		strings.Repeat("a", 70) + " long", "it's the stemming of running runners",
	} {
		sameTokens(t, old, cur, s)
	}
}

// TestWordTokenizerRandom compares the two on random text made of the
// characters where word breaks are decided.
func TestWordTokenizerRandom(t *testing.T) {
	old, cur := bleveAnalyzer(t), textAnalyzerOf(t)
	alphabet := []string{"a", "b", "Z", "e", "s", "0", "7", "_", ":", ".", "'", ",", ";", " ", "\n", "-", "(", "/",
		"é", "\u0301", "ß", "日", "本", "カ", "한", "\u200d", "\u00ad", "’", "🎉", "\u00a0", "ing", "ed", "the", "ation"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.Intn(24); n >= 0; n-- {
			b.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		sameTokens(t, old, cur, b.String())
	}
}

// TestWordTokenizerNotes compares the two on the repository's markdown.
func TestWordTokenizerNotes(t *testing.T) {
	old, cur := bleveAnalyzer(t), textAnalyzerOf(t)
	n := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == ".bench") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sameTokens(t, old, cur, string(b))
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("only %d notes compared", n)
	}
}

func FuzzWordTokenizer(f *testing.F) {
	old, cur := bleveAnalyzer(f), textAnalyzerOf(f)
	for _, s := range []string{"a.b c", "1,2;3", "don't", "café:x", "日本 a_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameTokens(t, old, cur, s)
	})
}
