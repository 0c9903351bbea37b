package reasoning

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
)

func ev(typ string, p agent.Payload) agent.Event {
	return agent.Event{EventType: typ, Payload: p, RunID: "run-1"}
}

// recorder collects published contents.
type recorder struct {
	mu       sync.Mutex
	contents []string
	steps    []string
}

func (r *recorder) publish(c string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.contents = append(r.contents, c)
}

func (r *recorder) step(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.contents...)
}

func (r *recorder) last(t *testing.T) (Marker, string) {
	t.Helper()
	c := r.snapshot()
	if len(c) == 0 {
		t.Fatal("nothing published")
	}
	return mustParse(t, c[len(c)-1])
}

func newTestObserver(planner bool) (*Observer, *recorder, *fakeClock) {
	clk := newFakeClock()
	rec := &recorder{}
	o := NewObserver(Config{Now: clk.Now, Planner: planner, Publish: rec.publish, OnStep: rec.step})
	return o, rec, clk
}

func toolCallResponse(names ...string) agent.ModelRespondedPayload {
	var calls []llm.ToolCall
	for i, n := range names {
		calls = append(calls, llm.ToolCall{ID: string(rune('a' + i)), Name: n, Arguments: "{}"})
	}
	return agent.ModelRespondedPayload{Phase: "act", Response: llm.Response{ToolCalls: calls}}
}

// simulatedRun is a planner run: plan, search, read, answer.
func simulatedRun() []agent.Event {
	return []agent.Event{
		ev(agent.EventRunStarted, agent.RunStartedPayload{Goal: "q", Mode: "react", MaxIterations: 10, Planner: true}),
		ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 1}),
		ev(agent.EventModelResponded, toolCallResponse("write_todos")),
		ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "write_todos", Summary: "Writing plan"}),
		ev(agent.EventToolReturned, agent.ToolReturnedPayload{Tool: "write_todos", Success: true, Summary: "Plan saved"}),
		ev(agent.EventPlanAuthored, agent.PlanPayload{Revision: 1, Summary: "Plan r1: 0/2 done · now: search notes"}),
		ev(agent.EventReflectionAdded, agent.TextPayload{Text: "I should **search** first. Then read."}),
		ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 2}),
		ev(agent.EventModelResponded, toolCallResponse("localSearch")),
		ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "localSearch", Summary: `Searching notes for "go"`}),
		ev(agent.EventToolReturned, agent.ToolReturnedPayload{Tool: "localSearch", Success: true, Summary: "Found 5 relevant notes"}),
		ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 3}),
		ev(agent.EventModelResponded, toolCallResponse("readNote")),
		ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "readNote", Summary: "Reading go.md"}),
		ev(agent.EventToolReturned, agent.ToolReturnedPayload{Tool: "readNote", Success: false, Error: "note not found"}),
		ev(agent.EventPlanUpdated, agent.PlanPayload{Revision: 2, Todos: []agent.Todo{
			{ID: "a", Content: "search notes", Status: "completed"},
			{ID: "b", Content: "read notes", Status: "in_progress"},
		}}),
		ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 4}),
		ev(agent.EventAnswerDelta, agent.TextPayload{Text: "Go is "}),
		ev(agent.EventAnswerDelta, agent.TextPayload{Text: "a language."}),
		ev(agent.EventModelResponded, agent.ModelRespondedPayload{Phase: "act", Response: llm.Response{Content: "Go is a language."}}),
		ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer, Answer: "Go is a programming language.", Iterations: 4}),
	}
}

