package planner

import (
	"strings"
	"testing"
)

func TestOveruseGuard(t *testing.T) {
	var (
		plan   = []string{"write_todos"}
		prog   = []string{"plan_progress"}
		both   = []string{"write_todos", "plan_progress"}
		act    = []string{"localSearch"}
		mixed  = []string{"write_todos", "readNote"}
		noCall = []string(nil)
	)
	tests := []struct {
		name  string
		max   int
		iters [][]string
		want  []bool // blocked per iteration
	}{
		{"two planner-only ok, third blocked", 0, [][]string{plan, prog, plan}, []bool{false, false, true}},
		{"blocked until action", 0, [][]string{plan, plan, both, plan, act, plan}, []bool{false, false, true, true, false, false}},
		{"action resets", 0, [][]string{plan, plan, act, plan, plan, plan}, []bool{false, false, false, false, false, true}},
		{"mixed iteration resets and runs", 0, [][]string{plan, plan, mixed, prog, prog, prog}, []bool{false, false, false, false, false, true}},
		{"text-only iterations are neutral", 0, [][]string{plan, noCall, plan, noCall, plan}, []bool{false, false, false, false, true}},
		{"actions never blocked", 0, [][]string{act, act, act, act}, []bool{false, false, false, false}},
		{"custom max", 1, [][]string{plan, plan, act, plan}, []bool{false, true, false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &OveruseGuard{Max: tc.max}
			for i, names := range tc.iters {
				if check := g.Check(names); check != tc.want[i] {
					t.Fatalf("iteration %d: Check = %v, want %v", i, check, tc.want[i])
				}
				if got := g.Step(names); got != tc.want[i] {
					t.Fatalf("iteration %d (%v): blocked = %v, want %v", i, names, got, tc.want[i])
				}
			}
		})
	}
	if ErrOveruse != "planner_overuse_execute_next_step" {
		t.Fatal("ErrOveruse text changed")
	}
}

func multiPlan(t *testing.T, s *State, note string) Plan {
	t.Helper()
	a := threeTodos()
	a.Note = note
	if _, err := s.Apply(a); err != nil {
		t.Fatal(err)
	}
	return s.Snapshot()
}

func TestContinuationSimplePlanBypasses(t *testing.T) {
	var c Continuation
	if c.ShouldContinue(Plan{}) {
		t.Error("continues without a plan")
	}
	s := NewState()
	s.Apply(WriteTodosArgs{Todos: []Todo{{ID: "a", Content: "Answer", Status: StatusInProgress}}})
	if c.ShouldContinue(s.Snapshot()) {
		t.Error("continues a one-todo plan")
	}
}

func TestContinuationSafetyValve(t *testing.T) {
	s := NewState()
	p := multiPlan(t, s, "")
	var c Continuation
	for i := 1; i <= DefaultMaxContinuations; i++ {
		if !c.ShouldContinue(p) {
			t.Fatalf("attempt %d: ShouldContinue = false", i)
		}
		msg, attempt := c.Next(p, "Summarize my project notes")
		if attempt != i {
			t.Fatalf("attempt = %d, want %d", attempt, i)
		}
		for _, want := range []string{"<plan-continuation>", "Summarize my project notes", p.Render(),
			"next unfinished step: Search the vault (id: search)", `plan_progress with plan_status="completed"`, "</plan-continuation>"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("message lacks %q:\n%s", want, msg)
			}
		}
	}
	if c.ShouldContinue(p) {
		t.Fatal("continued past the maximum")
	}
}

func TestContinuationResets(t *testing.T) {
	s := NewState()
	p := multiPlan(t, s, "")
	c := Continuation{Max: 2}
	for c.ShouldContinue(p) {
		c.Next(p, "goal")
	}
	if c.Attempts() != 2 {
		t.Fatalf("attempts = %d", c.Attempts())
	}
	// plan_progress is no new revision: no reset.
	if _, err := s.Progress(ProgressArgs{StepID: "search"}); err != nil {
		t.Fatal(err)
	}
	if c.ShouldContinue(s.Snapshot()) {
		t.Fatal("plan_progress reset the continuation count")
	}
	// A new revision resets.
	p = multiPlan(t, s, "replanned")
	if !c.ShouldContinue(p) || c.Attempts() != 0 {
		t.Fatalf("new revision did not reset: attempts %d", c.Attempts())
	}
	if _, attempt := c.Next(p, ""); attempt != 1 {
		t.Fatalf("attempt after reset = %d", attempt)
	}
}

func TestContinuationStopsWhenDone(t *testing.T) {
	s := NewState()
	multiPlan(t, s, "")
	var c Continuation
	s.Progress(ProgressArgs{PlanStatus: PlanStatusCompleted})
	if c.ShouldContinue(s.Snapshot()) {
		t.Error("continues a completed plan")
	}
	a := threeTodos()
	for i := range a.Todos {
		a.Todos[i].Status = StatusCompleted
	}
	s.Apply(a)
	if c.ShouldContinue(s.Snapshot()) {
		t.Error("continues a plan whose todos are all completed")
	}
	if (&Continuation{Max: -1}).ShouldContinue(multiPlan(t, s, "x")) {
		t.Error("negative Max did not disable the guard")
	}
}

func TestContinuationMessageWithoutGoal(t *testing.T) {
	s := NewState()
	msg := ContinuationMessage(multiPlan(t, s, ""), "  ")
	if strings.Contains(msg, "Goal:") {
		t.Errorf("empty goal rendered:\n%s", msg)
	}
}
