package planner

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustPlan(t testing.TB, s string) TypedPlan {
	t.Helper()
	var p TypedPlan
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatalf("plan %s: %v", s, err)
	}
	return p
}

// Two versions of a plan: search then answer, and search, read, answer.
const (
	planSearchAnswer = `{"steps":[
		{"id":"s1","description":"Search the vault","tools":["localSearch"],"exit_criteria":"notes found"},
		{"id":"s2","description":"Answer","tools":[],"exit_criteria":"answered"}],
		"exit_criteria":"the question is answered"}`
	planSearchReadAnswer = `{"steps":[
		{"id":"s1","description":"Search the vault","tools":["localSearch"],"exit_criteria":"notes found"},
		{"id":"s1b","description":"Read the best note","tools":["readNote"],"exit_criteria":"note read"},
		{"id":"s2","description":"Answer","tools":[],"exit_criteria":"answered"}],
		"exit_criteria":"the question is answered"}`
)

func TestPlanHistoryVersionsAndRollback(t *testing.T) {
	var h PlanHistory
	v1 := mustPlan(t, planSearchAnswer)
	v2 := mustPlan(t, planSearchReadAnswer)
	if n := h.Add(v1); n != 1 {
		t.Fatalf("first version = %d", n)
	}
	if n := h.Add(v2); n != 2 {
		t.Fatalf("second version = %d", n)
	}
	n, d, err := h.Rollback(1)
	if err != nil || n != 3 {
		t.Fatalf("rollback = %d, %v", n, err)
	}
	got3, _ := h.Version(3)
	got1, _ := h.Version(1)
	if !reflect.DeepEqual(got3, got1) {
		t.Fatalf("v3 != v1:\n%+v\n%+v", got3, got1)
	}
	if d.RollbackOf != "plan.v1" || d.From != "plan.v2" || d.To != "plan.v3" || len(d.Removed) != 1 || d.Removed[0].ID != "s1b" {
		t.Fatalf("rollback diff = %+v", d)
	}
	if d13, _ := h.Diff(1, 3); !d13.Empty() {
		t.Fatalf("diff v1..v3 should be empty: %+v", d13)
	}
	// Versions are copies: editing one does not change the history.
	got1.Steps[0].Description = "edited"
	if again, _ := h.Version(1); again.Steps[0].Description != "Search the vault" {
		t.Fatal("Version returned a shared plan")
	}
	for _, bad := range []int{0, 4, -1} {
		if _, err := h.Version(bad); err == nil {
			t.Errorf("Version(%d) did not fail", bad)
		}
		if _, _, err := h.Rollback(bad); err == nil {
			t.Errorf("Rollback(%d) did not fail", bad)
		}
	}
	if _, n := h.Latest(); n != 3 || h.Len() != 3 {
		t.Fatalf("latest = %d, len %d", n, h.Len())
	}
}

