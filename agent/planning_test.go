package agent

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

// threeTodos is a 3-step plan: a in progress, b and c pending.
func threeTodos() []map[string]any {
	return []map[string]any{
		{"id": "a", "content": "Search the notes", "status": "in_progress"},
		{"id": "b", "content": "Read the best note", "status": "pending"},
		{"id": "c", "content": "Check the tags", "status": "pending"},
	}
}

func writeTodos(todos []map[string]any) llm.ScriptedToolCall {
	return call(planner.ToolWriteTodos, map[string]any{"todos": todos})
}

func progress(args map[string]any) llm.ScriptedToolCall {
	return call(planner.ToolPlanProgress, args)
}

func TestPlanRunsToCompletionThroughPlanProgress(t *testing.T) {
	fi := newFakeIndex(t)
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("I will plan first.", writeTodos(threeTodos())),
		toolTurn("Searching the notes.", call("localSearch", map[string]any{"query": "sourdough"})),
		toolTurn("", progress(map[string]any{"step_id": "a", "step_summary": "Found the sourdough note."})),
		toolTurn("Reading it.", call("readNote", map[string]any{"notePath": firstPath(t, fi, "sourdough")})),
		toolTurn("", progress(map[string]any{"step_id": "b"})),
		toolTurn("Checking tags.", call("getTagList", map[string]any{})),
		toolTurn("", progress(map[string]any{"plan_status": "completed"})),
		{Content: "Feed the starter daily. [[Country Sourdough Loaf]]"},
	})
	res, rec := run(t, a, Config{Planner: true}, "how do I keep my sourdough starter alive, and what tags do I use?")
	if res.StopReason != StopFinalAnswer || res.Answer != "Feed the starter daily. [[Country Sourdough Loaf]]" || res.Iterations != 8 {
		t.Fatalf("result = %+v", res)
	}
	if n := len(rec.ofType(EventPlanContinuation)); n != 0 {
		t.Fatalf("%d continuations for a completed plan", n)
	}
	for _, r := range returned(rec) {
		if !r.Success {
			t.Fatalf("tool %s failed: %s", r.Tool, r.Error)
		}
	}
	// The events the reasoning block turns into [Plan]/[Act]/[Obs]/[Reflect].
	for typ, want := range map[string]int{
		EventPlanAuthored: 1, EventPlanUpdated: 3, EventToolInvoked: 7, EventToolReturned: 7, EventReflectionAdded: 4,
	} {
		if got := len(rec.ofType(typ)); got != want {
			t.Errorf("%d %s events, want %d", got, typ, want)
		}
	}
	plan, ok := res.Plan.(planner.Plan)
	if !ok || !plan.Completed || plan.DoneCount() != 3 {
		t.Fatalf("plan = %#v", res.Plan)
	}
	// The planner tools and their guidance were offered.
	req := model.Requests()[0]
	if !slices.Contains(toolNames(req), planner.ToolWriteTodos) || !strings.Contains(systemOf(req), planner.PromptGuidance) {
		t.Fatalf("planner not offered: %v", toolNames(req))
	}
}

func TestSimplePlanBypassesContinuation(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{
		toolTurn("", writeTodos([]map[string]any{{"id": "only", "content": "Answer", "status": "in_progress"}})),
		{Content: "Done."},
	})
	res, rec := run(t, a, Config{Planner: true}, "x")
	if res.StopReason != StopFinalAnswer || res.Answer != "Done." || res.Iterations != 2 {
		t.Fatalf("result = %+v", res)
	}
	if n := len(rec.ofType(EventPlanContinuation)); n != 0 {
		t.Fatalf("%d continuations", n)
	}
}

// continuationAttempts lists the Attempt of every PlanContinuation event.
func continuationAttempts(rec *recorder) []int {
	var out []int
	for _, e := range rec.ofType(EventPlanContinuation) {
		out = append(out, e.Payload.(PlanContinuationPayload).Attempt)
	}
	return out
}

