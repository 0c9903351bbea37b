package planner

import (
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/internal/truncate"
)

// Caps of a context capsule, keeping it small enough to hand to a parent
// agent as one tool result.
const (
	MaxFindings        = 8
	MaxFindingLen      = 200
	MaxArtifacts       = 12
	MaxArtifactSummary = 200
	MaxNextActions     = 8
)

// Artifact is something a run produced or relied on, e.g. a note it read:
// {Type: "note", Ref: "Projects/Alpha.md", Summary: "..."}.
type Artifact struct {
	Type    string `json:"type"`
	Ref     string `json:"ref"`
	Summary string `json:"summary"`
}

// Capsule is the compact, transcript-free account of a run:
// built at the end of a run and returned as debug output; later, what a
// subagent hands back to its parent.
type Capsule struct {
	Goal         string     `json:"goal"`
	PlanSnapshot *Plan      `json:"planSnapshot,omitempty"`
	KeyFindings  []string   `json:"keyFindings"`
	Artifacts    []Artifact `json:"artifacts"`
	NextActions  []string   `json:"nextActions,omitempty"`
}

// CapsuleBuilder collects findings and artifacts during a run. Findings are
// trimmed, capped at MaxFindingLen characters and deduplicated ignoring case
// and spacing; artifacts are deduplicated by (Type, Ref), the first summary
// winning unless it was empty. Past the caps, additions are dropped (the
// earliest are kept, which makes the capsule deterministic). Methods are safe
// for concurrent use.
type CapsuleBuilder struct {
	mu        sync.Mutex // guards the fields below
	goal      string
	findings  []string
	seen      map[string]bool
	artifacts []Artifact
}

// NewCapsuleBuilder starts a capsule for goal.
func NewCapsuleBuilder(goal string) *CapsuleBuilder {
	return &CapsuleBuilder{goal: strings.TrimSpace(goal), seen: map[string]bool{}}
}

// AddFinding adds one key finding; it reports whether it was kept (false for
// blank, duplicate, or beyond MaxFindings).
func (b *CapsuleBuilder) AddFinding(text string) bool {
	f := truncate.Runes(strings.Join(strings.Fields(text), " "), MaxFindingLen)
	if f == "" {
		return false
	}
	key := strings.ToLower(f)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen[key] || len(b.findings) >= MaxFindings {
		return false
	}
	b.seen[key] = true
	b.findings = append(b.findings, f)
	return true
}

// AddArtifact adds an artifact; it reports whether the capsule changed
// (false for an empty Ref, a duplicate, or beyond MaxArtifacts).
func (b *CapsuleBuilder) AddArtifact(a Artifact) bool {
	a.Type = strings.TrimSpace(a.Type)
	a.Ref = strings.TrimSpace(a.Ref)
	a.Summary = truncate.Runes(strings.Join(strings.Fields(a.Summary), " "), MaxArtifactSummary)
	if a.Ref == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, old := range b.artifacts {
		if old.Type == a.Type && old.Ref == a.Ref {
			if old.Summary == "" && a.Summary != "" {
				b.artifacts[i].Summary = a.Summary
				return true
			}
			return false
		}
	}
	if len(b.artifacts) >= MaxArtifacts {
		return false
	}
	b.artifacts = append(b.artifacts, a)
	return true
}

// Build returns the capsule. plan may be nil (planner off or no plan); with
// a plan, its snapshot is included and NextActions lists the contents of its
// unfinished todos (in progress first), unless the plan is done.
func (b *CapsuleBuilder) Build(plan *Plan) Capsule {
	b.mu.Lock()
	c := Capsule{
		Goal:        b.goal,
		KeyFindings: append([]string{}, b.findings...),
		Artifacts:   append([]Artifact{}, b.artifacts...),
	}
	b.mu.Unlock()
	if plan != nil && plan.Exists() {
		snap := plan.clone()
		c.PlanSnapshot = &snap
		if !snap.AllDone() {
			for _, t := range snap.Unfinished() {
				if len(c.NextActions) == MaxNextActions {
					break
				}
				c.NextActions = append(c.NextActions, t.Content)
			}
		}
	}
	return c
}

// Summary renders the capsule as short text, for injecting into a parent's
// next turn.
func (c Capsule) Summary() string {
	var b strings.Builder
	b.WriteString("Goal: " + c.Goal)
	if c.PlanSnapshot != nil {
		b.WriteString("\n" + c.PlanSnapshot.Summary())
	}
	if len(c.KeyFindings) > 0 {
		b.WriteString("\nKey findings:")
		for _, f := range c.KeyFindings {
			b.WriteString("\n- " + f)
		}
	}
	if len(c.Artifacts) > 0 {
		b.WriteString("\nArtifacts:")
		for _, a := range c.Artifacts {
			b.WriteString("\n- " + a.Type + " " + a.Ref)
			if a.Summary != "" {
				b.WriteString(": " + a.Summary)
			}
		}
	}
	if len(c.NextActions) > 0 {
		b.WriteString("\nNext actions:")
		for _, n := range c.NextActions {
			b.WriteString("\n- " + n)
		}
	}
	return b.String()
}