func TestObserverSimulatedRun(t *testing.T) {
	o, rec, clk := newTestObserver(true)
	completed := -1
	o.cfg.OnComplete = func(e int) { completed = e }

	statuses := []Status{o.Block().Status()}
	for _, e := range simulatedRun() {
		o.Emit(e)
		clk.Advance(400 * time.Millisecond)
		if s := o.Block().Status(); s != statuses[len(statuses)-1] {
			statuses = append(statuses, s)
		}
	}
	if want := []Status{StatusIdle, StatusReasoning, StatusCollapsed, StatusComplete}; !reflect.DeepEqual(statuses, want) {
		t.Errorf("statuses = %v, want %v", statuses, want)
	}

	wantSteps := []string{
		"[Plan] Plan r1: 0/2 done · now: search notes",
		"[Reflect] I should search first.",
		`[Act] Searching notes for "go"`,
		"[Obs] Found 5 relevant notes",
		"[Act] Reading go.md",
		"[Obs] readNote failed: note not found",
		"[Plan] Plan r2: 1/2 done · now: read notes",
	}
	if !reflect.DeepEqual(rec.steps, wantSteps) {
		t.Errorf("OnStep steps =\n%q\nwant\n%q", rec.steps, wantSteps)
	}
	m, rest := rec.last(t)
	if m.Status != StatusComplete || !reflect.DeepEqual(m.Steps, wantSteps) {
		t.Errorf("final marker = %+v", m)
	}
	if rest != "Go is a programming language." {
		t.Errorf("answer = %q, want the RunTerminated answer", rest)
	}
	if completed != m.Elapsed {
		t.Errorf("OnComplete(%d), marker elapsed %d", completed, m.Elapsed)
	}

	// Published statuses follow the state machine in order, and no two
	// consecutive publishes are equal.
	var pubStatuses []Status
	contents := rec.snapshot()
	for i, c := range contents {
		if i > 0 && c == contents[i-1] {
			t.Fatalf("publish %d repeats the previous content", i)
		}
		pm, _ := mustParse(t, c)
		if len(pubStatuses) == 0 || pubStatuses[len(pubStatuses)-1] != pm.Status {
			pubStatuses = append(pubStatuses, pm.Status)
		}
		if pm.Status == StatusReasoning && len(pm.Steps) > DefaultWindow {
			t.Fatalf("reasoning publish shows %d steps", len(pm.Steps))
		}
	}
	if want := []Status{StatusReasoning, StatusCollapsed, StatusComplete}; !reflect.DeepEqual(pubStatuses, want) {
		t.Errorf("published statuses = %v, want %v", pubStatuses, want)
	}

	// Events after termination change nothing.
	n := len(contents)
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "late"}))
	o.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "x", Summary: "late"}))
	if len(rec.snapshot()) != n {
		t.Error("events after RunTerminated were published")
	}
}

func TestObserverPlannerOff(t *testing.T) {
	o, rec, _ := newTestObserver(false)
	for _, e := range simulatedRun() {
		o.Emit(e)
	}
	want := []string{
		"Plan r1: 0/2 done · now: search notes",
		`Searching notes for "go"`,
		"Found 5 relevant notes",
		"Reading go.md",
		"readNote failed: note not found",
		"Plan r2: 1/2 done · now: read notes",
	}
	if !reflect.DeepEqual(rec.steps, want) {
		t.Errorf("steps =\n%q\nwant\n%q", rec.steps, want)
	}
}

