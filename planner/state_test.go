package planner

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func threeTodos() WriteTodosArgs {
	return WriteTodosArgs{Todos: []Todo{
		{ID: "search", Content: "Search the vault", Status: StatusInProgress},
		{ID: "read", Content: "Read the top notes", Status: StatusPending},
		{ID: "answer", Content: "Write the answer", Status: StatusPending},
	}}
}

func fixedClock() (func() time.Time, *time.Time) {
	now := time.Date(2026, 2, 10, 9, 0, 0, 0, time.UTC)
	return func() time.Time { return now }, &now
}

func TestApplyResultJSON(t *testing.T) {
	s := NewState()
	res, err := s.Apply(threeTodos())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"ok":true,"revision":1,"todoCount":3,"inProgress":"search"}`; got != want {
		t.Fatalf("result JSON = %s, want %s", got, want)
	}
}

func TestApplyReplaceSemantics(t *testing.T) {
	clock, now := fixedClock()
	s := &State{Now: clock}
	if s.HasPlan() || s.Summary() != "" || s.Render() != "" {
		t.Fatal("empty state has a plan")
	}
	if _, err := s.Apply(WriteTodosArgs{Todos: threeTodos().Todos, Focus: "notes", Note: "n"}); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute)
	second := WriteTodosArgs{Todos: []Todo{
		{ID: "search", Content: "Search the vault", Status: StatusCompleted},
		{ID: "summarize", Content: "Summarize", Status: StatusPending},
	}}
	res, err := s.Apply(second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 2 || res.TodoCount != 2 || res.InProgress != "" || res.Unchanged {
		t.Fatalf("second result = %+v", res)
	}
	p := s.Snapshot()
	if len(p.Todos) != 2 || p.Todos[1].ID != "summarize" || p.Focus != "" || p.Note != "" {
		t.Fatalf("plan not replaced: %+v", p)
	}
	if !p.UpdatedAt.Equal(*now) {
		t.Errorf("UpdatedAt = %v, want %v", p.UpdatedAt, *now)
	}

	// Snapshots are copies.
	p.Todos[0].Status = StatusPending
	if s.Snapshot().Todos[0].Status != StatusCompleted {
		t.Error("snapshot shares memory with state")
	}
	// The caller's slice is copied too.
	second.Todos[1].Content = "mutated"
	if s.Snapshot().Todos[1].Content != "Summarize" {
		t.Error("state shares memory with args")
	}

	// Identical rewrite: no new revision.
	res, err = s.Apply(WriteTodosArgs{Todos: []Todo{
		{ID: "search", Content: "Search the vault", Status: StatusCompleted},
		{ID: "summarize", Content: "Summarize", Status: StatusPending},
	}})
	if err != nil || res.Revision != 2 || !res.Unchanged {
		t.Fatalf("identical rewrite = %+v, %v", res, err)
	}

	// Invalid args leave the state untouched.
	bad := threeTodos()
	bad.Todos[1].Status = "done"
	if _, err := s.Apply(bad); !errors.Is(err, ErrInvalidArgs) {
		t.Fatalf("invalid apply error = %v", err)
	}
	if got := s.Snapshot(); got.Revision != 2 || len(got.Todos) != 2 {
		t.Fatalf("invalid apply changed state: %+v", got)
	}
	if _, err := s.ApplyJSON([]byte(`{"todos":[]}`)); err == nil {
		t.Fatal("ApplyJSON accepted empty todos")
	}
	res, err = s.ApplyJSON(todosJSON(t, 4, nil))
	if err != nil || res.Revision != 3 || res.TodoCount != 4 {
		t.Fatalf("ApplyJSON = %+v, %v", res, err)
	}
}

func TestApplyConcurrent(t *testing.T) {
	s := NewState()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a := threeTodos()
			a.Note = strings.Repeat("x", i+1) // distinct, so each is a revision
			if _, err := s.Apply(a); err != nil {
				t.Error(err)
			}
			_ = s.Summary()
		}(i)
	}
	wg.Wait()
	if got := s.Snapshot().Revision; got != 8 {
		t.Fatalf("revision = %d, want 8", got)
	}
}

func TestSummaryAndRender(t *testing.T) {
	s := NewState()
	a := threeTodos()
	a.Todos[0].Status = StatusCompleted
	a.Todos[1].Status = StatusInProgress
	a.Focus = "notes"
	a.Note = "Prefer recent notes"
	s.Apply(WriteTodosArgs{Todos: []Todo{{ID: "x", Content: "x", Status: StatusPending}}})
	if _, err := s.Apply(a); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Summary(), "Plan r2: 1/3 done · now: Read the top notes"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	wantRender := "Plan (revision 2, 1/3 done) · focus: notes\n" +
		"- [x] Search the vault (id: search)\n" +
		"- [~] Read the top notes (id: read, in progress)\n" +
		"- [ ] Write the answer (id: answer)\n" +
		"Note: Prefer recent notes"
	if got := s.Render(); got != wantRender {
		t.Errorf("Render =\n%s\nwant\n%s", got, wantRender)
	}

	a.Todos[1].Status = StatusPending
	s.Apply(a)
	if got, want := s.Summary(), "Plan r3: 1/3 done · next: Read the top notes"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if _, err := s.Progress(ProgressArgs{PlanStatus: PlanStatusCompleted}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Summary(), "Plan r3: 3/3 done · completed"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	long := strings.Repeat("é", 140)
	s.Apply(WriteTodosArgs{Todos: []Todo{{ID: "a", Content: long, Status: StatusInProgress}}})
	if got := s.Summary(); len([]rune(got)) > 100 || !strings.HasSuffix(got, "…") {
		t.Errorf("long summary not capped: %q", got)
	}
}
