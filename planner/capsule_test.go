package planner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestCapsuleBuilder(t *testing.T) {
	b := NewCapsuleBuilder("  Summarize project notes ")
	if !b.AddFinding("Alpha ships in March") {
		t.Fatal("finding dropped")
	}
	if b.AddFinding("  alpha   ships in MARCH ") || b.AddFinding("   ") {
		t.Fatal("duplicate or blank finding kept")
	}
	for i := 0; i < 20; i++ {
		b.AddFinding(fmt.Sprintf("finding %d", i))
	}
	long := strings.Repeat("ü", 300)
	b2 := NewCapsuleBuilder("g")
	b2.AddFinding(long)
	if f := b2.Build(nil).KeyFindings[0]; len([]rune(f)) != MaxFindingLen || !strings.HasSuffix(f, "…") {
		t.Fatalf("long finding = %d runes", len([]rune(f)))
	}

	if !b.AddArtifact(Artifact{Type: "note", Ref: "Projects/Alpha.md"}) {
		t.Fatal("artifact dropped")
	}
	if !b.AddArtifact(Artifact{Type: "note", Ref: "Projects/Alpha.md", Summary: "Timeline"}) {
		t.Fatal("summary not filled in")
	}
	if b.AddArtifact(Artifact{Type: "note", Ref: "Projects/Alpha.md", Summary: "Other"}) || b.AddArtifact(Artifact{Type: "note"}) {
		t.Fatal("duplicate or empty artifact kept")
	}
	for i := 0; i < 30; i++ {
		b.AddArtifact(Artifact{Type: "note", Ref: fmt.Sprintf("n%d.md", i)})
	}

	s := NewState()
	s.Apply(threeTodos())
	s.Progress(ProgressArgs{StepID: "search"})
	p := s.Snapshot()
	c := b.Build(&p)
	if c.Goal != "Summarize project notes" || len(c.KeyFindings) != MaxFindings || len(c.Artifacts) != MaxArtifacts {
		t.Fatalf("capsule = %+v", c)
	}
	if c.Artifacts[0].Summary != "Timeline" {
		t.Errorf("artifact = %+v", c.Artifacts[0])
	}
	if fmt.Sprint(c.NextActions) != "[Read the top notes Write the answer]" {
		t.Errorf("next actions = %v", c.NextActions)
	}
	if c.PlanSnapshot == nil || c.PlanSnapshot.Revision != 1 {
		t.Fatal("no plan snapshot")
	}
	p.Todos[0].Content = "mutated"
	if c.PlanSnapshot.Todos[0].Content == "mutated" {
		t.Error("capsule shares the plan's memory")
	}
	if !strings.Contains(c.Summary(), "Key findings:\n- Alpha ships in March") {
		t.Errorf("summary = %s", c.Summary())
	}

	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	for _, k := range []string{"goal", "planSnapshot", "keyFindings", "artifacts", "nextActions"} {
		if _, ok := m[k]; !ok {
			t.Errorf("capsule JSON lacks %q: %s", k, raw)
		}
	}

	// No plan and no findings: empty arrays, not null; no next actions.
	raw, _ = json.Marshal(NewCapsuleBuilder("g").Build(nil))
	if got, want := string(raw), `{"goal":"g","keyFindings":[],"artifacts":[]}`; got != want {
		t.Errorf("empty capsule = %s, want %s", got, want)
	}
	s.Progress(ProgressArgs{PlanStatus: PlanStatusCompleted})
	p = s.Snapshot()
	if c := NewCapsuleBuilder("g").Build(&p); len(c.NextActions) != 0 {
		t.Errorf("completed plan has next actions %v", c.NextActions)
	}
}