func TestObserverSteps(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name    string
		planner bool
		events  []agent.Event
		want    []string
	}{
		{"fallback summaries", true, []agent.Event{
			ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "getTagList"}),
			ev(agent.EventToolReturned, agent.ToolReturnedPayload{Tool: "getTagList", Success: true}),
			ev(agent.EventToolReturned, agent.ToolReturnedPayload{Tool: "readNote"}),
		}, []string{"[Act] Calling getTagList", "[Obs] Completed getTagList", "[Obs] readNote failed: unknown error"}},
		{"planner tool failure visible", true, []agent.Event{
			ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "plan_progress", Summary: "Updating plan"}),
			ev(agent.EventToolReturned, agent.ToolReturnedPayload{Tool: "plan_progress", Success: false, Summary: "plan_progress failed: no plan"}),
		}, []string{"[Obs] plan_progress failed: no plan"}},
		{"roa phases", false, []agent.Event{
			ev(agent.EventReasonEmitted, agent.TextPayload{Text: `{"plan":"x"}`, Control: map[string]any{"plan": "Search for the budget note. Then read it."}}),
			ev(agent.EventReasonEmitted, agent.TextPayload{Text: "Need the *latest* figures. Check."}),
			ev(agent.EventObserveEmitted, agent.TextPayload{Control: map[string]any{"observation": "The note lists Q3 numbers."}}),
			ev(agent.EventReasonEmitted, agent.TextPayload{Control: map[string]any{"plan": []any{"search", "read"}}}),
		}, []string{"Search for the budget note.", "Need the latest figures.", "The note lists Q3 numbers.", "search; read"}},
		{"continuations count and reset", true, []agent.Event{
			ev(agent.EventPlanContinuation, agent.PlanContinuationPayload{Text: "x"}),
			ev(agent.EventPlanContinuation, agent.PlanContinuationPayload{Text: "x"}),
			ev(agent.EventPlanUpdated, agent.PlanPayload{Revision: 2, Summary: "Plan r2"}),
			ev(agent.EventPlanContinuation, nil),
			ev(agent.EventPlanContinuation, agent.PlanContinuationPayload{Attempt: 4, Max: 7, Remaining: 2}),
		}, []string{
			"Plan not finished; continuing (1/5)", "Plan not finished; continuing (2/5)", "[Plan] Plan r2",
			"Plan not finished; continuing (1/5)", "Plan not finished; continuing (4/7)",
		}},
		{"input and stages", false, []agent.Event{
			ev(agent.EventInputRequested, agent.TextPayload{Text: "Which project?"}),
			ev(agent.EventInputReceived, agent.TextPayload{Text: "Alpha"}),
			ev(agent.EventStageStarted, agent.StagePayload{Stage: "gather", Attempt: 1}),
			ev(agent.EventStageCompleted, agent.StagePayload{Stage: "gather", Outcome: "ok"}),
			ev(agent.EventStageStarted, agent.StagePayload{Stage: "draft", Attempt: 2}),
			ev(agent.EventStageCompleted, agent.StagePayload{Stage: "draft", Outcome: "retry", Error: "schema"}),
		}, []string{"Waiting for your input: Which project?", "Received your input", "Stage: gather", "Stage: draft (attempt 2)", "Stage draft: retry (schema)"}},
		{"reflect capped to MaxStepLen", true, []agent.Event{
			ev(agent.EventReflectionAdded, agent.TextPayload{Text: long}),
		}, []string{"[Reflect] " + truncate.Runes(strings.TrimSpace(long), DefaultMaxStepLen-len("[Reflect] "))}},
		{"reflect off without planner", false, []agent.Event{
			ev(agent.EventReflectionAdded, agent.TextPayload{Text: "Hidden."}),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, rec, _ := newTestObserver(tt.planner)
			for _, e := range tt.events {
				o.Emit(e)
			}
			if !reflect.DeepEqual(rec.steps, tt.want) {
				t.Errorf("steps =\n%q\nwant\n%q", rec.steps, tt.want)
			}
			for _, s := range rec.steps {
				if n := len([]rune(s)); n > DefaultMaxStepLen {
					t.Errorf("step has %d runes: %q", n, s)
				}
			}
		})
	}
}

func TestObserverEndings(t *testing.T) {
	tests := []struct {
		name    string
		review  bool
		payload agent.RunTerminatedPayload
		want    string
	}{
		{"stopped", false, agent.RunTerminatedPayload{StopReason: agent.StopStopped}, "Stopped by user."},
		{"max iterations", false, agent.RunTerminatedPayload{StopReason: agent.StopMaxIterations, Iterations: 10}, "Reached the maximum of 10 iterations."},
		{"timeout", false, agent.RunTerminatedPayload{StopReason: agent.StopTimeout, ElapsedMs: 300_012}, "Timed out after 5m0s."},
		{"error", false, agent.RunTerminatedPayload{StopReason: agent.StopError, Error: "model call: 500\nserver error"}, "Error: model call: 500 server error"},
		{"error without text", false, agent.RunTerminatedPayload{StopReason: agent.StopError}, "Error: unknown error"},
		{"plan review", true, agent.RunTerminatedPayload{StopReason: agent.StopAwaitUserInput}, "Waiting for your review of the plan."},
		{"await input", false, agent.RunTerminatedPayload{StopReason: agent.StopAwaitUserInput}, "Waiting for your input."},
		{"partial answer kept", false, agent.RunTerminatedPayload{StopReason: agent.StopMaxIterations, Answer: "Best effort answer."}, "Best effort answer.\n\nReached the maximum of 10 iterations."},
		{"final without answer", false, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, rec, clk := newTestObserver(true)
			o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{MaxIterations: 10}))
			o.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "localSearch", Summary: "Searching"}))
			clk.Advance(2 * time.Second)
			if tt.review {
				o.Emit(ev(agent.EventPlanReviewPending, agent.PlanPayload{Revision: 1}))
			}
			o.Emit(ev(agent.EventRunTerminated, tt.payload))
			m, rest := rec.last(t)
			if m.Status != StatusComplete {
				t.Errorf("status = %s, want complete", m.Status)
			}
			if m.Elapsed != 2 {
				t.Errorf("elapsed = %d, want 2", m.Elapsed)
			}
			if rest != tt.want {
				t.Errorf("message after marker = %q, want %q", rest, tt.want)
			}
		})
	}
}

