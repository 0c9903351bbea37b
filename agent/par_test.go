package agent

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

const (
	planSearchAnswer = `{"steps":[
		{"id":"s1","description":"Search the vault","tools":["localSearch"],"exit_criteria":"notes found"},
		{"id":"s2","description":"Answer","tools":[],"exit_criteria":"answered"}],
		"exit_criteria":"the question is answered"}`
	planSearchReadAnswer = agenttest.PlanSearchReadAnswer
)

func parRun(t *testing.T, turns []llm.Turn, cfg Config, sink func(a *Agent) Sink) (*Result, *recorder, *llm.Scripted) {
	t.Helper()
	a, model := newTestAgent(t, turns)
	cfg.Mode = ModePAR
	rec := newRecorder()
	var s Sink = rec
	if sink != nil {
		s = Tee(rec, sink(a))
	}
	res, err := a.Run(context.Background(), RunRequest{RunID: "r1", Message: "how do I keep my sourdough starter alive?", Config: cfg}, s)
	if err != nil {
		t.Fatal(err)
	}
	return res, rec, model
}

func reflectTurn(text string, control map[string]any) llm.Turn {
	b, _ := json.Marshal(control)
	return llm.Turn{Content: text + "\n\n```json\n" + string(b) + "\n```", Expect: &llm.Expect{Contains: "[phase:observe]", ToolsOffered: []string{}}}
}

func TestPARRunWithRevision(t *testing.T) {
	starter := "recipes/Sourdough Starter.md"
	turns := []llm.Turn{
		{Content: planSearchAnswer, Expect: &llm.Expect{Contains: "[phase:plan]", ToolsOffered: []string{}}},
		{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "sourdough starter"})},
			Expect: &llm.Expect{Contains: "Current step: s1", ToolsOffered: []string{"localSearch"}}},
		reflectTurn("Found the starter note; it must be read first.", map[string]any{
			"step_id": "s1", "satisfied": true, "revise": true, "plan": json.RawMessage(planSearchReadAnswer)}),
		{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{call("readNote", map[string]any{"notePath": starter})},
			Expect: &llm.Expect{Contains: "Current step: s1b", ToolsOffered: []string{"readNote"}}},
		reflectTurn("The note was read.", map[string]any{"step_id": "s1b", "satisfied": true}),
		{Content: "I can answer from the note.", Expect: &llm.Expect{Contains: "Current step: s2", ToolsOffered: []string{}}},
		reflectTurn("Ready to answer.", map[string]any{"step_id": "s2", "satisfied": true}),
		{Content: "Feed it daily. [[Sourdough Starter]]", Expect: &llm.Expect{Contains: "All steps of plan plan.v2 are done"}},
	}
	res, rec, model := parRun(t, turns, Config{}, nil)
	if res.StopReason != StopFinalAnswer || res.Answer != "Feed it daily. [[Sourdough Starter]]" || res.Iterations != 3 {
		t.Fatalf("result = %+v", res)
	}
	if model.Remaining() != 0 {
		t.Fatalf("%d turns not played", model.Remaining())
	}
	want := []string{EventRunStarted, EventModelResponded, EventPlanAuthored,
		EventTurnStarted, EventModelResponded, EventToolInvoked, EventToolReturned, EventModelResponded, EventReflectionAdded, EventPlanUpdated,
		EventTurnStarted, EventModelResponded, EventToolInvoked, EventToolReturned, EventModelResponded, EventReflectionAdded,
		EventTurnStarted, EventModelResponded, EventModelResponded, EventReflectionAdded,
		EventModelResponded, EventRunTerminated}
	if got := rec.types(); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	authored := rec.ofType(EventPlanAuthored)[0]
	if authored.References.PlanID != "plan.v1" || len(authored.Payload.(PlanPayload).Plan.(planner.TypedPlan).Steps) != 2 {
		t.Fatalf("PlanAuthored = %+v", authored)
	}
	updated := rec.ofType(EventPlanUpdated)[0]
	up := updated.Payload.(PlanPayload)
	d := up.Diff.(planner.PlanDiff)
	if updated.References.PlanID != "plan.v2" || up.Revision != 2 || len(d.Added) != 1 || d.Added[0].ID != "s1b" || d.From != "plan.v1" {
		t.Fatalf("PlanUpdated = %+v diff %+v", updated, d)
	}
	// Every tool event names its step and the plan version it ran under.
	wantRefs := [][2]string{{"s1", "plan.v1"}, {"s1", "plan.v1"}, {"s1b", "plan.v2"}, {"s1b", "plan.v2"}}
	var gotRefs [][2]string
	for _, e := range rec.events {
		if e.EventType == EventToolInvoked || e.EventType == EventToolReturned {
			gotRefs = append(gotRefs, [2]string{e.References.StepID, e.References.PlanID})
		}
	}
	if !slices.Equal(gotRefs, wantRefs) {
		t.Fatalf("tool refs = %v, want %v", gotRefs, wantRefs)
	}
	for _, r := range returned(rec) {
		if !r.Success {
			t.Fatalf("%s failed: %s", r.Tool, r.Error)
		}
	}
	refl := rec.ofType(EventReflectionAdded)[0].Payload.(TextPayload)
	if refl.Text != "Found the starter note; it must be read first." || refl.Control["step_id"] != "s1" || refl.Control["revise"] != true || refl.Control["plan"] == nil {
		t.Fatalf("reflection = %+v", refl)
	}
	if p, ok := res.Plan.(planner.TypedPlan); !ok || len(p.Steps) != 3 {
		t.Fatalf("result plan = %#v", res.Plan)
	}
	// The synthesis streamed the answer; plan, act and reflect did not.
	var streamed strings.Builder
	for _, e := range rec.ofType(EventAnswerDelta) {
		streamed.WriteString(e.Payload.(TextPayload).Text)
	}
	if streamed.String() != res.Answer {
		t.Fatalf("streamed %q", streamed.String())
	}
}

