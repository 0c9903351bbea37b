package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ToolHandle names a tool a plan step intends to use (name, version,
// parameters). In JSON it is either the tool name as a string or
// an object {"name", "version", "parameters"}; a handle with only a name is
// written back as a string.
type ToolHandle struct {
	Name       string         `json:"name"`
	Version    string         `json:"version,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// MarshalJSON writes a bare name as a string.
func (h ToolHandle) MarshalJSON() ([]byte, error) {
	if h.Version == "" && len(h.Parameters) == 0 {
		return json.Marshal(h.Name)
	}
	type plain ToolHandle
	return json.Marshal(plain(h))
}

// UnmarshalJSON accepts a string or an object.
func (h *ToolHandle) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*h = ToolHandle{}
		return json.Unmarshal(b, &h.Name)
	}
	type plain ToolHandle
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*h = ToolHandle(p)
	return nil
}

// PlanStep is one ordered, uniquely identified unit of work of a typed plan.
type PlanStep struct {
	ID           string       `json:"id"`
	Description  string       `json:"description"`
	Tools        []ToolHandle `json:"tools"`
	ExitCriteria string       `json:"exit_criteria"`
	// DependsOn lists earlier steps this one needs (optional).
	DependsOn []string `json:"depends_on,omitempty"`
}

// ToolNames returns the names of the step's intended tools.
func (s PlanStep) ToolNames() []string {
	names := make([]string, 0, len(s.Tools))
	for _, t := range s.Tools {
		names = append(names, t.Name)
	}
	return names
}

// TypedPlan is the plan of the plan-act-reflect (par) loop: ordered steps,
// each with an id, the tools it intends to use and its exit criteria,
// authored before any tool call and versioned plan.v1, plan.v2...
type TypedPlan struct {
	Steps        []PlanStep `json:"steps"`
	ExitCriteria string     `json:"exit_criteria"`
}

// Clone returns a deep copy, so versions kept in a PlanHistory never share
// slices with a plan being edited.
func (p TypedPlan) Clone() TypedPlan {
	b, _ := json.Marshal(p)
	var c TypedPlan
	_ = json.Unmarshal(b, &c)
	if c.Steps == nil {
		c.Steps = []PlanStep{}
	}
	return c
}

// Step returns the step with the given id.
func (p TypedPlan) Step(id string) (PlanStep, bool) {
	for _, s := range p.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return PlanStep{}, false
}

// Validate checks the plan: at least one step, unique non-empty step ids,
// known tool names (when known is not nil) and dependencies on known steps.
// The error lists every problem, each located (steps[1].id: ...).
func (p TypedPlan) Validate(known []string) error {
	var problems []string
	if len(p.Steps) == 0 {
		problems = append(problems, "the plan has no steps (at least one is required)")
	}
	seen := map[string]int{}
	for i, s := range p.Steps {
		switch prev, dup := seen[s.ID]; {
		case strings.TrimSpace(s.ID) == "":
			problems = append(problems, fmt.Sprintf("steps[%d].id is empty", i))
		case dup:
			problems = append(problems, fmt.Sprintf("steps[%d].id: duplicate step id %q (also steps[%d])", i, s.ID, prev))
		default:
			seen[s.ID] = i
		}
		for j, t := range s.Tools {
			if known != nil && !slices.Contains(known, t.Name) {
				problems = append(problems, fmt.Sprintf("steps[%d].tools[%d]: unknown tool %q (tools: %s)", i, j, t.Name, strings.Join(known, ", ")))
			}
		}
	}
	for i, s := range p.Steps {
		for j, d := range s.DependsOn {
			if at, ok := seen[d]; !ok || at >= i {
				problems = append(problems, fmt.Sprintf("steps[%d].depends_on[%d]: %q is not an earlier step", i, j, d))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid plan: %s", strings.Join(problems, "; "))
	}
	return nil
}

// PlanID is the stable identifier of plan version n: "plan.vN".
func PlanID(n int) string { return "plan.v" + strconv.Itoa(n) }

// ParsePlanID reads "plan.vN" (or just N) back into a version number.
func ParsePlanID(s string) (int, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "plan.v")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %q is not a plan version (want plan.vN)", ErrPlanVersion, s)
	}
	return n, nil
}

// StepChange is one step present in both versions of a diff, with the
// fields that differ.
type StepChange struct {
	ID     string   `json:"id"`
	Fields []string `json:"fields"`
	Before PlanStep `json:"before"`
	After  PlanStep `json:"after"`
}

// PlanDiff describes what changed from one plan version to another. Steps
// are matched by id.
type PlanDiff struct {
	From    string       `json:"from"`
	To      string       `json:"to"`
	Added   []PlanStep   `json:"added,omitempty"`
	Removed []PlanStep   `json:"removed,omitempty"`
	Changed []StepChange `json:"changed,omitempty"`
	// Reordered is set when the steps both versions share changed order.
	Reordered           bool `json:"reordered,omitempty"`
	ExitCriteriaChanged bool `json:"exit_criteria_changed,omitempty"`
	// RollbackOf names the version a rollback restored.
	RollbackOf string `json:"rollback_of,omitempty"`
}

// Empty reports whether the two versions have the same steps and criteria.
func (d PlanDiff) Empty() bool {
	return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0 && !d.Reordered && !d.ExitCriteriaChanged
}

// DiffPlans compares two plans step by step.
func DiffPlans(a, b TypedPlan) PlanDiff {
	var d PlanDiff
	var sharedA, sharedB []string
	for _, s := range a.Steps {
		if t, ok := b.Step(s.ID); ok {
			sharedA = append(sharedA, s.ID)
			if fields := stepFieldsChanged(s, t); len(fields) > 0 {
				d.Changed = append(d.Changed, StepChange{ID: s.ID, Fields: fields, Before: s, After: t})
			}
		} else {
			d.Removed = append(d.Removed, s)
		}
	}
	for _, s := range b.Steps {
		if _, ok := a.Step(s.ID); ok {
			sharedB = append(sharedB, s.ID)
		} else {
			d.Added = append(d.Added, s)
		}
	}
	d.Reordered = !slices.Equal(sharedA, sharedB)
	d.ExitCriteriaChanged = a.ExitCriteria != b.ExitCriteria
	return d
}

func stepFieldsChanged(a, b PlanStep) []string {
	var f []string
	if a.Description != b.Description {
		f = append(f, "description")
	}
	ta, _ := json.Marshal(a.Tools)
	tb, _ := json.Marshal(b.Tools)
	if !bytes.Equal(ta, tb) {
		f = append(f, "tools")
	}
	if a.ExitCriteria != b.ExitCriteria {
		f = append(f, "exit_criteria")
	}
	if !slices.Equal(a.DependsOn, b.DependsOn) {
		f = append(f, "depends_on")
	}
	return f
}

// PlanHistory keeps every version of a run's typed plan, so that revisions
// can be diffed and rolled back. Versions are numbered from 1 and never
// change once added. It is not safe for concurrent use.
type PlanHistory struct {
	versions []TypedPlan
}

// Add records p as the next version and returns its number.
func (h *PlanHistory) Add(p TypedPlan) int {
	h.versions = append(h.versions, p.Clone())
	return len(h.versions)
}

// Len is the number of versions.
func (h *PlanHistory) Len() int { return len(h.versions) }

// Version returns a copy of version n (1-based).
func (h *PlanHistory) Version(n int) (TypedPlan, error) {
	if n < 1 || n > len(h.versions) {
		return TypedPlan{}, fmt.Errorf("%w: no plan version %d (have %d)", ErrPlanVersion, n, len(h.versions))
	}
	return h.versions[n-1].Clone(), nil
}

// Latest returns a copy of the newest version and its number (0 when empty).
func (h *PlanHistory) Latest() (TypedPlan, int) {
	if len(h.versions) == 0 {
		return TypedPlan{}, 0
	}
	return h.versions[len(h.versions)-1].Clone(), len(h.versions)
}

// Diff compares version a with version b.
func (h *PlanHistory) Diff(a, b int) (PlanDiff, error) {
	pa, err := h.Version(a)
	if err != nil {
		return PlanDiff{}, err
	}
	pb, err := h.Version(b)
	if err != nil {
		return PlanDiff{}, err
	}
	d := DiffPlans(pa, pb)
	d.From, d.To = PlanID(a), PlanID(b)
	return d, nil
}

// Rollback adds a new version equal to version n and returns its number and
// its diff from the previous version (RollbackOf names version n). History
// is never rewritten: rolling back is itself a revision.
func (h *PlanHistory) Rollback(n int) (int, PlanDiff, error) {
	p, err := h.Version(n)
	if err != nil {
		return 0, PlanDiff{}, err
	}
	prev := len(h.versions)
	v := h.Add(p)
	d, _ := h.Diff(prev, v)
	d.RollbackOf = PlanID(n)
	return v, d, nil
}

// DecodeTypedPlan decodes a typed plan from JSON and validates it against
// the known tool names (see Validate); the plan returned is a deep copy.
func DecodeTypedPlan(raw json.RawMessage, known []string) (TypedPlan, error) {
	var p TypedPlan
	if err := json.Unmarshal(raw, &p); err != nil {
		return TypedPlan{}, fmt.Errorf("the plan does not match the schema: %v", err)
	}
	if err := p.Validate(known); err != nil {
		return TypedPlan{}, err
	}
	return p.Clone(), nil
}
