package eval

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJudgeAndSummarize(t *testing.T) {
	qs := []Question{
		{Q: "a", Expect: []string{"x.md", "y.md"}, Kind: "keyword"},
		{Q: "b", Expect: []string{"z.md"}, Kind: "typo"},
		{Q: "c", Expect: []string{"w.md"}, Kind: "keyword"},
	}
	outs := []Outcome{
		Judge(qs[0], []string{"x.md", "q.md", "y.md"}),                                    // rank 1, both found
		Judge(qs[1], []string{"q.md", "r.md", "z.md"}),                                    // rank 3
		Judge(qs[2], []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "w.md"}), // beyond K
	}
	if outs[0].Rank != 1 || outs[0].Found != 2 || outs[1].Rank != 3 || outs[2].Rank != 0 || outs[2].Found != 0 {
		t.Fatalf("outcomes %+v", outs)
	}
	s := Summarize(qs, outs, nil)
	if s.N != 3 || s.Top1 != 1 || math.Abs(s.MRR-(1+1.0/3)/3) > 1e-9 || math.Abs(s.Recall-(1+1+0)/3.0) > 1e-9 {
		t.Fatalf("summary %+v", s)
	}
	kinds, by := Kinds(qs)
	if strings.Join(kinds, ",") != "keyword,typo" || len(by["keyword"]) != 2 {
		t.Fatalf("kinds %v %v", kinds, by)
	}
	if k := Summarize(qs, outs, by["keyword"]); k.N != 2 || k.MRR != 0.5 {
		t.Fatalf("keyword summary %+v", k)
	}
	var b bytes.Buffer
	Report(&b, qs, []*Engine{{Name: "a", Outcomes: outs}, {Name: "b", Outcomes: outs}}, true)
	for _, want := range []string{"| a | 0.444 | 1 | 0.667 |", "| keyword | 2 | 0.50 / 1 / 0.50 |", "MRR@10 1.00x, top-1 +0", `"c"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestLoadQuestions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if qs, err := LoadQuestions(write("ok.json", `[{"q":"x","expect":["a.md"]}]`)); err != nil || len(qs) != 1 {
		t.Fatalf("%v %v", qs, err)
	}
	for name, s := range map[string]string{"empty.json": `[]`, "noexpect.json": `[{"q":"x"}]`, "bad.json": `{`} {
		if _, err := LoadQuestions(write(name, s)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The baseline ranks by bm25 with the title weighted 10: a note named
// after the word beats one that only mentions it, and frontmatter is not
// searched.
func TestFTS5(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Sourdough.md":        "# Bread\nflour and water\n",
		"notes/Kitchen.md":    "---\ntags: zebra\n---\nI keep the sourdough starter in the fridge.\n",
		".obsidian/hidden.md": "sourdough sourdough",
	}
	for p, c := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, n, err := FTS5(context.Background(), dir, []string{"sourdough", "zebra", "???"})
	if errors.Is(err, ErrNoPython) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("indexed %d notes, want 2 (dot-folders skipped)", n)
	}
	if strings.Join(res[0], ",") != "Sourdough.md,notes/Kitchen.md" {
		t.Errorf("sourdough: %v", res[0])
	}
	if len(res[1]) != 0 || len(res[2]) != 0 {
		t.Errorf("frontmatter or punctuation matched: %v %v", res[1], res[2])
	}
}

func TestRunVaultAgent(t *testing.T) {
	qs := []Question{
		{Q: "how do I keep my sourdough starter alive", Expect: []string{"recipes/Sourdough Starter.md"}, Kind: "paraphrase"},
		{Q: "zzyzx", Expect: []string{"Home.md"}},
	}
	e, stats, err := RunVaultAgent(context.Background(), Options{Vault: filepath.Join("..", "testdata", "vault"), Index: t.TempDir()}, qs)
	if err != nil {
		t.Fatal(err)
	}
	if !stats.Rebuilt && stats.Added == 0 {
		t.Errorf("stats %+v: the new index was not built", stats)
	}
	if e.Outcomes[0].Rank != 1 || e.Outcomes[1].Rank != 0 || len(e.Millis) != 2 {
		t.Errorf("outcomes %+v", e.Outcomes)
	}
}

// With an embedding model the answer check runs twice: over lexical
// search, and over hybrid search as `vault-agent ask` does with a model.
func TestRunAsksWithModel(t *testing.T) {
	qs := []Question{{Q: "how do I keep my sourdough starter alive", Expect: []string{"recipes/Sourdough Starter.md"}, Kind: "paraphrase"}}
	es, _, err := RunVaultAgentModes(context.Background(), Options{Vault: filepath.Join("..", "testdata", "vault"), Index: t.TempDir(), Embed: "words", Ask: true}, qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Asks == nil || es[1].Asks == nil || es[2].Asks != nil {
		t.Fatalf("engines %d, answer checks: lexical %v, hybrid %v, semantic %v", len(es), es[0].Asks != nil, es[1].Asks != nil, len(es) > 2 && es[2].Asks != nil)
	}
	for _, e := range es[:2] {
		if o := e.Asks.Outcomes[0]; !o.Hit || o.Err != "" {
			t.Errorf("%s: answer %+v, want one citing the starter note", e.Name, o)
		}
	}
}

type fakeLookup map[string]string

func (f fakeLookup) Lookup(name string) (string, error) {
	if p, ok := f[name]; ok {
		return p, nil
	}
	return "", errors.New("not found")
}

func TestJudgeAnswer(t *testing.T) {
	q := Question{Q: "x", Expect: []string{"b/Beta.md"}}
	ix := fakeLookup{"Alpha": "Alpha.md", "Beta": "b/Beta.md"}
	if got := Citations("- a [[Alpha]]\n- b [[Beta#Use|the beta]] [[Alpha]]"); strings.Join(got, ",") != "Alpha,Beta" {
		t.Fatalf("citations %v", got)
	}
	if o := JudgeAnswer(q, "From [[Alpha]] and [[Beta#Use]].", ix); !o.Hit || len(o.Cited) != 2 {
		t.Errorf("outcome %+v, want a hit citing 2", o)
	}
	if o := JudgeAnswer(q, "Only [[Alpha]] and [[Gamma]].", ix); o.Hit || len(o.Cited) != 1 {
		t.Errorf("outcome %+v, want a miss citing 1", o)
	}
	var b bytes.Buffer
	Report(&b, []Question{q}, []*Engine{{Name: "a", Outcomes: []Outcome{{}}, Asks: &Asks{Outcomes: []AskOutcome{{Hit: true}}, Millis: []float64{5}}}}, false)
	if !strings.Contains(b.String(), "1 of 1 (100%)") {
		t.Errorf("report lacks the answer check:\n%s", b.String())
	}
}

// The first cited line and the share of cited lines are judged line by
// line; the Sources list and a See also line are not cited lines.
func TestJudgeAnswerLines(t *testing.T) {
	q := Question{Q: "x", Expect: []string{"b/Beta.md"}, Kind: "keyword"}
	ix := fakeLookup{"Alpha": "Alpha.md", "Beta": "b/Beta.md", "Gamma": "Gamma.md"}
	tests := []struct {
		name            string
		answer          string
		first, hit      bool
		lines, expected int
	}{
		{"expected first", "Beta says so [[Beta#Use]].\n\n- more [[Alpha]]\n\nSources: [[Beta]], [[Alpha]]", true, true, 2, 1},
		{"expected later", "Alpha says so [[Alpha]].\n- and [[Beta]]\n- and [[Gamma]]\n\nSources: [[Alpha]], [[Beta]], [[Gamma]]", false, true, 3, 1},
		{"only in sources", "Alpha says so [[Alpha]].\n\nSources: [[Beta]]", false, true, 1, 0},
		{"no citation", "Nothing here.", false, false, 0, 0},
		{"see also line", "Gamma says [[Gamma]].\n\nSee also [[Alpha]] and [[Beta]].", false, true, 1, 0},
		{"see also first", "See also [[Beta]].\n\nAlpha says [[Alpha]].", false, true, 1, 0},
		{"code quoted", "Beta says [[Beta]]:\n\n```md\n![[Gamma]]\n```\n\n- and [[Alpha]]", true, true, 2, 1},
		{"code only", "```\n[[Beta]]\n```", false, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := JudgeAnswer(q, tt.answer, ix)
			if o.FirstHit != tt.first || o.Hit != tt.hit || o.Lines != tt.lines || o.Expected != tt.expected {
				t.Errorf("outcome first %v hit %v lines %d expected %d, want %v %v %d %d", o.FirstHit, o.Hit, o.Lines, o.Expected, tt.first, tt.hit, tt.lines, tt.expected)
			}
		})
	}
	a := &Asks{Millis: []float64{1, 2}, Outcomes: []AskOutcome{
		JudgeAnswer(q, tests[0].answer, ix), JudgeAnswer(q, tests[1].answer, ix)}}
	s := a.Summarize(nil)
	if s.N != 2 || s.FirstHits != 1 || s.Hits != 2 || s.Lines != 5 || s.Expected != 2 || math.Abs(s.LineShare()-0.4) > 1e-9 {
		t.Errorf("summary %+v", s)
	}
	var b bytes.Buffer
	ReportAsks(&b, []Question{q, q}, "a", a)
	for _, want := range []string{"first cited line cites an expected note in 1 of 2", "40% of cited lines", "| keyword | 2 | 1 | 40% (2/5) | 2 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