func TestPARToolOutsideStepIsRefused(t *testing.T) {
	turns := []llm.Turn{
		{Content: planSearchAnswer},
		{Content: "Reading directly.", ToolCalls: []llm.ScriptedToolCall{call("readNote", map[string]any{"notePath": "recipes/Sourdough Starter.md"})}},
		reflectTurn("That was not allowed.", map[string]any{"satisfied": false}),
		{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "starter"})}},
		reflectTurn("Found it.", map[string]any{"satisfied": true, "done": true}),
		{Content: "Answer. [[Sourdough Starter]]"},
	}
	res, rec, _ := parRun(t, turns, Config{}, nil)
	if res.StopReason != StopFinalAnswer {
		t.Fatalf("result = %+v", res)
	}
	rets := returned(rec)
	if len(rets) != 2 || rets[0].Success || !strings.Contains(rets[0].Error, `tool "readNote" is not declared for step s1 of plan.v1; this step's tools: localSearch`) {
		t.Fatalf("returned = %+v", rets)
	}
	if !rets[1].Success {
		t.Fatalf("retry failed: %+v", rets[1])
	}
	// done skipped s2: two iterations, both on s1.
	if res.Iterations != 2 {
		t.Fatalf("iterations = %d", res.Iterations)
	}
}

func TestPARInvalidPlan(t *testing.T) {
	dup := `{"steps":[{"id":"s1","tools":[]},{"id":"s1","tools":[]}],"exit_criteria":"x"}`
	t.Run("retry succeeds", func(t *testing.T) {
		turns := []llm.Turn{
			{Content: dup},
			{Content: `{"steps":[{"id":"s1","description":"think","tools":[],"exit_criteria":"x"}],"exit_criteria":"x"}`,
				Expect: &llm.Expect{Contains: `duplicate step id "s1"`}},
			{Content: "Thought about it."},
			reflectTurn("Fine.", map[string]any{"satisfied": true}),
			{Content: "The answer."},
		}
		res, rec, _ := parRun(t, turns, Config{}, nil)
		if res.StopReason != StopFinalAnswer || len(rec.ofType(EventPlanAuthored)) != 1 {
			t.Fatalf("result = %+v, events %v", res, rec.types())
		}
	})
	t.Run("second failure ends the run", func(t *testing.T) {
		turns := []llm.Turn{{Content: dup}, {Content: "no JSON here"}}
		res, rec, _ := parRun(t, turns, Config{}, nil)
		if res.StopReason != StopError || !strings.Contains(res.Error, "no JSON object") {
			t.Fatalf("result = %+v", res)
		}
		if len(rec.ofType(EventPlanAuthored)) != 0 || len(rec.ofType(EventToolInvoked)) != 0 {
			t.Fatalf("events = %v", rec.types())
		}
	})
}