func TestContinuationLimitForcesFinalization(t *testing.T) {
	turns := []llm.Turn{toolTurn("", writeTodos(threeTodos()))}
	for i := 1; i <= 6; i++ {
		turns = append(turns, llm.Turn{Content: "Text only " + string(rune('0'+i)) + "."})
	}
	a, model := newTestAgent(t, turns)
	res, rec := run(t, a, Config{Planner: true}, "do the three things")
	if res.StopReason != StopFinalAnswer || res.Answer != "Text only 6." || res.Iterations != 7 {
		t.Fatalf("result = %+v", res)
	}
	if got := continuationAttempts(rec); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("continuation attempts = %v", got)
	}
	// Each held-back text is kept, followed by one continuation message
	// carrying the plan and the goal.
	reqs := model.Requests()
	for i := 2; i <= 6; i++ {
		msgs := reqs[i].Messages
		last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
		if last.Role != llm.RoleUser || !strings.Contains(last.Content, "<plan-continuation>") ||
			!strings.Contains(last.Content, "do the three things") || !strings.Contains(last.Content, "Read the best note") {
			t.Fatalf("request %d ends with %+v", i, last)
		}
		if prev.Role != llm.RoleAssistant || !strings.HasPrefix(prev.Content, "Text only") {
			t.Fatalf("request %d: the text answer was not kept: %+v", i, prev)
		}
	}
}

func TestContinuationResetsOnNewRevision(t *testing.T) {
	revised := threeTodos()
	revised[2]["content"] = "Check the tags again"
	turns := []llm.Turn{toolTurn("", writeTodos(threeTodos()))}
	for i := 0; i < 5; i++ {
		turns = append(turns, llm.Turn{Content: "Not yet."})
	}
	turns = append(turns,
		toolTurn("", writeTodos(revised)),
		llm.Turn{Content: "Still not yet."},
		toolTurn("", call("getCurrentTime", map[string]any{})),
		toolTurn("", progress(map[string]any{"plan_status": "completed"})),
		llm.Turn{Content: "All done."},
	)
	a, _ := newTestAgent(t, turns)
	res, rec := run(t, a, Config{Planner: true, MaxIterations: 20}, "x")
	if res.StopReason != StopFinalAnswer || res.Answer != "All done." {
		t.Fatalf("result = %+v", res)
	}
	if got := continuationAttempts(rec); !slices.Equal(got, []int{1, 2, 3, 4, 5, 1}) {
		t.Fatalf("continuation attempts = %v", got)
	}
}

// reminded reports, for each tool message of req in order, whether it
// carries the goal+plan reminder.
func reminded(req llm.Request) []bool {
	var out []bool
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, strings.Contains(m.Content, "<goal_plan_reminder>"))
		}
	}
	return out
}

func TestReminderEveryThirdIteration(t *testing.T) {
	turns := []llm.Turn{toolTurn("", writeTodos(threeTodos()))}
	for i := 2; i <= 10; i++ {
		turns = append(turns, toolTurn("", call("getCurrentTime", map[string]any{})))
	}
	a, model := newTestAgent(t, turns)
	res, _ := run(t, a, Config{Planner: true, MaxIterations: 10}, "remind me")
	if res.StopReason != StopMaxIterations {
		t.Fatalf("result = %+v", res)
	}
	// The last request holds the tool messages of iterations 1..9, one each.
	got := reminded(model.Requests()[9])
	if len(got) != 9 {
		t.Fatalf("%d tool messages", len(got))
	}
	for i, r := range got {
		iteration := i + 1
		if want := iteration%3 == 0; r != want {
			t.Errorf("iteration %d: reminder %v, want %v", iteration, r, want)
		}
	}
	msgs := model.Requests()[9].Messages
	for _, m := range msgs {
		if m.Role == llm.RoleTool && strings.Contains(m.Content, "<goal_plan_reminder>") &&
			(!strings.Contains(m.Content, "remind me") || !strings.Contains(m.Content, "Search the notes")) {
			t.Fatalf("reminder lacks the goal or the plan: %s", m.Content)
		}
	}
}

func TestReminderOnlyInLastToolMessageOfABatch(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("", writeTodos(threeTodos())),
		toolTurn("", call("getCurrentTime", map[string]any{})),
		toolTurn("", call("getCurrentTime", map[string]any{}), call("getTagList", map[string]any{}), call("getFileTree", map[string]any{})),
		toolTurn("", call("getCurrentTime", map[string]any{})),
	})
	if res, _ := run(t, a, Config{Planner: true, MaxIterations: 4}, "x"); res.StopReason != StopMaxIterations {
		t.Fatalf("result = %+v", res)
	}
	if got, want := reminded(model.Requests()[3]), []bool{false, false, false, false, true}; !slices.Equal(got, want) {
		t.Fatalf("reminders = %v, want %v", got, want)
	}
}

