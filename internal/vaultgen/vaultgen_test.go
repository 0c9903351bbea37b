package vaultgen

import (
	"bytes"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type file struct {
	data  []byte
	mtime int64
}

// readTree returns every regular file below dir keyed by slash path.
func readTree(t *testing.T, dir string) map[string]file {
	t.Helper()
	out := map[string]file{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = file{data: data, mtime: info.ModTime().UnixNano()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func notesOf(tree map[string]file) map[string][]byte {
	out := map[string][]byte{}
	for p, f := range tree {
		if strings.HasSuffix(p, ".md") && !strings.HasPrefix(p, ".") {
			out[p] = f.data
		}
	}
	return out
}

func generate(t *testing.T, o Options) (string, Stats) {
	t.Helper()
	dir := t.TempDir()
	st, err := Generate(dir, o)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return dir, st
}

func TestGenerateDeterministic(t *testing.T) {
	a, _ := generate(t, Options{Notes: 300, Seed: 7, Workers: 1})
	b, _ := generate(t, Options{Notes: 300, Seed: 7, Workers: 4})
	c, _ := generate(t, Options{Notes: 300, Seed: 8})
	ta, tb, tc := readTree(t, a), readTree(t, b), readTree(t, c)
	if len(ta) != len(tb) {
		t.Fatalf("same seed: %d files vs %d", len(ta), len(tb))
	}
	for p, fa := range ta {
		fb, ok := tb[p]
		switch {
		case !ok:
			t.Fatalf("same seed: %s missing from second vault", p)
		case !bytes.Equal(fa.data, fb.data):
			t.Fatalf("same seed: %s differs", p)
		case fa.mtime != fb.mtime:
			t.Fatalf("same seed: mtime of %s differs", p)
		}
	}
	same := 0
	for p, fa := range ta {
		if fc, ok := tc[p]; ok && bytes.Equal(fa.data, fc.data) {
			same++
		}
	}
	if same > 1 { // .obsidian/app.json is constant
		t.Errorf("different seeds produced %d identical files", same)
	}
}

func TestGenerateCountAndSize(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantAvg int
	}{
		{"defaults", Options{Notes: 400, Seed: 1}, 6000},
		{"small notes", Options{Notes: 300, Seed: 2, AvgSize: 1500}, 1500},
		{"large notes", Options{Notes: 60, Seed: 3, AvgSize: 20000}, 20000},
		{"single note", Options{Notes: 1, Seed: 4, AvgSize: 3000}, 0},
		{"no daily notes", Options{Notes: 50, Seed: 5, DailyFraction: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, st := generate(t, tt.opts)
			notes := notesOf(readTree(t, dir))
			if len(notes) != tt.opts.Notes || st.Notes != tt.opts.Notes || len(st.Paths) != tt.opts.Notes {
				t.Fatalf("notes on disk %d, Stats.Notes %d, Paths %d; want %d", len(notes), st.Notes, len(st.Paths), tt.opts.Notes)
			}
			var total int64
			daily := 0
			for p, data := range notes {
				total += int64(len(data))
				if regexp.MustCompile(`^journal/\d{4}/\d{4}-\d\d-\d\d\.md$`).MatchString(p) {
					daily++
				}
			}
			if total != st.Bytes {
				t.Errorf("Stats.Bytes %d, on disk %d", st.Bytes, total)
			}
			if daily != st.DailyNotes {
				t.Errorf("Stats.DailyNotes %d, on disk %d", st.DailyNotes, daily)
			}
			if tt.opts.DailyFraction < 0 && daily != 0 {
				t.Errorf("DailyFraction<0 but %d daily notes", daily)
			}
			if tt.wantAvg > 0 {
				avg := float64(total) / float64(len(notes))
				if avg < 0.85*float64(tt.wantAvg) || avg > 1.15*float64(tt.wantAvg) {
					t.Errorf("average size %.0f bytes, want %d ±15%%", avg, tt.wantAvg)
				}
			}
		})
	}
}

var (
	wikiRe = regexp.MustCompile(`!?\[\[([^\]|#]+)(#[^\]|]*)?(\|[^\]]*)?\]\]`)
	mdRe   = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+\.md)\)`)
)

func TestGenerateLinksResolve(t *testing.T) {
	dir, st := generate(t, Options{Notes: 500, Seed: 11})
	notes := notesOf(readTree(t, dir))
	byName := map[string]bool{}
	for p := range notes {
		byName[strings.ToLower(strings.TrimSuffix(path.Base(p), ".md"))] = true
		byName[strings.ToLower(strings.TrimSuffix(p, ".md"))] = true
	}
	var total, ok int
	for p, data := range notes {
		for _, m := range wikiRe.FindAllSubmatch(data, -1) {
			total++
			if byName[strings.ToLower(string(m[1]))] {
				ok++
			}
		}
		for _, m := range mdRe.FindAllSubmatch(data, -1) {
			total++
			target, err := url.PathUnescape(string(m[1]))
			if err != nil {
				t.Errorf("%s: bad markdown link %q", p, m[1])
				continue
			}
			if _, found := notes[path.Join(path.Dir(p), target)]; found {
				ok++
			}
		}
	}
	if total < 5*len(notes) {
		t.Errorf("only %d links in %d notes", total, len(notes))
	}
	if total != st.Links {
		t.Errorf("found %d links, Stats.Links %d", total, st.Links)
	}
	if frac := float64(ok) / float64(total); frac < 0.9 {
		t.Errorf("%.1f%% of links resolve, want >= 90%%", 100*frac)
	}
	if ok != total-st.BrokenLinks {
		t.Errorf("%d links resolve, Stats says %d of %d are broken", ok, st.BrokenLinks, total)
	}
}

func TestGenerateMarkdownFeatures(t *testing.T) {
	dir, _ := generate(t, Options{Notes: 400, Seed: 21})
	notes := notesOf(readTree(t, dir))
	checks := []struct {
		name string
		re   *regexp.Regexp
		min  int // notes that must match
	}{
		{"frontmatter", regexp.MustCompile(`^---\n`), 300},
		{"h2 heading", regexp.MustCompile(`(?m)^## \S`), 350},
		{"h3 heading", regexp.MustCompile(`(?m)^### \S`), 50},
		{"setext heading", regexp.MustCompile(`(?m)^\S.*\n---+\n`), 10},
		{"nested inline tag", regexp.MustCompile(`(?:^|\s)#[a-z-]+/[a-z/-]+`), 20},
		{"inline tag", regexp.MustCompile(`(?:^|\s)#[a-z]`), 100},
		{"wikilink with alias", regexp.MustCompile(`\[\[[^\]|]+\|[^\]]+\]\]`), 50},
		{"wikilink to heading", regexp.MustCompile(`\[\[[^\]#]+#[^\]]+\]\]`), 20},
		{"embed", regexp.MustCompile(`!\[\[`), 20},
		{"code block", regexp.MustCompile("(?m)^```[a-z]+\n"), 10},
		{"url with fragment", regexp.MustCompile(`https://example\.com/\S+#section-\d`), 10},
		{"task", regexp.MustCompile(`(?m)^- \[[ x]\] `), 50},
		{"non-ASCII word", regexp.MustCompile(`[éïüñöåøçáß]`), 50},
		{"CJK", regexp.MustCompile(`[\p{Han}\p{Hiragana}\p{Katakana}]`), 5},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			for _, data := range notes {
				if c.re.Match(data) {
					n++
				}
			}
			if n < c.min {
				t.Errorf("%d of %d notes match %s, want >= %d", n, len(notes), c.re, c.min)
			}
		})
	}

	depth := 0
	for p := range notes {
		depth = max(depth, strings.Count(p, "/"))
	}
	if depth < 3 {
		t.Errorf("deepest note is %d folders down, want >= 3", depth)
	}
}

