package search

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
)

// reopenQueries exercise every ranked field of the fixture vault.
var reopenQueries = []string{
	"sourdough starter", "project beta", "meeting notes", "garden", "kafka outbox worker",
	"what did I decide about the database", "berlin weekend", "go concurrency", "reading",
	"how do I sync between devices", "recipe OR bread", "tag:#project launch",
}

// The same index ranks the same in the run that built it and in every
// later run: the statistics ranking reads (the notes' field lengths and
// their means) are the same whether they come from the sync that wrote
// the documents or from the index on disk. Built in one batch (every note
// in the last batch), in many small ones, and in bulk (a first index of
// many notes, whose notes reach memory from disk at the end).
func TestReopenedIndexRanksAsBuilt(t *testing.T) {
	tests := []struct {
		name  string
		batch int
		bulk  bool
	}{
		{"one batch", 500, false},
		{"small batches", 7, false},
		{"bulk", 9, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.bulk {
				prev := bulkNotes
				t.Cleanup(func() { bulkNotes = prev })
				bulkNotes = 10
			}
			dir := fixture.Copy(t)
			idxPath := filepath.Join(t.TempDir(), "idx")
			open := func() *Index {
				t.Helper()
				ix, err := Open(context.Background(), Options{Path: idxPath, Vault: openVault(t, dir), Logger: testLogger(t), BatchSize: tt.batch})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ix.Sync(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				return ix
			}
			rank := func(ix *Index) map[string][]Result {
				out := map[string][]Result{}
				for _, q := range reopenQueries {
					out[q] = search(t, ix, Request{Query: q, Limit: 10}).Results
				}
				return out
			}
			built := open()
			first := rank(built)
			if err := built.Close(); err != nil {
				t.Fatal(err)
			}
			for run := 2; run <= 3; run++ {
				ix := open()
				later := rank(ix)
				ix.Close()
				for _, q := range reopenQueries {
					if !sameRanking(first[q], later[q], 0) {
						t.Errorf("run %d, %q:\n built:%s\n later:%s", run, q, rankingText(first[q]), rankingText(later[q]))
					}
				}
			}
			// And the same as an index built in memory in one go, but
			// for the last bits of the scores: bleve sums the parts of
			// a score in an order of its own there.
			mem := rank(openIndex(t, dir, ""))
			for _, q := range reopenQueries {
				if !sameRanking(first[q], mem[q], 1e-12) {
					t.Errorf("%q:\n built:%s\n in memory:%s", q, rankingText(first[q]), rankingText(mem[q]))
				}
			}
		})
	}
}

// sameRanking reports whether a and b hold the same notes in the same order
// with the same scores, each within a relative tolerance tol (0: exactly).
func sameRanking(a, b []Result, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || math.Abs(a[i].Score-b[i].Score) > tol*math.Abs(a[i].Score) {
			return false
		}
	}
	return true
}

// rankingText lists the results' paths and exact scores (the shortest form
// that reads back as the same float), a line each.
func rankingText(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  %s %v", r.Path, r.Score)
	}
	return b.String()
}