func TestPlannerToolErrors(t *testing.T) {
	plan := writeTodos(threeTodos())
	tests := []struct {
		name  string
		turns []llm.Turn
		// want is, per tool result in order, "" for success or a substring
		// of the expected error.
		want []string
	}{
		{
			name: "overuse: the third consecutive planner-only turn is refused",
			turns: []llm.Turn{
				toolTurn("", plan),
				toolTurn("", progress(map[string]any{"step_id": "a"})),
				toolTurn("", progress(map[string]any{"step_id": "b"})),
			},
			want: []string{"", "", planner.ErrOveruse},
		},
		{
			name: "overuse resets after an action",
			turns: []llm.Turn{
				toolTurn("", plan),
				toolTurn("", progress(map[string]any{"step_id": "a"})),
				toolTurn("", call("getCurrentTime", map[string]any{})),
			},
			want: []string{"", "", ""},
		},
		{
			name: "plan_progress batched with another call",
			turns: []llm.Turn{
				toolTurn("", plan),
				toolTurn("", progress(map[string]any{"step_id": "a"}), call("getCurrentTime", map[string]any{})),
				toolTurn("", call("getCurrentTime", map[string]any{})),
			},
			want: []string{"", planner.ErrNotSolo.Error(), "", ""},
		},
		{
			name: "plan_progress before any plan",
			turns: []llm.Turn{
				toolTurn("", progress(map[string]any{"step_id": "a"})),
				toolTurn("", call("getCurrentTime", map[string]any{})),
				toolTurn("", call("getCurrentTime", map[string]any{})),
			},
			want: []string{"plan_progress_requires_plan", "", ""},
		},
		{
			name: "invalid write_todos goes back to the model",
			turns: []llm.Turn{
				toolTurn("", writeTodos([]map[string]any{{"id": "a", "content": "x", "status": "doing"}})),
				toolTurn("", call("getCurrentTime", map[string]any{})),
				toolTurn("", call("getCurrentTime", map[string]any{})),
			},
			want: []string{"status", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newTestAgent(t, tt.turns)
			res, rec := run(t, a, Config{Planner: true, MaxIterations: 3}, "x")
			if res.StopReason != StopMaxIterations {
				t.Fatalf("result = %+v", res)
			}
			rets := returned(rec)
			if len(rets) != len(tt.want) {
				t.Fatalf("%d tool results, want %d", len(rets), len(tt.want))
			}
			for i, w := range tt.want {
				if w == "" && !rets[i].Success {
					t.Errorf("result %d (%s) failed: %s", i, rets[i].Tool, rets[i].Error)
				}
				if w != "" && (rets[i].Success || !strings.Contains(rets[i].Error, w)) {
					t.Errorf("result %d (%s) = %+v, want an error containing %q", i, rets[i].Tool, rets[i], w)
				}
			}
		})
	}
}

func TestPlannerOffIsUnchanged(t *testing.T) {
	fi := newFakeIndex(t)
	script := func() []llm.Turn {
		return []llm.Turn{
			toolTurn("Searching.", call("localSearch", map[string]any{"query": "sourdough starter"})),
			toolTurn("Reading.", call("readNote", map[string]any{"notePath": firstPath(t, fi, "sourdough")})),
			{Content: "Feed it daily. [[Country Sourdough Loaf]]"},
		}
	}
	// A planner-less agent: the planner tools are not even registered.
	bare, bareModel := newTestAgent(t, script())
	for _, name := range []string{planner.ToolWriteTodos, planner.ToolPlanProgress, ToolRequestInput} {
		delete(bare.registry.tools, name)
	}
	bareRes, bareRec := run(t, bare, Config{}, "starter?")

	a, model := newTestAgent(t, script())
	res, rec := run(t, a, Config{Planner: false}, "starter?")

	if res.Answer != bareRes.Answer || res.StopReason != bareRes.StopReason || res.Iterations != bareRes.Iterations {
		t.Fatalf("results differ: %+v vs %+v", res, bareRes)
	}
	if got, want := rec.types(), bareRec.types(); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	reqs, bareReqs := model.Requests(), bareModel.Requests()
	if !reflect.DeepEqual(reqs, bareReqs) {
		t.Fatal("the model saw different requests with the planner off")
	}
	for _, req := range reqs {
		if slices.Contains(toolNames(req), planner.ToolWriteTodos) || slices.Contains(toolNames(req), planner.ToolPlanProgress) {
			t.Fatalf("planner tools offered with the planner off: %v", toolNames(req))
		}
		if strings.Contains(systemOf(req), planner.PromptGuidance) {
			t.Fatal("planner guidance in the system prompt with the planner off")
		}
	}
}

