package planner

import (
	"errors"
	"strings"
	"testing"
)

func TestProgressNeedsPlan(t *testing.T) {
	s := NewState()
	_, err := s.Progress(ProgressArgs{StepID: "a"})
	if !errors.Is(err, ErrNoPlan) || !strings.Contains(err.Error(), "plan_progress_requires_plan") {
		t.Fatalf("error = %v", err)
	}
	if _, err := s.ProgressJSON([]byte(`{"plan_status":"completed"}`)); !errors.Is(err, ErrNoPlan) {
		t.Fatalf("ProgressJSON error = %v", err)
	}
}

func TestProgressSteps(t *testing.T) {
	s := NewState()
	if _, err := s.Apply(threeTodos()); err != nil {
		t.Fatal(err)
	}
	res, err := s.Progress(ProgressArgs{StepID: "search", StepSummary: "Found 4 notes"})
	if err != nil {
		t.Fatal(err)
	}
	if res.StepCompleted != "search" || res.InProgress != "read" || res.Done != 1 || res.Total != 3 || res.PlanCompleted {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(res.Message, "Next: Read the top notes (id: read)") {
		t.Errorf("message = %q", res.Message)
	}
	p := s.Snapshot()
	if p.Revision != 1 {
		t.Errorf("progress changed revision to %d", p.Revision)
	}
	if p.StepSummaries["search"] != "Found 4 notes" {
		t.Errorf("step summaries = %v", p.StepSummaries)
	}

	// Explicit next step, skipping ahead.
	res, err = s.Progress(ProgressArgs{StepID: "read", NextStep: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	if res.InProgress != "answer" || res.Done != 2 {
		t.Fatalf("result = %+v", res)
	}

	// Unknown ids change nothing and list the known ids.
	before := s.Snapshot()
	for _, a := range []ProgressArgs{{StepID: "nope"}, {StepID: "answer", NextStep: "nope"}} {
		_, err = s.Progress(a)
		if !errors.Is(err, ErrUnknownStep) || !strings.Contains(err.Error(), `"nope" (known ids: search, read, answer)`) {
			t.Fatalf("error = %v", err)
		}
	}
	if after := s.Snapshot(); after.Todos[2].Status != before.Todos[2].Status {
		t.Fatal("failed progress changed state")
	}

	// Last step: all done, prompt to mark completed.
	res, err = s.Progress(ProgressArgs{StepID: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != 3 || res.InProgress != "" || res.PlanCompleted || !strings.Contains(res.Message, `plan_status="completed"`) {
		t.Fatalf("result = %+v", res)
	}
	if s.Snapshot().Revision != 1 {
		t.Fatal("revision moved")
	}
}

func TestProgressPlanCompleted(t *testing.T) {
	s := NewState()
	s.Apply(threeTodos())
	res, err := s.ProgressJSON([]byte(`{"plan_status":"completed"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.PlanCompleted || res.Done != 3 || res.InProgress != "" {
		t.Fatalf("result = %+v", res)
	}
	p := s.Snapshot()
	if !p.Completed || !p.AllDone() || p.Revision != 1 {
		t.Fatalf("plan = %+v", p)
	}
	// Reopen explicitly.
	if res, _ := s.Progress(ProgressArgs{PlanStatus: PlanStatusInProgress}); res.PlanCompleted {
		t.Fatal("in_progress did not clear the mark")
	}
	// A new revision clears the mark too.
	s.Progress(ProgressArgs{PlanStatus: PlanStatusCompleted})
	a := threeTodos()
	a.Note = "replanned"
	s.Apply(a)
	if p := s.Snapshot(); p.Completed || p.Revision != 2 {
		t.Fatalf("after replan = %+v", p)
	}
}

func TestProgressDoesNotAddSecondInProgress(t *testing.T) {
	s := NewState()
	a := threeTodos()
	a.Todos[0].Status = StatusPending
	a.Todos[1].Status = StatusInProgress
	s.Apply(a)
	// Completing a pending step while another is in progress keeps that one.
	res, err := s.Progress(ProgressArgs{StepID: "search"})
	if err != nil {
		t.Fatal(err)
	}
	if res.InProgress != "read" || s.Snapshot().Todos[2].Status != StatusPending {
		t.Fatalf("result = %+v, plan = %+v", res, s.Snapshot().Todos)
	}
	// next_step equal to step_id does not reopen it.
	res, _ = s.Progress(ProgressArgs{StepID: "read", NextStep: "read"})
	if s.Snapshot().Todos[1].Status != StatusCompleted {
		t.Fatalf("step reopened: %+v", res)
	}
}

func TestProgressInvalidArgs(t *testing.T) {
	s := NewState()
	s.Apply(threeTodos())
	if _, err := s.ProgressJSON([]byte(`{"plan_status":"finished"}`)); !errors.Is(err, ErrInvalidArgs) {
		t.Fatalf("error = %v", err)
	}
	if _, err := s.Progress(ProgressArgs{PlanStatus: "finished"}); !errors.Is(err, ErrInvalidArgs) {
		t.Fatalf("typed error = %v", err)
	}
}

func TestValidateSolo(t *testing.T) {
	tests := []struct {
		names []string
		ok    bool
	}{
		{nil, true},
		{[]string{"plan_progress"}, true},
		{[]string{"localSearch", "readNote"}, true},
		{[]string{"write_todos", "localSearch"}, true},
		{[]string{"plan_progress", "localSearch"}, false},
		{[]string{"readNote", "plan_progress"}, false},
		{[]string{"plan_progress", "plan_progress"}, false},
		{[]string{"write_todos", "plan_progress"}, false},
	}
	for _, tc := range tests {
		err := ValidateSolo(tc.names)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateSolo(%v) = %v, want ok=%v", tc.names, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrNotSolo) {
			t.Errorf("error %v is not ErrNotSolo", err)
		}
	}
}
