package offline

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/planner"
)

// The offline policy drives the real loops of every mode to an answer.

// events records a run's events (emitted on the run's goroutine).
type events struct{ list []agent.Event }

func (r *events) Emit(e agent.Event) { r.list = append(r.list, e) }

func (r *events) ofType(typ string) []agent.Event {
	var out []agent.Event
	for _, e := range r.list {
		if e.EventType == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestPAROfflineModel(t *testing.T) {
	a, err := agent.New(agent.Deps{Model: New(), Index: agenttest.NewFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := &events{}
	res, err := a.Run(context.Background(), agent.RunRequest{RunID: "off", Message: "how do I keep my sourdough starter alive?", Config: agent.Config{Mode: agent.ModePAR}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "[[Sourdough Starter]]") {
		t.Fatalf("result = %+v", res)
	}
	plan := rec.ofType(agent.EventPlanAuthored)[0].Payload.(agent.PlanPayload).Plan.(planner.TypedPlan)
	if len(plan.Steps) < 2 {
		t.Fatalf("plan = %+v", plan)
	}
	tools := rec.ofType(agent.EventToolInvoked)
	if len(tools) == 0 {
		t.Fatal("no tool calls")
	}
	for _, e := range tools {
		step, ok := plan.Step(e.References.StepID)
		if !ok || !slices.Contains(step.ToolNames(), e.Payload.(agent.ToolInvokedPayload).Tool) || e.References.PlanID != "plan.v1" {
			t.Fatalf("tool event %+v does not match the plan", e)
		}
	}
}

func TestStagedOfflineDefaultPolicy(t *testing.T) {
	a, err := agent.New(agent.Deps{Model: New(), Index: agenttest.NewFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := &events{}
	res, err := a.Run(context.Background(), agent.RunRequest{RunID: "off", Message: "how do I keep my sourdough starter alive?", Config: agent.Config{Mode: agent.ModeStaged}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "[[Sourdough Starter]]") {
		t.Fatalf("result = %+v", res)
	}
	want := []string{"goal_framing:ok", "decomposition:ok", "tool_routing:ok", "synthesis:ok"}
	var got []string
	for _, e := range rec.ofType(agent.EventStageCompleted) {
		p := e.Payload.(agent.StagePayload)
		got = append(got, p.Stage+":"+p.Outcome)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("outcomes = %v", got)
	}
}