func TestPlannerStillStopsOnLimits(t *testing.T) {
	plan := toolTurn("", writeTodos(threeTodos()))
	tests := []struct {
		name     string
		cfg      Config
		turns    []llm.Turn
		wantStop string
	}{
		{"max iterations while acting", Config{Planner: true, MaxIterations: 3},
			[]llm.Turn{plan, toolTurn("", call("getCurrentTime", map[string]any{})), toolTurn("", call("getTagList", map[string]any{}))},
			StopMaxIterations},
		{"max iterations during continuations", Config{Planner: true, MaxIterations: 3},
			[]llm.Turn{plan, {Content: "Not yet."}, {Content: "Still not."}},
			StopMaxIterations},
		{"timeout", Config{Planner: true, Timeout: 100 * time.Millisecond},
			[]llm.Turn{plan, {Content: "slow", DelayMs: 60_000}},
			StopTimeout},
		{"no plan at all answers normally", Config{Planner: true},
			[]llm.Turn{toolTurn("", call("getCurrentTime", map[string]any{})), {Content: "It is now."}},
			StopFinalAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newTestAgent(t, tt.turns)
			res, rec := run(t, a, tt.cfg, "x")
			if res.StopReason != tt.wantStop {
				t.Fatalf("result = %+v", res)
			}
			if got := rec.types(); got[len(got)-1] != EventRunTerminated {
				t.Fatalf("events = %v", got)
			}
		})
	}
}

func firstUserMessage(req llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			return m.Content
		}
	}
	return ""
}

