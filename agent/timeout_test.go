package agent

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
)

// stuckIndex is an index whose first search ignores its context and hangs
// until released, like a search stuck on a slow disk.
type stuckIndex struct {
	*fakeIndex
	release chan struct{}
	calls   atomic.Int32
}

func (s *stuckIndex) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	if s.calls.Add(1) == 1 {
		<-s.release
	}
	return s.fakeIndex.Search(ctx, req)
}

// waitModel runs before before each model call after the first.
type waitModel struct {
	llm.Model
	calls  int
	before func()
}

func (m *waitModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	if m.calls++; m.calls > 1 && m.before != nil {
		m.before()
	}
	return m.Model.Chat(ctx, req, onDelta)
}

// waitGoroutines waits until no more than n goroutines are left, failing
// the test after a generous deadline. Goroutine exits send no event to
// wait on; this is the condition itself.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still running, want at most %d", runtime.NumGoroutine(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTimedOutToolLeavesRunStateAlone times a search out while its
// goroutine is stuck, then lets that goroutine finish while the run goes
// on. The abandoned goroutine must not touch the run's state (go test
// -race reports it if it does), and the search it never delivered must not
// count: repeating it is not a "duplicate search".
func TestTimedOutToolLeavesRunStateAlone(t *testing.T) {
	idx := &stuckIndex{fakeIndex: newFakeIndex(t), release: make(chan struct{})}
	search := call("localSearch", map[string]any{"query": "sourdough starter"})
	model := &waitModel{Model: llm.NewScripted([]llm.Turn{
		toolTurn("Searching.", search),
		toolTurn("Searching again.", search),
		{Content: "Feed it daily. [[Sourdough Starter]]"},
	})}
	a, err := New(Deps{Model: model, Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tool, _ := a.registry.Get("localSearch")
	tool.Timeout = 20 * time.Millisecond

	before := runtime.NumGoroutine()
	// Once the run has given up on the first search (in the run's
	// goroutine), the stuck search is released and later searches get time
	// enough; the next model call waits until the abandoned goroutine has
	// finished.
	rec := newRecorder()
	released := false
	sink := SinkFunc(func(e Event) {
		rec.Emit(e)
		if p, ok := e.Payload.(ToolReturnedPayload); ok && !p.Success && !released {
			released = true
			tool.Timeout = time.Minute
			close(idx.release)
		}
	})
	model.before = func() { waitGoroutines(t, before) }

	res, err := a.Run(context.Background(), RunRequest{RunID: "r1", Message: "how do I keep my sourdough starter alive?"}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopFinalAnswer {
		t.Fatalf("result = %+v", res)
	}
	rets := returned(rec)
	if len(rets) != 2 {
		t.Fatalf("tool results = %+v", rets)
	}
	if rets[0].Success || !strings.Contains(rets[0].Error, "timed out") {
		t.Fatalf("first search: %s %s, want a timeout", rets[0].Summary, rets[0].Error)
	}
	if !rets[1].Success || strings.Contains(string(rets[1].Output), "nearly the same as an earlier one") {
		t.Fatalf("second search: %s %s: the timed-out search was counted", rets[1].Summary, rets[1].Output)
	}
}