func TestDiffPlans(t *testing.T) {
	base := `{"steps":[{"id":"a","description":"A","tools":["localSearch"],"exit_criteria":"x"},{"id":"b","description":"B","tools":[],"exit_criteria":"y"}],"exit_criteria":"e"}`
	tests := []struct {
		name, to                  string
		added, removed            []string
		changed                   map[string][]string
		reordered, criteriaChange bool
	}{
		{name: "identical", to: base},
		{name: "added", to: `{"steps":[{"id":"a","description":"A","tools":["localSearch"],"exit_criteria":"x"},{"id":"b","description":"B","tools":[],"exit_criteria":"y"},{"id":"c","description":"C","tools":[],"exit_criteria":"z"}],"exit_criteria":"e"}`,
			added: []string{"c"}},
		{name: "removed", to: `{"steps":[{"id":"a","description":"A","tools":["localSearch"],"exit_criteria":"x"}],"exit_criteria":"e"}`,
			removed: []string{"b"}},
		{name: "changed fields", to: `{"steps":[{"id":"a","description":"A2","tools":["readNote"],"exit_criteria":"x"},{"id":"b","description":"B","tools":[],"exit_criteria":"y2"}],"exit_criteria":"e"}`,
			changed: map[string][]string{"a": {"description", "tools"}, "b": {"exit_criteria"}}},
		{name: "reordered", to: `{"steps":[{"id":"b","description":"B","tools":[],"exit_criteria":"y"},{"id":"a","description":"A","tools":["localSearch"],"exit_criteria":"x"}],"exit_criteria":"e"}`,
			reordered: true},
		{name: "exit criteria", to: strings.Replace(base, `"exit_criteria":"e"`, `"exit_criteria":"f"`, 1), criteriaChange: true},
		{name: "tool handle object equals string", to: strings.Replace(base, `["localSearch"]`, `[{"name":"localSearch"}]`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DiffPlans(mustPlan(t, base), mustPlan(t, tt.to))
			ids := func(steps []PlanStep) []string {
				var out []string
				for _, s := range steps {
					out = append(out, s.ID)
				}
				return out
			}
			if !slices.Equal(ids(d.Added), tt.added) || !slices.Equal(ids(d.Removed), tt.removed) {
				t.Errorf("added %v removed %v", ids(d.Added), ids(d.Removed))
			}
			changed := map[string][]string{}
			for _, c := range d.Changed {
				changed[c.ID] = c.Fields
			}
			if len(changed) != len(tt.changed) {
				t.Errorf("changed = %v, want %v", changed, tt.changed)
			}
			for id, f := range tt.changed {
				if !slices.Equal(changed[id], f) {
					t.Errorf("changed[%s] = %v, want %v", id, changed[id], f)
				}
			}
			if d.Reordered != tt.reordered || d.ExitCriteriaChanged != tt.criteriaChange {
				t.Errorf("reordered %v criteria %v", d.Reordered, d.ExitCriteriaChanged)
			}
			if d.Empty() != (tt.name == "identical" || tt.name == "tool handle object equals string") {
				t.Errorf("Empty() = %v", d.Empty())
			}
		})
	}
}

func TestTypedPlanValidate(t *testing.T) {
	known := []string{"localSearch", "readNote"}
	tests := []struct{ name, plan, want string }{
		{"ok", planSearchReadAnswer, ""},
		{"no steps", `{"steps":[],"exit_criteria":"x"}`, "the plan has no steps"},
		{"empty id", `{"steps":[{"id":"","description":"d","tools":[]}]}`, "steps[0].id is empty"},
		{"duplicate id", `{"steps":[{"id":"s1","tools":[]},{"id":"s1","tools":[]}]}`, `steps[1].id: duplicate step id "s1" (also steps[0])`},
		{"unknown tool", `{"steps":[{"id":"s1","tools":["localSerch"]}]}`, `steps[0].tools[0]: unknown tool "localSerch" (tools: localSearch, readNote)`},
		{"bad dependency", `{"steps":[{"id":"s1","tools":[],"depends_on":["s2"]},{"id":"s2","tools":[]}]}`, `steps[0].depends_on[0]: "s2" is not an earlier step`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustPlan(t, tt.plan).Validate(known)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestToolHandleJSON(t *testing.T) {
	var s PlanStep
	if err := json.Unmarshal([]byte(`{"id":"a","tools":["localSearch",{"name":"readNote","version":"1.0.0","parameters":{"chunkIndex":0}}]}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.Tools[0].Name != "localSearch" || s.Tools[1].Version != "1.0.0" || s.Tools[1].Parameters["chunkIndex"] != float64(0) {
		t.Fatalf("tools = %+v", s.Tools)
	}
	b, _ := json.Marshal(s.Tools)
	if string(b) != `["localSearch",{"name":"readNote","version":"1.0.0","parameters":{"chunkIndex":0}}]` {
		t.Fatalf("marshal = %s", b)
	}
}
