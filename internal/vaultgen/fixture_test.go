package vaultgen

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The tests below pin the structural facts about testdata/vault that
// FIXTURE_NOTES.md promises to other tests. If you change the fixture, update
// both.

const fixtureDir = "../../testdata/vault"

// fixtureNotes returns the regular .md files outside dot-folders, keyed by
// vault-relative slash path. Symlinks are not followed.
func fixtureNotes(t *testing.T) map[string]string {
	t.Helper()
	notes := map[string]string{}
	err := filepath.WalkDir(fixtureDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != fixtureDir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixtureDir, p)
		notes[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return notes
}

func TestFixtureStructure(t *testing.T) {
	notes := fixtureNotes(t)
	if len(notes) != 66 {
		t.Errorf("fixture has %d regular notes, FIXTURE_NOTES.md says 66", len(notes))
	}

	var broken, noFrontmatter []string
	for p, s := range notes {
		if !strings.HasPrefix(s, "---\n") {
			noFrontmatter = append(noFrontmatter, p)
			continue
		}
		end := strings.Index(s[4:], "\n---\n")
		if end < 0 {
			t.Errorf("%s: unterminated frontmatter", p)
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s[4:4+end]), &m); err != nil {
			broken = append(broken, p)
		}
	}
	if len(broken) != 1 || broken[0] != "reading/Podcast Notes.md" {
		t.Errorf("notes with broken frontmatter = %v, want only reading/Podcast Notes.md", broken)
	}
	if len(noFrontmatter) != 1 || noFrontmatter[0] != "Inbox.md" {
		t.Errorf("notes without frontmatter = %v, want only Inbox.md", noFrontmatter)
	}

	daily := 0
	for p := range notes {
		if regexp.MustCompile(`^journal/2026-0[34]-\d\d\.md$`).MatchString(p) {
			daily++
		}
	}
	if daily != 12 {
		t.Errorf("%d daily notes in journal/, want 12", daily)
	}

	for _, p := range []string{
		"projects/alpha/design/Architecture.md",
		"kb/go/Go Concurrency Patterns.md",
		"kb/databases/Postgres Indexing.md",
	} {
		s, ok := notes[p]
		switch {
		case !ok:
			t.Errorf("long note %s missing", p)
		case len(s) <= 8192:
			t.Errorf("long note %s is %d bytes, want > 8192", p, len(s))
		case len(regexp.MustCompile(`(?m)^#{2,3} `).FindAllString(s, -1)) < 10:
			t.Errorf("long note %s has fewer than 10 ##/### headings", p)
		case !regexp.MustCompile(`(?m)^\S.*\n[=-]{3,}\n`).MatchString(s):
			t.Errorf("long note %s has no setext heading", p)
		}
	}

	for _, p := range []string{"work/Meeting Notes.md", "personal/Meeting Notes.md",
		"recipes/红烧肉.md", "travel/Japan 2026/京都メモ.md", "recipes/Café de Olla.md"} {
		if _, ok := notes[p]; !ok {
			t.Errorf("%s missing", p)
		}
	}
}

func TestFixtureSymlinksAndIgnoredFiles(t *testing.T) {
	links := map[string]string{
		"outside-link.md":            "/etc/hosts",
		"attachments/escape-link.md": "../../../go.mod",
		"journal/today.md":           "2026-04-20.md",
	}
	for p, want := range links {
		got, err := os.Readlink(filepath.Join(fixtureDir, filepath.FromSlash(p)))
		if err != nil || got != want {
			t.Errorf("symlink %s -> %q (err %v), want -> %q", p, got, err, want)
		}
	}
	ignored := map[string]string{
		".obsidian/app.json":            "zzyzx-obsidian-config",
		".obsidian/workspace.json":      "zzyzx-workspace-only",
		".trash/deleted note.md":        "zzyzx-trash-only",
		"attachments/sensor-export.txt": "zzyzx-txt-only",
	}
	for p, marker := range ignored {
		data, err := os.ReadFile(filepath.Join(fixtureDir, filepath.FromSlash(p)))
		if err != nil || !strings.Contains(string(data), marker) {
			t.Errorf("%s: missing or without marker %q (err %v)", p, marker, err)
		}
	}
	png, err := os.ReadFile(filepath.Join(fixtureDir, "attachments", "diagram.png"))
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Errorf("attachments/diagram.png is not a PNG (err %v)", err)
	}
}

func TestFixtureMarkers(t *testing.T) {
	notes := fixtureNotes(t)
	tests := []struct {
		word, note string
	}{
		{"yeastwood", "recipes/Sourdough Starter.md"},
		{"hooch", "recipes/Sourdough Starter.md"},
		{"piloncillo", "recipes/Café de Olla.md"},
		{"dowding", "reading/Podcast Notes.md"},
		{"inc-2291", "work/meetings/2026-04-02 Incident Review.md"},
		{"nefertiti", "travel/Berlin Weekend.md"},
		{"manteigaria", "travel/Lisbon 2025.md"},
		{"tartine", "recipes/Country Sourdough Loaf.md"},
		{"lamping", "kb/distributed/Consistent Hashing.md"},
		{"vaswani", "reading/papers/Attention Is All You Need.md"},
		{"chennai", "people/Priya Raman.md"},
		{"sashimono", "people/Kenji Watanabe.md"},
		{"naïve", "reading/papers/BM25 and Probabilistic Relevance.md"},
		{"naive", "kb/distributed/Consistent Hashing.md"},
		{"冰糖", "recipes/红烧肉.md"},
		{"通天橋", "travel/Japan 2026/京都メモ.md"},
		{"紅葉", "travel/Japan 2026/京都メモ.md"},
		{"no space left on device", "work/meetings/2026-04-02 Incident Review.md"},
		{"stretch and folds", "recipes/Country Sourdough Loaf.md"},
		{"zzyzx", ""},
		{"localhost", ""},
		{"blevesearch", ""},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			var found []string
			for p, s := range notes {
				if strings.Contains(strings.ToLower(s), tt.word) {
					found = append(found, p)
				}
			}
			want := 1
			if tt.note == "" {
				want = 0
			}
			if len(found) != want || (want == 1 && found[0] != tt.note) {
				t.Errorf("%q occurs in %v, want only %q", tt.word, found, tt.note)
			}
		})
	}
}
