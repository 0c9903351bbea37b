package agent

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/search"
)

// What a run remembers of its own course: the searches it made (to answer
// a near-duplicate with a hint), the notes it read and the hits it saw (for
// the context capsule and the note a run that did not finish ends with).
// All of it is touched only on the run's goroutine.

// searchRecord is one search the run made.
type searchRecord struct {
	query string
	terms map[string]bool
	tr    string
}

// endingNote is the answer of a run that ended without a final answer.
func (r *runState) endingNote(reason string, err error) string {
	var b strings.Builder
	switch reason {
	case StopMaxIterations:
		fmt.Fprintf(&b, "I reached the maximum of %d iterations before finishing.", r.cfg.MaxIterations)
	case StopTimeout:
		fmt.Fprintf(&b, "I ran out of time after %s before finishing.", r.cfg.Timeout)
	case StopStopped:
		b.WriteString("Stopped.")
	case StopAwaitUserInput:
		b.WriteString("Here is my plan. Reply OK to go ahead, or tell me what to change.")
		if r.plan != nil {
			b.WriteString("\n\n" + r.plan.Render())
		}
		return b.String()
	case StopError:
		b.WriteString("The run failed")
		if err != nil {
			b.WriteString(": " + err.Error())
		}
		b.WriteString(".")
		return b.String()
	}
	if r.lastText != "" && reason != StopFinalAnswer {
		b.WriteString("\n\nLast progress note: " + r.lastText)
	}
	if len(r.read) > 0 {
		b.WriteString("\n\nNotes read so far: ")
		var names []string
		for _, n := range r.read {
			names = append(names, "[["+noteLabel(n.Path)+"]]")
		}
		b.WriteString(strings.Join(dedupe(names), ", "))
	}
	return b.String()
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// duplicateSearch reports whether query (with the same time range) is a
// near-duplicate of an earlier search: the same set of terms, or one whose
// terms overlap by 80% or more.
func (r *runState) duplicateSearch(query string, tr *TimeRange) (string, bool) {
	terms := queryTerms(query)
	key := timeKey(tr)
	for _, s := range r.searches {
		if s.tr != key || len(terms) == 0 {
			continue
		}
		if jaccard(terms, s.terms) >= 0.8 {
			return s.query, true
		}
	}
	return "", false
}

func (r *runState) searchDone(query string, tr *TimeRange, out *LocalSearchResult) {
	r.searches = append(r.searches, searchRecord{query: query, terms: queryTerms(query), tr: timeKey(tr)})
	r.hits = append(r.hits, out.Results...)
}

func (r *runState) noteRead(n *search.NoteChunk) { r.read = append(r.read, n) }

func timeKey(tr *TimeRange) string {
	if tr == nil {
		return ""
	}
	return fmt.Sprintf("%d-%d", tr.StartTime, tr.EndTime)
}

func queryTerms(q string) map[string]bool {
	terms := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !(r == '-' || r == ':' || r == '#' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127)
	}) {
		if len(f) > 1 && !stopWords[f] {
			terms[strings.TrimSuffix(f, "s")] = true
		}
	}
	return terms
}

var stopWords = map[string]bool{
	"the": true, "and": true, "or": true, "of": true, "to": true, "in": true, "on": true, "for": true,
	"my": true, "me": true, "is": true, "are": true, "what": true, "how": true, "about": true, "notes": true,
	"note": true, "with": true, "do": true, "i": true, "a": true, "an": true,
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	return float64(inter) / float64(union)
}

// capsule builds the context capsule of the run:
// the notes read as artifacts, the best search hits as findings, the
// unfinished todos as next actions.
func (r *runState) capsule() planner.Capsule {
	b := planner.NewCapsuleBuilder(r.goal)
	for _, n := range r.read {
		b.AddArtifact(planner.Artifact{Type: "note", Ref: n.Path, Summary: n.Title})
	}
	hits := append([]search.Result(nil), r.hits...)
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	for _, h := range hits {
		b.AddFinding(fmt.Sprintf("%s: %s", h.Title, h.Snippet))
	}
	var plan *planner.Plan
	if r.plan != nil && r.plan.HasPlan() {
		snap := r.plan.Snapshot()
		plan = &snap
	}
	return b.Build(plan)
}