func TestPlanReview(t *testing.T) {
	idx := newFakeIndex(t)
	cfg := Config{Planner: true, PlanReview: true}
	for _, persistent := range []bool{false, true} {
		name := "memory store"
		if persistent {
			name = "bbolt store across a restart"
		}
		t.Run(name, func(t *testing.T) {
			path := ""
			if persistent {
				path = filepath.Join(t.TempDir(), "reviews.db")
			}
			open := func() *Agent {
				a, err := New(Deps{Index: idx, ReviewStorePath: path})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			runIn := func(a *Agent, id, msg string, turns ...llm.Turn) (*Result, *recorder, *llm.Scripted) {
				t.Helper()
				model := llm.NewScripted(turns)
				rec := newRecorder()
				res, err := a.Run(context.Background(), RunRequest{RunID: id, SessionID: "s", Message: msg, Config: cfg, Model: model}, rec)
				if err != nil {
					t.Fatal(err)
				}
				return res, rec, model
			}

			a := open()
			res, rec, _ := runIn(a, "p1", "plan my sourdough week",
				toolTurn("Planning.", writeTodos(threeTodos())),
				toolTurn("", call("localSearch", map[string]any{"query": "never runs"})))
			if res.StopReason != StopAwaitUserInput {
				t.Fatalf("result = %+v", res)
			}
			if len(rec.ofType(EventPlanReviewPending)) != 1 {
				t.Fatalf("events = %v", rec.types())
			}
			for _, r := range returned(rec) {
				if r.Tool != planner.ToolWriteTodos {
					t.Fatalf("action tool %s ran before the review", r.Tool)
				}
			}
			if !strings.Contains(res.Answer, "Read the best note") {
				t.Fatalf("answer does not show the plan: %q", res.Answer)
			}

			if persistent {
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				a = open()
			}
			t.Cleanup(func() { a.Close() })

			// The reviewed plan is the second run's plan: plan_progress works on
			// it at once, and the run is not paused for review again.
			res, rec2, model := runIn(a, "p2", "OK, but skip the tags",
				toolTurn("", call(planner.ToolPlanProgress, map[string]any{"plan_status": "completed"})),
				llm.Turn{Content: "Going ahead."})
			if res.StopReason != StopFinalAnswer {
				t.Fatalf("second run = %+v", res)
			}
			if r := returned(rec2); len(r) != 1 || !r[0].Success {
				t.Fatalf("plan_progress on the reviewed plan: %+v", r)
			}
			if len(rec2.ofType(EventPlanReviewPending)) != 0 {
				t.Fatal("the reviewed plan was paused for review again")
			}
			if p := rec2.ofType(EventRunStarted)[0].Payload.(RunStartedPayload); p.Goal != "plan my sourdough week" {
				t.Fatalf("second run's goal = %q, want the reviewed plan's goal", p.Goal)
			}
			first := firstUserMessage(model.Requests()[0])
			for _, want := range []string{"<plan_feedback>", "Read the best note", "OK, but skip the tags"} {
				if !strings.Contains(first, want) {
					t.Errorf("second run's first user message lacks %q:\n%s", want, first)
				}
			}

			_, _, model = runIn(a, "p3", "another question", llm.Turn{Content: "Sure."})
			if first := firstUserMessage(model.Requests()[0]); strings.Contains(first, "<plan_feedback>") || first != "another question" {
				t.Errorf("third run's first user message = %q", first)
			}
		})
	}
}

func TestRequestInputPausesAndResumes(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("", call(ToolRequestInput, map[string]any{"question": "Which project?"})),
		{Content: "Project Alpha it is."},
	})
	rec, done := startRun(t, a, RunRequest{RunID: "ri", Message: "status of my project", Config: Config{RequestInput: true}})
	ev := rec.waitFor(t, EventInputRequested)
	if q := ev.Payload.(TextPayload).Text; q != "Which project?" {
		t.Fatalf("question = %q", q)
	}
	if err := a.Input("ri", "alpha"); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.StopReason != StopFinalAnswer || res.Answer != "Project Alpha it is." {
		t.Fatalf("result = %+v", res)
	}
	reqs := model.Requests()
	if !slices.Contains(toolNames(reqs[0]), ToolRequestInput) {
		t.Fatalf("request_input not offered: %v", toolNames(reqs[0]))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.RoleTool || !strings.Contains(last.Content, "alpha") {
		t.Fatalf("the model did not get the answer: %+v", last)
	}
	want := []string{EventToolInvoked, EventInputRequested, EventInputReceived, EventToolReturned}
	var got []string
	for _, typ := range rec.types() {
		if slices.Contains(want, typ) {
			got = append(got, typ)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events = %v", got)
	}
}

func TestRequestInputTimeout(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("", call(ToolRequestInput, map[string]any{"question": "Anyone there?"})),
		{Content: "never asked"},
	})
	res, rec := run(t, a, Config{RequestInput: true, RequestInputTimeout: 50 * time.Millisecond}, "x")
	if res.StopReason != StopStopped {
		t.Fatalf("result = %+v", res)
	}
	if len(rec.ofType(EventInputTimeout)) != 1 || model.Remaining() != 1 {
		t.Fatalf("events = %v, remaining %d", rec.types(), model.Remaining())
	}
	if r := returned(rec); len(r) != 1 || r[0].Success || !strings.Contains(r[0].Error, "did not answer") {
		t.Fatalf("tool result = %+v", r)
	}
}

func TestInputWhenNotWaiting(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
	rec, done := startRun(t, a, RunRequest{RunID: "nw", Message: "x", Config: Config{RequestInput: true}})
	rec.waitFor(t, EventTurnStarted)
	if err := a.Input("nw", "hello"); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("Input while not waiting: %v", err)
	}
	if err := a.Stop("nw"); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := a.Input("nw", "hello"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("Input after the run: %v", err)
	}
}

func TestStopWhileWaitingForInput(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("", call(ToolRequestInput, map[string]any{"question": "Which?"})),
		{Content: "never asked"},
	})
	rec, done := startRun(t, a, RunRequest{RunID: "sw", Message: "x", Config: Config{RequestInput: true}})
	rec.waitFor(t, EventInputRequested)
	if err := a.Stop("sw"); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.StopReason != StopStopped || model.Remaining() != 1 {
		t.Fatalf("result = %+v, remaining %d", res, model.Remaining())
	}
}
