package eval

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/agent/offline"
)

// AskOutcome is how the offline ask did on one question: the notes its
// answer cites (vault paths, in order), whether one of them is expected,
// and how its cited lines fare.
//
// A cited line is a line of the answer that quotes a note with its
// [[citation]]: the "Sources:" list and a "See also" line name notes
// without quoting them and are not cited lines (their notes still count
// as cited anywhere). It comes from an expected note when one of its
// citations is an expected note. A reader judges an answer by its first lines, and an
// answer padded with quotes from unrelated notes misleads even when the
// right note is among them: so the first cited line and the share of
// cited lines are measured as well as "an expected note is cited".
type AskOutcome struct {
	Cited []string
	// Hit: an expected note is cited anywhere in the answer.
	Hit bool
	// FirstHit: the first cited line cites an expected note.
	FirstHit bool
	// Lines counts the cited lines, Expected those from an expected note.
	Lines, Expected int
	Answer          string
	Err             string
}

// Asks are the answer check of a run: every question asked with the
// offline model, as `vault-agent ask` does with no key.
type Asks struct {
	Outcomes []AskOutcome
	Millis   []float64
}

// AskSummary aggregates the answer check over some questions.
type AskSummary struct {
	N int
	// Hits: answers citing an expected note anywhere.
	Hits int
	// FirstHits: answers whose first cited line cites an expected note.
	FirstHits int
	// Lines and Expected sum the cited lines and those from an expected
	// note over the answers; LineShare is Expected/Lines.
	Lines, Expected int
}

// LineShare is the share of the cited lines that come from an expected
// note, 0 when no line is cited.
func (s AskSummary) LineShare() float64 {
	if s.Lines == 0 {
		return 0
	}
	return float64(s.Expected) / float64(s.Lines)
}

// Summarize aggregates the outcomes of the questions at idx (all when idx
// is nil).
func (a *Asks) Summarize(idx []int) AskSummary {
	if idx == nil {
		idx = make([]int, len(a.Outcomes))
		for i := range idx {
			idx[i] = i
		}
	}
	var s AskSummary
	for _, i := range idx {
		if i >= len(a.Outcomes) {
			continue
		}
		o := a.Outcomes[i]
		s.N++
		if o.Hit {
			s.Hits++
		}
		if o.FirstHit {
			s.FirstHits++
		}
		s.Lines += o.Lines
		s.Expected += o.Expected
	}
	return s
}

// Hits counts the questions whose answer cites an expected note.
func (a *Asks) Hits() int { return a.Summarize(nil).Hits }

var reCitation = regexp.MustCompile(`\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]`)

// Citations returns the targets of the [[wikilinks]] of an answer, in
// order, without repeats. A wikilink inside a fenced code block is code
// quoted from a note ("![[Document.pdf]]"), not a citation.
func Citations(answer string) []string {
	var out []string
	for _, m := range reCitation.FindAllStringSubmatch(strings.Join(proseOf(answer), "\n"), -1) {
		t := strings.TrimSpace(m[1])
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

var reSourcesLine = regexp.MustCompile(`(?i)^\s*(?:\*\*)?(?:sources?(?:\*\*)?\s*:|see also\b)`)

// citedLines returns the lines of answer that cite a note, less the
// "Sources:" list and "See also" lines.
func citedLines(answer string) []string {
	var out []string
	for _, line := range proseOf(answer) {
		if reCitation.MatchString(line) && !reSourcesLine.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// proseOf returns the lines of answer outside fenced code blocks.
func proseOf(answer string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(answer, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		default:
			out = append(out, line)
		}
	}
	return out
}

// looker resolves a citation to a note path; *search.Index satisfies it.
type looker interface {
	Lookup(name string) (string, error)
}

// JudgeAnswer resolves the citations of answer and reports whether one of
// them is an expected note of q, whether the first cited line cites one,
// and how many of the cited lines do.
func JudgeAnswer(q Question, answer string, ix looker) AskOutcome {
	o := AskOutcome{Answer: answer}
	resolved := map[string]string{}
	resolve := func(c string) string {
		p, ok := resolved[c]
		if !ok {
			p, _ = ix.Lookup(c)
			resolved[c] = p
		}
		return p
	}
	for _, c := range Citations(answer) {
		p := resolve(c)
		if p == "" {
			continue
		}
		o.Cited = append(o.Cited, p)
		if slices.Contains(q.Expect, p) {
			o.Hit = true
		}
	}
	for i, line := range citedLines(answer) {
		o.Lines++
		expected := false
		for _, c := range Citations(line) {
			if p := resolve(c); p != "" && slices.Contains(q.Expect, p) {
				expected = true
			}
		}
		if expected {
			o.Expected++
			if i == 0 {
				o.FirstHit = true
			}
		}
	}
	return o
}

// askIndex is what the answer check asks over: the agent's index, whose
// Lookup resolves the answer's citations.
type askIndex interface {
	agent.Index
	looker
}

// RunAsks asks every question with the offline model over ix, with the
// default run configuration of `vault-agent ask`.
func RunAsks(ctx context.Context, ix askIndex, qs []Question) (*Asks, error) {
	a, err := agent.New(agent.Deps{Index: ix, Model: offline.New()})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	out := &Asks{}
	for _, q := range qs {
		start := time.Now()
		res, err := a.Run(ctx, agent.RunRequest{Message: q.Q}, nil)
		out.Millis = append(out.Millis, float64(time.Since(start).Microseconds())/1000)
		switch {
		case err != nil:
			out.Outcomes = append(out.Outcomes, AskOutcome{Err: err.Error()})
		case res.StopReason != agent.StopFinalAnswer:
			o := JudgeAnswer(q, res.Answer, ix)
			o.Err = "stopped: " + res.StopReason
			out.Outcomes = append(out.Outcomes, o)
		default:
			out.Outcomes = append(out.Outcomes, JudgeAnswer(q, res.Answer, ix))
		}
	}
	return out, nil
}

// ReportAsks prints the answer check of engine name: the three figures
// overall and by kind, and the answer time.
func ReportAsks(w io.Writer, qs []Question, name string, a *Asks) {
	all := a.Summarize(nil)
	fmt.Fprintf(w, "\nAnswer check (%s, offline ask): first cited line cites an expected note in %d of %d; "+
		"%.0f%% of cited lines from an expected note (%d of %d); an expected note cited anywhere in %d of %d (%.0f%%); "+
		"ask time p50 %.0f ms, p99 %.0f ms\n",
		name, all.FirstHits, all.N, 100*all.LineShare(), all.Expected, all.Lines, all.Hits, all.N,
		100*float64(all.Hits)/float64(max(all.N, 1)), Percentile(a.Millis, 50), Percentile(a.Millis, 99))
	kinds, by := Kinds(qs)
	if len(kinds) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| kind | n | first cited line expected | cited lines from expected | expected cited anywhere |\n|---|---|---|---|---|\n")
	for _, k := range append(kinds, "all") {
		s := all
		if k != "all" {
			s = a.Summarize(by[k])
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.0f%% (%d/%d) | %d |\n", k, s.N, s.FirstHits, 100*s.LineShare(), s.Expected, s.Lines, s.Hits)
	}
}