func TestObserverDiscardsStreamedTextBeforeToolCalls(t *testing.T) {
	o, rec, _ := newTestObserver(true)
	o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
	o.Emit(ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 1}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "Let me search"}))
	if m, rest := rec.last(t); m.Status != StatusCollapsed || rest != "Let me search" {
		t.Fatalf("after delta: %+v %q", m, rest)
	}
	// The same model response turns out to call a tool.
	o.Emit(ev(agent.EventModelResponded, toolCallResponse("localSearch")))
	if m, rest := rec.last(t); m.Status != StatusReasoning || rest != "" {
		t.Fatalf("after tool-call response: %+v %q, want reasoning with no text", m, rest)
	}
	o.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "localSearch", Summary: "Searching"}))

	// A held-back answer (unfinished plan) is discarded as well.
	o.Emit(ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 2}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "Premature answer"}))
	o.Emit(ev(agent.EventModelResponded, agent.ModelRespondedPayload{Response: llm.Response{Content: "Premature answer"}}))
	o.Emit(ev(agent.EventPlanContinuation, agent.PlanContinuationPayload{Attempt: 1, Max: 5, Text: "Premature answer"}))
	if m, rest := rec.last(t); m.Status != StatusReasoning || rest != "" {
		t.Fatalf("after continuation: %+v %q", m, rest)
	}

	// Text streamed in a turn that is followed by another turn is dropped.
	o.Emit(ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 3}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "Stale"}))
	o.Emit(ev(agent.EventTurnStarted, agent.TurnStartedPayload{Iteration: 4}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "Final "}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "answer."}))
	o.Emit(ev(agent.EventModelResponded, agent.ModelRespondedPayload{Response: llm.Response{Content: "Final answer."}}))
	o.Emit(ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer}))
	m, rest := rec.last(t)
	if m.Status != StatusComplete || rest != "Final answer." {
		t.Fatalf("final: %+v %q", m, rest)
	}
	for _, c := range rec.snapshot() {
		if strings.Contains(c, "StaleFinal") {
			t.Fatalf("stale text leaked: %q", c)
		}
	}
}

// A payload reads the same in a live event and in one read back from a
// trace (the agent decodes every payload into its one type); a missing or
// mismatched payload gives a plain step, and a broken one never gets past
// the decoder.
func TestObserverPayloadForms(t *testing.T) {
	raw, _ := json.Marshal(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "localSearch", Summary: "From trace"}))
	var fromTrace agent.Event
	if err := json.Unmarshal(raw, &fromTrace); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		e    agent.Event
		want []string
	}{
		{"value", ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Summary: "Value"}), []string{"Value"}},
		{"raw json", fromTrace, []string{"From trace"}},
		{"nil", ev(agent.EventToolInvoked, nil), []string{"Calling "}},
		{"wrong type", ev(agent.EventToolInvoked, agent.TextPayload{Text: "not a tool call"}), []string{"Calling "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, rec, _ := newTestObserver(false)
			o.Emit(tt.e)
			if !reflect.DeepEqual(rec.steps, []string{strings.TrimSpace(tt.want[0])}) {
				t.Errorf("steps = %q, want %q", rec.steps, tt.want)
			}
		})
	}
	var garbage agent.Event
	if err := json.Unmarshal([]byte(`{"event_type":"ToolInvoked","payload":{"summary":1}}`), &garbage); err == nil {
		t.Errorf("a broken payload was decoded: %+v", garbage)
	}
}

// tickedObserver returns an observer driven by an injected tick channel.
func tickedObserver(t *testing.T) (*Observer, *recorder, *fakeClock, chan time.Time) {
	t.Helper()
	clk := newFakeClock()
	rec := &recorder{}
	ticks := make(chan time.Time)
	o := NewObserver(Config{Now: clk.Now, Publish: rec.publish, Ticks: ticks})
	o.Start(context.Background())
	t.Cleanup(o.Stop)
	return o, rec, clk, ticks
}

