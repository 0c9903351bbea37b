package vault

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	fixtureVault = "../testdata/vault"
	fixtureNotes = "../internal/vaultgen/FIXTURE_NOTES.md"
	goldenFile   = "testdata/golden/fixture.json"
)

// goldenNote is the stable part of a parsed note: no mtime, size or hash,
// which depend on the checkout.
type goldenNote struct {
	Path             string         `json:"path"`
	Title            string         `json:"title"`
	Aliases          []string       `json:"aliases,omitempty"`
	Tags             []string       `json:"tags,omitempty"`
	Headings         []Heading      `json:"headings,omitempty"`
	Links            []Link         `json:"links,omitempty"`
	Properties       map[string]any `json:"properties,omitempty"`
	FrontmatterError string         `json:"frontmatterError,omitempty"`
	Date             string         `json:"date,omitempty"`
	Chunks           []goldenChunk  `json:"chunks"`
}

type goldenChunk struct {
	Heading   string `json:"heading"`
	StartLine int    `json:"startLine"`
	Runes     int    `json:"runes"`
}

type golden struct {
	Walk  []string     `json:"walk"`
	Notes []goldenNote `json:"notes"`
}

func readFixture(t *testing.T) (*Vault, golden) {
	t.Helper()
	if _, err := os.Stat(fixtureVault); err != nil {
		t.Skipf("fixture vault missing: %v", err)
	}
	v, err := Open(fixtureVault, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	err = v.Walk(context.Background(), func(fi FileInfo) error {
		g.Walk = append(g.Walk, fi.Path)
		n, err := v.ReadNote(fi.Path)
		if err != nil {
			return err
		}
		checkCover(t, n)
		gn := goldenNote{
			Path: n.Path, Title: n.Title, Aliases: n.Aliases, Tags: n.Tags, Headings: n.Headings,
			Links: n.Links, Properties: n.Properties, FrontmatterError: n.FrontmatterError,
		}
		if !n.Date.IsZero() {
			gn.Date = n.Date.Format("2006-01-02")
		}
		for _, c := range n.Chunks {
			gn.Chunks = append(gn.Chunks, goldenChunk{c.Heading, c.StartLine, utf8.RuneCountInString(c.Text)})
		}
		g.Notes = append(g.Notes, gn)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v, g
}

func TestGoldenFixture(t *testing.T) {
	_, g := readFixture(t)
	got, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (run go test ./vault -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\ngot  %s\nwant %s\n(run go test ./vault -run Golden -update if the change is intended)", goldenFile, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d", goldenFile, len(gl), len(wl))
	}
}

// TestFixtureTable checks the parser against the hand-written expectations
// in FIXTURE_NOTES.md ("Every note" table), independently of the golden.
func TestFixtureTable(t *testing.T) {
	f, err := os.Open(fixtureNotes)
	if err != nil {
		t.Skipf("fixture notes missing: %v", err)
	}
	defer f.Close()
	v, g := readFixture(t)
	byPath := map[string]goldenNote{}
	for _, n := range g.Notes {
		byPath[n.Path] = n
	}
	split := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 || !strings.HasSuffix(strings.TrimSpace(cells[0]), ".md`") {
			continue
		}
		p := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if v.Ignored(p, false) {
			continue // the table also lists files that are not notes
		}
		rows++
		n, ok := byPath[p]
		if !ok {
			t.Errorf("%s: not found by Walk", p)
			continue
		}
		// The table annotates the broken-frontmatter note's title.
		if want := strings.TrimSuffix(strings.TrimSpace(cells[1]), " (frontmatter broken)"); n.Title != want {
			t.Errorf("%s: title %q, want %q", p, n.Title, want)
		}
		if want := split(cells[2]); !reflect.DeepEqual(n.Aliases, want) {
			t.Errorf("%s: aliases %q, want %q", p, n.Aliases, want)
		}
		if want := split(cells[3]); !reflect.DeepEqual(n.Tags, want) {
			t.Errorf("%s: tags %q, want %q", p, n.Tags, want)
		}
	}
	if rows < 50 {
		t.Fatalf("only %d table rows read from %s", rows, fixtureNotes)
	}
	for _, p := range []string{"outside-link.md", "attachments/escape-link.md"} {
		if _, ok := byPath[p]; ok {
			t.Errorf("%s leaves the vault but was walked", p)
		}
		if _, err := v.ReadNote(p); err == nil {
			t.Errorf("%s leaves the vault but was read", p)
		}
	}
	for _, n := range g.Notes {
		for _, tag := range n.Tags {
			switch tag {
			case "not-a-tag", "define", "fair-use-policy", "regional-parameters", "stopping-short", "resulting-context", "syntax", "trash-only-tag":
				t.Errorf("%s: %q is not a tag", n.Path, tag)
			}
		}
		for _, h := range n.Headings {
			if strings.Contains(strings.ToLower(h.Text), "not a heading") || strings.HasPrefix(h.Text, "define") {
				t.Errorf("%s: heading %q comes from code", n.Path, h.Text)
			}
		}
	}
	if n := byPath["reading/Podcast Notes.md"]; n.FrontmatterError == "" {
		t.Errorf("Podcast Notes: no frontmatter error")
	}
}
