package search

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/fixture"
)

// The order of results does not depend on how the index is laid out in
// segments: the same notes indexed in one batch, and in many small
// batches with updates and deletions between them (merged in the
// background), give the same results in the same order with the same
// scores.
func TestRankingIgnoresSegmentLayout(t *testing.T) {
	src := fixture.Vault()
	var notes []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(src, p)
			notes = append(notes, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(notes)
	content := map[string]string{}
	for _, n := range notes {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		content[filepath.ToSlash(n)] = string(b)
	}

	// Every note has the same mtime in both vaults: a listing by filters
	// alone is newest first.
	when := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	stamp := func(dir string, rels ...string) {
		t.Helper()
		for _, n := range rels {
			if err := os.Chtimes(filepath.Join(dir, n), when, when.Add(time.Duration(len(n))*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}

	// One batch.
	oneDir := writeVault(t, content)
	stamp(oneDir, notes...)
	one := openIndex(t, oneDir, filepath.Join(t.TempDir(), "one"))

	// Many: five notes a batch, each first written with other text (and a
	// note that is later deleted), then rewritten.
	dir := t.TempDir()
	many := openIndex(t, dir, filepath.Join(t.TempDir(), "many"))
	for i := 0; i < len(notes); i += 5 {
		batch := notes[i:min(i+5, len(notes))]
		for _, n := range batch {
			writeFile(t, dir, filepath.ToSlash(n), "# Draft\n\nsourdough project meeting draft "+n+"\n")
		}
		writeFile(t, dir, fmt.Sprintf("scratch/%d.md", i), "sourdough starter project beta garden notes")
		if _, err := many.Sync(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, n := range batch {
			writeFile(t, dir, filepath.ToSlash(n), content[filepath.ToSlash(n)])
		}
		stamp(dir, batch...)
		if err := os.Remove(filepath.Join(dir, "scratch", fmt.Sprintf("%d.md", i))); err != nil {
			t.Fatal(err)
		}
		if _, err := many.Sync(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if one.Count() != many.Count() {
		t.Fatalf("%d notes and %d notes", one.Count(), many.Count())
	}

	for _, q := range []string{"sourdough starter", "project beta", "meeting notes", "garden", "kafka outbox worker",
		"what did I decide about the database", "berlin weekend", "go concurrency", "reading", "tag:#project", "recipe OR bread"} {
		a := search(t, one, Request{Query: q, Limit: 20})
		b := search(t, many, Request{Query: q, Limit: 20})
		if fmt.Sprint(resultKeys(a)) != fmt.Sprint(resultKeys(b)) {
			t.Errorf("%q:\n one batch: %v\n    merged: %v", q, resultKeys(a), resultKeys(b))
		}
	}
}

func resultKeys(res *Results) []string {
	out := make([]string, len(res.Results))
	for i, r := range res.Results {
		out[i] = fmt.Sprintf("%s %.4f", r.Path, r.Score)
	}
	return out
}

// Notes that tie on score come back in path order, not in the order they
// were indexed.
func TestTiesAreOrderedByPath(t *testing.T) {
	dir := t.TempDir()
	ix := openIndex(t, dir, filepath.Join(t.TempDir(), "ix"))
	for _, n := range []string{"z.md", "m.md", "a.md"} {
		writeFile(t, dir, n, "zebrafish notes\n")
		if _, err := ix.Sync(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"zebrafish", "zebrafish notes"} {
		res := search(t, ix, Request{Query: q, Limit: 3})
		var got []string
		for _, r := range res.Results {
			got = append(got, r.Path)
		}
		if fmt.Sprint(got) != "[a.md m.md z.md]" {
			t.Errorf("%q: %v, want [a.md m.md z.md]", q, got)
			for _, r := range res.Results {
				t.Logf("%s %v", r.Path, r.Score)
			}
		}
	}
}

// A word of the title says which note, not which section: the chunk shown
// for a search is the one holding the question's other words.
func TestBestChunkLooksPastTheTitle(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"Starter.md": "# Starter\n\nMy starter lives in a jar and is called Clint; a starter is flour and water.\n\n" +
			"## Feeding\n\nMix rye and water every day for a week.\n\n" +
			"## Keeping it\n\nOnce established, keep it in the fridge and feed it weekly.\n",
	})
	ix := openIndex(t, dir, "")
	res := search(t, ix, Request{Query: "how do I keep my starter alive"})
	if len(res.Results) == 0 || res.Results[0].Heading != "Starter > Keeping it" {
		t.Fatalf("results %+v", res.Results)
	}
}
