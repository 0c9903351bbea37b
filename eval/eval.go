package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// K is the cut-off of every metric: MRR@10, recall@10.
const K = 10

// Question is one entry of a question file.
type Question struct {
	Q      string   `json:"q"`
	Expect []string `json:"expect"`
	Kind   string   `json:"kind,omitempty"`
}

// LoadQuestions reads a question file and checks every entry has a question
// and at least one expected note.
func LoadQuestions(path string) ([]Question, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read questions: %w", err)
	}
	var qs []Question
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("questions %s: not a JSON array of {q, expect, kind}: %w", path, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("questions %s: no questions", path)
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Q) == "" || len(q.Expect) == 0 {
			return nil, fmt.Errorf("questions %s: entry %d needs a non-empty q and expect", path, i+1)
		}
	}
	return qs, nil
}

// Outcome is how one engine did on one question.
type Outcome struct {
	// Rank is the 1-based rank of the first expected note in the top K,
	// 0 when none is there.
	Rank int
	// Found counts the expected notes in the top K.
	Found int
	// Top is the first result, "" when there is none.
	Top string
	// Err is set when the engine failed on the question.
	Err string
}

// Judge scores ranked results against a question.
func Judge(q Question, ranked []string) Outcome {
	var o Outcome
	if len(ranked) > 0 {
		o.Top = ranked[0]
	}
	for i, p := range ranked[:min(K, len(ranked))] {
		if !slices.Contains(q.Expect, p) {
			continue
		}
		if o.Rank == 0 {
			o.Rank = i + 1
		}
		o.Found++
	}
	return o
}

// Summary aggregates outcomes.
type Summary struct {
	N      int
	MRR    float64 // mean reciprocal rank of the first expected note, @K
	Top1   int     // questions whose first result is expected
	Recall float64 // mean share of the expected notes found in the top K
}

// Summarize aggregates the outcomes of the questions at idx (all when idx
// is nil).
func Summarize(qs []Question, outs []Outcome, idx []int) Summary {
	if idx == nil {
		idx = make([]int, len(qs))
		for i := range idx {
			idx[i] = i
		}
	}
	var s Summary
	for _, i := range idx {
		o := outs[i]
		s.N++
		if o.Rank > 0 {
			s.MRR += 1 / float64(o.Rank)
		}
		if o.Rank == 1 {
			s.Top1++
		}
		s.Recall += float64(o.Found) / float64(len(qs[i].Expect))
	}
	if s.N > 0 {
		s.MRR /= float64(s.N)
		s.Recall /= float64(s.N)
	}
	return s
}

// Kinds returns the kinds of the questions in order of first appearance,
// and the indexes of the questions of each.
func Kinds(qs []Question) ([]string, map[string][]int) {
	var order []string
	by := map[string][]int{}
	for i, q := range qs {
		if q.Kind == "" {
			continue
		}
		if _, ok := by[q.Kind]; !ok {
			order = append(order, q.Kind)
		}
		by[q.Kind] = append(by[q.Kind], i)
	}
	return order, by
}

// Percentile returns the p-th percentile (0..100) of ds, nearest rank.
func Percentile(ds []float64, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Float64s(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