func TestPARRollbackFromReflection(t *testing.T) {
	turns := []llm.Turn{
		{Content: planSearchAnswer},
		{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "starter"})}},
		reflectTurn("Add a reading step.", map[string]any{"satisfied": true, "revise": true, "plan": json.RawMessage(planSearchReadAnswer)}),
		{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{call("readNote", map[string]any{"notePath": "recipes/Sourdough Starter.md"})}},
		reflectTurn("Reading was not needed after all.", map[string]any{"satisfied": true, "rollback_to": "plan.v1"}),
		{Content: "Concluded."},
		reflectTurn("Done.", map[string]any{"satisfied": true}),
		{Content: "Answer."},
	}
	res, rec, _ := parRun(t, turns, Config{}, nil)
	if res.StopReason != StopFinalAnswer {
		t.Fatalf("result = %+v", res)
	}
	ups := rec.ofType(EventPlanUpdated)
	if len(ups) != 2 {
		t.Fatalf("PlanUpdated events = %d", len(ups))
	}
	rb := ups[1].Payload.(PlanPayload)
	d := rb.Diff.(planner.PlanDiff)
	if ups[1].References.PlanID != "plan.v3" || d.RollbackOf != "plan.v1" || len(d.Removed) != 1 || d.Removed[0].ID != "s1b" {
		t.Fatalf("rollback event = %+v diff %+v", ups[1], d)
	}
	v1 := rec.ofType(EventPlanAuthored)[0].Payload.(PlanPayload).Plan.(planner.TypedPlan)
	if !reflect.DeepEqual(rb.Plan.(planner.TypedPlan), v1) {
		t.Fatalf("v3 = %+v, want v1 %+v", rb.Plan, v1)
	}
}

func TestPARLimits(t *testing.T) {
	t.Run("max iterations", func(t *testing.T) {
		turns := []llm.Turn{
			{Content: planSearchAnswer},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "starter"})}},
			reflectTurn("Not yet.", map[string]any{"satisfied": false}),
		}
		res, _, model := parRun(t, turns, Config{MaxIterations: 1}, nil)
		if res.StopReason != StopMaxIterations || res.Iterations != 1 || model.Remaining() != 0 {
			t.Fatalf("result = %+v, remaining %d", res, model.Remaining())
		}
	})
	t.Run("unsatisfied step is retried then left", func(t *testing.T) {
		turns := []llm.Turn{
			{Content: `{"steps":[{"id":"s1","tools":[]}],"exit_criteria":"x"}`},
			{Content: "Try 1."}, reflectTurn("No.", map[string]any{"satisfied": false}),
			{Content: "Try 2.", Expect: &llm.Expect{Contains: "attempt 2"}}, reflectTurn("Still no.", map[string]any{"satisfied": false}),
			{Content: "Best effort answer."},
		}
		res, _, _ := parRun(t, turns, Config{}, nil)
		if res.StopReason != StopFinalAnswer || res.Iterations != 2 {
			t.Fatalf("result = %+v", res)
		}
	})
	t.Run("stop at the next phase boundary", func(t *testing.T) {
		turns := []llm.Turn{
			{Content: planSearchAnswer},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "starter"})}},
		}
		stopOnReturn := func(a *Agent) Sink {
			return SinkFunc(func(e Event) {
				if e.EventType == EventToolReturned {
					_ = a.Stop("r1")
				}
			})
		}
		res, rec, _ := parRun(t, turns, Config{}, stopOnReturn)
		if res.StopReason != StopStopped {
			t.Fatalf("result = %+v", res)
		}
		if n := len(rec.ofType(EventModelResponded)); n != 2 {
			t.Fatalf("model calls after stop: %d responses", n)
		}
	})
}