func TestObserverPublishesOnlyOnChange(t *testing.T) {
	tests := []struct {
		name      string
		stepEvery int // emit a step every N ticks (0: none)
		tickEvery time.Duration
		wantElaps int
	}{
		{"no steps, one second", 0, 20 * time.Millisecond, 1},
		{"no steps, half a second", 0, 10 * time.Millisecond, 0},
		{"steps every 10 ticks", 10, 20 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, rec, clk, ticks := tickedObserver(t)
			o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
			steps := 0
			for i := 1; i <= 50; i++ {
				clk.Advance(tt.tickEvery)
				ticks <- clk.Now()
				if tt.stepEvery > 0 && i%tt.stepEvery == 0 {
					steps++
					o.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Summary: "step " + string(rune('A'+i/10))}))
				}
			}
			o.Stop() // the last tick is fully handled once Stop returns
			got := len(rec.snapshot())
			// One publish for the start, one per step, at most one from the
			// timer when the elapsed second changes.
			if max := 1 + steps + tt.wantElaps; got > max || got < 1+steps {
				t.Errorf("%d publishes for 50 ticks and %d steps, want between %d and %d", got, steps, 1+steps, max)
			}
			if m, _ := rec.last(t); m.Elapsed != tt.wantElaps {
				t.Errorf("last published elapsed = %d, want %d", m.Elapsed, tt.wantElaps)
			}
		})
	}
}

func TestObserverTimerStopsPublishingOnceCollapsed(t *testing.T) {
	o, rec, clk, ticks := tickedObserver(t)
	o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "answer"}))
	n := len(rec.snapshot())
	for i := 0; i < 30; i++ {
		clk.Advance(100 * time.Millisecond)
		ticks <- clk.Now()
	}
	o.Stop()
	if got := len(rec.snapshot()); got != n {
		t.Errorf("timer published %d times while collapsed", got-n)
	}
}

func TestObserverTimerLifecycle(t *testing.T) {
	waitDone := func(t *testing.T, o *Observer) {
		t.Helper()
		o.tickMu.Lock()
		done := o.done
		o.tickMu.Unlock()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("timer goroutine still running")
		}
	}
	t.Run("stop", func(t *testing.T) {
		o := NewObserver(Config{Tick: time.Hour})
		o.Start(context.Background())
		o.Start(context.Background()) // second Start is a no-op
		o.Stop()
		waitDone(t, o)
		o.Stop() // idempotent
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		o := NewObserver(Config{Tick: time.Hour})
		o.Start(ctx)
		cancel()
		waitDone(t, o)
		o.Stop()
	})
	t.Run("run terminated", func(t *testing.T) {
		o := NewObserver(Config{Tick: time.Hour})
		o.Start(context.Background())
		o.Emit(ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopStopped}))
		waitDone(t, o)
		o.Stop()
	})
	t.Run("closed ticks", func(t *testing.T) {
		ticks := make(chan time.Time)
		o := NewObserver(Config{Ticks: ticks})
		o.Start(context.Background())
		close(ticks)
		waitDone(t, o)
		o.Stop()
	})
	t.Run("stop without start", func(t *testing.T) {
		NewObserver(Config{}).Stop()
	})
	t.Run("real ticker refreshes elapsed", func(t *testing.T) {
		clk := newFakeClock()
		published := make(chan string, 16)
		o := NewObserver(Config{Now: clk.Now, Tick: time.Millisecond, Publish: func(c string) {
			select {
			case published <- c:
			default:
			}
		}})
		o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
		<-published
		o.Start(context.Background())
		defer o.Stop()
		clk.Advance(3 * time.Second)
		select {
		case c := <-published:
			if m, _ := mustParse(t, c); m.Elapsed != 3 {
				t.Errorf("elapsed = %d, want 3", m.Elapsed)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("timer never published the new elapsed value")
		}
	})
}

func TestObserverConcurrent(t *testing.T) {
	clk := newFakeClock()
	var inFlight, overlaps, count atomic.Int32
	ticks := make(chan time.Time)
	o := NewObserver(Config{Now: clk.Now, Planner: true, Ticks: ticks, Publish: func(string) {
		if inFlight.Add(1) > 1 {
			overlaps.Add(1)
		}
		count.Add(1)
		inFlight.Add(-1)
	}})
	o.Start(context.Background())
	defer o.Stop()

	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			clk.Advance(50 * time.Millisecond)
			ticks <- clk.Now()
		}
	}()
	for g := 0; g < 2; g++ {
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				o.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Tool: "t", Summary: "step"}))
				_ = o.Content()
			}
		}()
	}
	wg.Wait()
	o.Emit(ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer, Answer: "done"}))
	if overlaps.Load() != 0 {
		t.Errorf("Publish overlapped %d times", overlaps.Load())
	}
	if n := len(o.Block().Steps()); n != 400 {
		t.Errorf("%d steps, want 400", n)
	}
	if _, rest, _ := Parse(o.Content()); rest != "done" {
		t.Errorf("answer = %q", rest)
	}
}

