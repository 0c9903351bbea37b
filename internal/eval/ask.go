package eval

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/agent/offline"
	"github.com/vault-agent/vault-agent/search"
)

// AskOutcome is how the offline ask did on one question: the notes its
// answer cites (vault paths, in order) and whether one of them is expected.
type AskOutcome struct {
	Cited []string
	Hit   bool
	Err   string
}

// Asks are the answer check of a run: every question asked with the
// offline model, as `vault-agent ask` does with no key.
type Asks struct {
	Outcomes []AskOutcome
	Millis   []float64
}

// Hits counts the questions whose answer cites an expected note.
func (a *Asks) Hits() int {
	n := 0
	for _, o := range a.Outcomes {
		if o.Hit {
			n++
		}
	}
	return n
}

var reCitation = regexp.MustCompile(`\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]`)

// Citations returns the targets of the [[wikilinks]] of an answer, in
// order, without repeats.
func Citations(answer string) []string {
	var out []string
	for _, m := range reCitation.FindAllStringSubmatch(answer, -1) {
		t := strings.TrimSpace(m[1])
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// looker resolves a citation to a note path; *search.Index satisfies it.
type looker interface {
	Lookup(name string) (string, error)
}

// JudgeAnswer resolves the citations of answer and reports whether one of
// them is an expected note of q.
func JudgeAnswer(q Question, answer string, ix looker) AskOutcome {
	var o AskOutcome
	for _, c := range Citations(answer) {
		p, err := ix.Lookup(c)
		if err != nil {
			continue
		}
		o.Cited = append(o.Cited, p)
		if slices.Contains(q.Expect, p) {
			o.Hit = true
		}
	}
	return o
}

// RunAsks asks every question with the offline model over ix, with the
// default run configuration of `vault-agent ask`.
func RunAsks(ctx context.Context, ix *search.Index, qs []Question) (*Asks, error) {
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
