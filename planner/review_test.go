package planner

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func samplePending(t *testing.T) PendingReview {
	t.Helper()
	s := NewState()
	if _, err := s.Apply(threeTodos()); err != nil {
		t.Fatal(err)
	}
	return PendingReview{RunID: "run-1", Goal: "Summarize project notes", Plan: s.Snapshot()}
}

func TestReviewStorePersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "reviews.db")
	st, err := OpenReviewStore(path, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := samplePending(t)
	if err := st.Put("session-a", want); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}

	st, err = OpenReviewStore(path, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, ok, err := st.Get("session-a")
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if got.RunID != want.RunID || got.Goal != want.Goal || got.Plan.Render() != want.Plan.Render() || got.CreatedAt.IsZero() {
		t.Fatalf("Get = %+v", got)
	}
	got, ok, err = st.Take("session-a")
	if err != nil || !ok || got.RunID != "run-1" {
		t.Fatalf("Take = %+v, %v, %v", got, ok, err)
	}
	// Take clears.
	if _, ok, err := st.Take("session-a"); ok || err != nil {
		t.Fatalf("second Take = %v, %v", ok, err)
	}
	if _, ok, _ := st.Get("session-a"); ok {
		t.Fatal("Get after Take found the entry")
	}
}

func TestReviewStoreTTL(t *testing.T) {
	now := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, err := OpenReviewStore(filepath.Join(t.TempDir(), "r.db"), 30*time.Minute, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := samplePending(t)
	for _, id := range []string{"a", "b", "c"} {
		if err := st.Put(id, p); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(29 * time.Minute)
	if _, ok, _ := st.Get("a"); !ok {
		t.Fatal("entry expired early")
	}
	if err := st.Put("c", p); err != nil { // a re-put refreshes the expiry
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if _, ok, err := st.Get("a"); ok || err != nil {
		t.Fatalf("expired Get = %v, %v", ok, err)
	}
	if _, ok, err := st.Take("a"); ok || err != nil {
		t.Fatalf("expired Take = %v, %v", ok, err)
	}
	// The expired entry was deleted by Take: even a clock moved back finds nothing.
	now = now.Add(-time.Hour)
	if _, ok, _ := st.Get("a"); ok {
		t.Fatal("expired entry not deleted by Take")
	}
	now = now.Add(time.Hour)
	n, err := st.Purge()
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v (want 1: b)", n, err)
	}
	if _, ok, _ := st.Take("c"); !ok {
		t.Fatal("refreshed entry lost")
	}
}

// Two processes on one vault (the sidecars of two editors) use one store
// file: each open store sees the other's reviews, and neither waits for
// the other to close.
func TestReviewStoreShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	a, err := OpenReviewStore(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenReviewStore(path, 0)
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	defer b.Close()
	if err := a.Put("s1", PendingReview{RunID: "r1", Goal: "g"}); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := b.Get("s1"); err != nil || !ok || p.RunID != "r1" {
		t.Fatalf("the other store's review: %+v %v %v", p, ok, err)
	}
	var wg sync.WaitGroup
	for i, st := range []*ReviewStore{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("c%d", i)
			if err := st.Put(id, PendingReview{RunID: id}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 4 {
		if _, ok, err := a.Take(fmt.Sprintf("c%d", i)); !ok || err != nil {
			t.Errorf("review c%d: %v %v", i, ok, err)
		}
	}
	a.Close()
	if err := a.Put("s2", PendingReview{}); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("Put after Close: %v", err)
	}
}

func TestReviewStoreEmptySession(t *testing.T) {
	st, err := OpenReviewStore(filepath.Join(t.TempDir(), "r.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put("", PendingReview{}); !errors.Is(err, ErrNoSession) {
		t.Errorf("Put = %v", err)
	}
	if _, _, err := st.Take(""); !errors.Is(err, ErrNoSession) {
		t.Errorf("Take = %v", err)
	}
	if err := st.Delete("x"); err != nil {
		t.Errorf("Delete of missing = %v", err)
	}
}

func TestFeedbackBlock(t *testing.T) {
	p := samplePending(t)
	got := FeedbackBlock(p, "  Also check the archive folder.\n")
	want := "<plan_feedback>\nplan:\n" + p.Plan.Render() + "\n\nuser_feedback:\nAlso check the archive folder.\n\n" +
		"instruction: If the feedback changes the plan, call write_todos again; otherwise continue with the next step.\n</plan_feedback>"
	if got != want {
		t.Fatalf("FeedbackBlock =\n%s\nwant\n%s", got, want)
	}
	m := PendingMarker(p)
	for _, w := range []string{"<plan_review_pending>", "overall_goal_ui: Summarize project notes", "internal_plan: Plan (revision 1", "run_id: run-1", "</plan_review_pending>"} {
		if !strings.Contains(m, w) {
			t.Errorf("marker lacks %q:\n%s", w, m)
		}
	}
}