func TestLinePrinter(t *testing.T) {
	var buf bytes.Buffer
	lp := NewLinePrinter(&buf)
	o, _, clk := newTestObserver(true)
	o.cfg.OnStep = lp.Step
	o.cfg.OnComplete = lp.Done
	for _, e := range simulatedRun() {
		o.Emit(e)
		clk.Advance(10 * time.Second)
	}
	want := strings.Join([]string{
		"  • [Plan] Plan r1: 0/2 done · now: search notes",
		"  • [Reflect] I should search first.",
		`  • [Act] Searching notes for "go"`,
		"  • [Obs] Found 5 relevant notes",
		"  • [Act] Reading go.md",
		"  • [Obs] readNote failed: note not found",
		"  • [Plan] Plan r2: 1/2 done · now: read notes",
		"Thought for 2m 50s",
		"",
	}, "\n")
	if got := buf.String(); got != want {
		t.Errorf("printed:\n%s\nwant:\n%s", got, want)
	}
}

func TestFormatElapsed(t *testing.T) {
	for in, want := range map[int]string{-1: "0s", 0: "0s", 9: "9s", 59: "59s", 60: "1m 0s", 125: "2m 5s"} {
		if got := FormatElapsed(in); got != want {
			t.Errorf("FormatElapsed(%d) = %q, want %q", in, got, want)
		}
	}
}

// With AnswerInterval, a streamed answer is published at most once per
// interval while the marker stays the same; a step, and the run's end, go
// out at once, and the last publish is the exact final content.
func TestObserverCoalescesAnswerUpdates(t *testing.T) {
	clk := newFakeClock()
	rec := &recorder{}
	o := NewObserver(Config{Now: clk.Now, Publish: rec.publish, AnswerInterval: 50 * time.Millisecond})
	o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
	o.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{Summary: "search"}))
	base := len(rec.snapshot())
	if base != 2 {
		t.Fatalf("%d publishes for the start and a step, want 2", base)
	}
	// 100 deltas within one interval: the first goes out (the marker
	// changed as the answer began), the rest are held back.
	for i := range 100 {
		o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "word" + string(rune('a'+i%26)) + " "}))
	}
	held := len(rec.snapshot()) - base
	if held > 1 {
		t.Errorf("%d publishes for 100 answer deltas within one interval, want at most 1", held)
	}
	// Past the interval, the next delta goes out.
	clk.Advance(60 * time.Millisecond)
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "more "}))
	if got := len(rec.snapshot()) - base; got != held+1 {
		t.Errorf("a delta after the interval: %d publishes, want %d", got, held+1)
	}
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "tail"}))
	o.Emit(ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer, Answer: o.Block().Answer()}))
	o.Stop()
	c := rec.snapshot()
	if c[len(c)-1] != o.Content() {
		t.Errorf("last publish %q is not the final content %q", c[len(c)-1], o.Content())
	}
	if !strings.HasSuffix(o.Content(), "tail") {
		t.Errorf("final content %q lost the answer's tail", o.Content())
	}
}

// A held-back answer update is sent by the timer at the end of the
// interval, or by Stop, so the host always ends with the newest content.
func TestObserverFlushesHeldAnswer(t *testing.T) {
	got := make(chan string, 10)
	clk := newFakeClock()
	o := NewObserver(Config{Now: clk.Now, Publish: func(c string) { got <- c }, AnswerInterval: time.Millisecond})
	o.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "one "}))
	o.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "two"})) // held: the fake clock stands still
	var last string
	for !strings.HasSuffix(last, "one two") {
		last = <-got // the timer's flush
	}
	o.Stop()

	o2 := NewObserver(Config{Now: clk.Now, Publish: func(c string) { got <- c }, AnswerInterval: time.Hour})
	o2.Emit(ev(agent.EventRunStarted, agent.RunStartedPayload{}))
	o2.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "three "}))
	o2.Emit(ev(agent.EventAnswerDelta, agent.TextPayload{Text: "four"}))
	o2.Stop()
	for len(got) > 0 {
		last = <-got
	}
	if !strings.HasSuffix(last, "three four") {
		t.Errorf("after Stop the last publish is %q, want the held answer", last)
	}
}
