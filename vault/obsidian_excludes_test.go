package vault

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeAppJSON(t *testing.T, root, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, ".obsidian"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".obsidian", "app.json"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Obsidian's "Excluded files" (userIgnoreFilters) hide notes from the vault
// the way Obsidian applies them: path prefixes and /regex/ entries.
func TestObsidianExcludedFiles(t *testing.T) {
	root := t.TempDir()
	writeAppJSON(t, root, `{"promptDelete":false,"userIgnoreFilters":["Templates/","Archive","/^Daily/20(19|20)-/","/[/"," "]}`)
	var logs bytes.Buffer
	v, err := Open(root, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	checkIgnored(t, v, []ignoredCase{
		{"Templates", true, true},
		{"Templates/daily.md", false, true},
		{"Templates.md", false, false},
		{"Archive", true, true},
		{"Archive/old.md", false, true},
		{"Archived ideas.md", false, true}, // a prefix, as Obsidian matches it
		{"Daily/2019-05-01.md", false, true},
		{"Daily/2020-05-01.md", false, true},
		{"Daily/2021-05-01.md", false, false},
		{"notes/Templates/x.md", false, false},
		{"notes/x.md", false, false},
	})
	if !strings.Contains(logs.String(), "not a valid regular expression") || !strings.Contains(logs.String(), `pattern=/[/`) {
		t.Errorf("an invalid regex entry is not reported:\n%s", logs.String())
	}
	_, reason := v.hiddenReason("Templates/daily.md", false)
	if !strings.Contains(reason, `"Templates/" in .obsidian/app.json`) {
		t.Errorf("reason = %q", reason)
	}

	off, err := Open(root, Options{IgnoreObsidianExcludes: true})
	if err != nil {
		t.Fatal(err)
	}
	if off.Ignored("Templates/daily.md", false) {
		t.Error("IgnoreObsidianExcludes: Templates/daily.md still ignored")
	}
}

// Walk leaves out Obsidian-excluded notes; a malformed app.json is logged
// and changes nothing.
func TestObsidianExcludedFilesWalk(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a.md", "Templates/t.md", "Daily/2019-01-01.md", "Daily/2024-01-01.md"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	walk := func(opts Options) []string {
		v, err := Open(root, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := v.Walk(context.Background(), func(fi FileInfo) error {
			got = append(got, fi.Path)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	writeAppJSON(t, root, `{"userIgnoreFilters":["Templates/","/2019-/"]}`)
	if got, want := walk(Options{}), []string{"Daily/2024-01-01.md", "a.md"}; !slices.Equal(got, want) {
		t.Errorf("walk = %v, want %v", got, want)
	}
	writeAppJSON(t, root, `{"userIgnoreFilters":`)
	var logs bytes.Buffer
	got := walk(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if len(got) != 4 || !strings.Contains(logs.String(), "not valid JSON") {
		t.Errorf("malformed app.json: walk = %v, logs:\n%s", got, logs.String())
	}
}
