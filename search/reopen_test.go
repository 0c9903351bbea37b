package search

import (
	"context"
	"fmt"
	"path/filepath"
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
			rank := func(ix *Index) map[string]string {
				out := map[string]string{}
				for _, q := range reopenQueries {
					out[q] = fmt.Sprint(resultKeys(search(t, ix, Request{Query: q, Limit: 10})))
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
					if later[q] != first[q] {
						t.Errorf("run %d, %q:\n built: %s\n later: %s", run, q, first[q], later[q])
					}
				}
			}
			// And the same as an index built in memory in one go.
			mem := rank(openIndex(t, dir, ""))
			for _, q := range reopenQueries {
				if mem[q] != first[q] {
					t.Errorf("%q:\n    built: %s\n in memory: %s", q, first[q], mem[q])
				}
			}
		})
	}
}