func TestGenerateFrontmatterParses(t *testing.T) {
	dir, _ := generate(t, Options{Notes: 300, Seed: 31})
	for p, data := range notesOf(readTree(t, dir)) {
		s := string(data)
		if !strings.HasPrefix(s, "---\n") {
			continue
		}
		end := strings.Index(s[4:], "\n---\n")
		if end < 0 {
			t.Fatalf("%s: unterminated frontmatter", p)
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s[4:4+end]), &m); err != nil {
			t.Fatalf("%s: frontmatter does not parse: %v\n%s", p, err, s[:4+end])
		}
		if _, ok := m["tags"]; !ok {
			t.Errorf("%s: frontmatter without tags", p)
		}
	}
}

func TestGenerateRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "existing.md"), []byte("# hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Notes: 5}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Generate into non-empty dir: err = %v, want ErrNotEmpty", err)
	}
	// A directory that does not exist yet is created.
	if _, err := Generate(filepath.Join(dir, "new", "vault"), Options{Notes: 5}); err != nil {
		t.Fatalf("Generate into missing dir: %v", err)
	}
}

func TestTouchNotes(t *testing.T) {
	dir, _ := generate(t, Options{Notes: 120, Seed: 41})
	before := notesOf(readTree(t, dir))

	got, err := TouchNotes(dir, 10, 99)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("touched %d notes, want 10", len(got))
	}
	after := notesOf(readTree(t, dir))
	touched := map[string]bool{}
	for _, p := range got {
		if touched[p] {
			t.Errorf("%s touched twice", p)
		}
		touched[p] = true
		if !bytes.HasPrefix(after[p], before[p]) || len(after[p]) <= len(before[p]) {
			t.Errorf("%s: content was not appended to", p)
		}
		if !bytes.Contains(after[p][len(before[p]):], []byte("\n## Update ")) {
			t.Errorf("%s: appended text has no Update heading", p)
		}
	}
	for p := range before {
		if !touched[p] && !bytes.Equal(before[p], after[p]) {
			t.Errorf("%s changed but was not reported", p)
		}
	}

	// Same vault, same seed: same choice.
	dir2, _ := generate(t, Options{Notes: 120, Seed: 41})
	got2, err := TouchNotes(dir2, 10, 99)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(got2, "\n") {
		t.Errorf("TouchNotes not deterministic:\n%v\n%v", got, got2)
	}

	// n larger than the vault is capped.
	all, err := TouchNotes(dir, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 120 {
		t.Errorf("TouchNotes(1000) touched %d notes, want all 120", len(all))
	}
}

func TestQueries(t *testing.T) {
	a, b := Queries(200, 5), Queries(200, 5)
	if len(a) != 200 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("Queries not deterministic or wrong length (%d)", len(a))
	}
	kinds := map[string]int{}
	for _, q := range a {
		switch {
		case strings.TrimSpace(q) == "":
			t.Fatalf("empty query")
		case strings.Contains(q, "tag:#"):
			kinds["tag"]++
		case strings.Contains(q, `"`):
			kinds["phrase"]++
		case strings.Contains(q, " -"):
			kinds["exclusion"]++
		default:
			kinds["terms"]++
		}
	}
	for _, k := range []string{"tag", "phrase", "exclusion", "terms"} {
		if kinds[k] == 0 {
			t.Errorf("no %s queries in %v", k, kinds)
		}
	}
}

func BenchmarkGenerate1000(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		st, err := Generate(dir, Options{Notes: 1000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.Bytes)
	}
}
