package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// A fresh index ranks the same in the run that built it as in every later
// run: `search` three times on a new index (the first builds it) gives the
// same notes in the same order with the same scores, to the last bit.
func TestSearchRanksAlikeInEveryRun(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	type hit struct {
		Path  string  `json:"path"`
		Score float64 `json:"score"`
	}
	var runs [][]hit
	for run := 1; run <= 3; run++ {
		r := runCLI(t, "search", "--vault", fixture, "--index", idx, "--json", "how do I sync between devices")
		var res struct {
			Results []hit `json:"results"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil {
			t.Fatalf("run %d: exit %d, %v\n%s\n%s", run, r.code, err, r.stdout, r.stderr)
		}
		if len(res.Results) < 5 {
			t.Fatalf("run %d: %d results, want 5 or more to compare", run, len(res.Results))
		}
		runs = append(runs, res.Results)
	}
	for run, hits := range runs[1:] {
		if len(hits) != len(runs[0]) {
			t.Errorf("run %d: %d results, the first run %d", run+2, len(hits), len(runs[0]))
			continue
		}
		for i, h := range hits {
			if h != runs[0][i] {
				t.Errorf("run %d, result %d: %s %v; the first run: %s %v", run+2, i+1, h.Path, h.Score, runs[0][i].Path, runs[0][i].Score)
			}
		}
	}
}
