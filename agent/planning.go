package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vault-agent/vault-agent/planner"
)

// RequestInputArgs are the arguments of request_input.
type RequestInputArgs struct {
	Question string `json:"question" jsonschema:"the question to show the user"`
}

// plannerTools returns write_todos, plan_progress and request_input. The
// loop offers the planner tools only when the planner is enabled, and
// request_input only in modes that enable it.
func plannerTools() []*Tool {
	writeTodos := &Tool{
		Name: planner.ToolWriteTodos, Version: toolsVersion, Description: planner.ToolDescription,
		Parameters: planner.WriteTodosParameters(),
		inline: func(ctx context.Context, r *runState, raw json.RawMessage) (any, error) {
			return r.writeTodos(raw)
		},
		summary: func(json.RawMessage) string { return "Updating the plan" },
		outcome: func(out any) string { return "Plan updated" },
	}
	progress := &Tool{
		Name: planner.ToolPlanProgress, Version: toolsVersion, Description: planner.ProgressToolDescription,
		Parameters: planner.ProgressParameters(),
		inline: func(ctx context.Context, r *runState, raw json.RawMessage) (any, error) {
			return r.planProgress(raw)
		},
		summary: func(json.RawMessage) string { return "Recording plan progress" },
		outcome: func(out any) string { return "Progress recorded" },
	}
	input := defineTool(toolSpec[RequestInputArgs]{
		name: ToolRequestInput, version: toolsVersion,
		description: "Pause and ask the user a clarifying question. Use only when you cannot go on without their answer; the run waits for the reply.",
		tune:        func(s *schemaT) { minLen(s, "question", 1) },
		inline: func(ctx context.Context, r *runState, a RequestInputArgs) (any, error) {
			return r.requestInput(ctx, a.Question)
		},
		summary: func(a RequestInputArgs) string { return "Asking you: " + firstSentence(a.Question, 120) },
		outcome: func(out any) string { return "Got your answer" },
	})
	return []*Tool{writeTodos, progress, input}
}

// writeTodos applies a write_todos call and emits the plan event.
func (r *runState) writeTodos(raw json.RawMessage) (any, error) {
	first := !r.plan.HasPlan()
	res, err := r.plan.ApplyJSON(raw)
	if err != nil {
		return nil, toolErrorf("%v", err)
	}
	if first && r.cfg.PlanReview {
		r.reviewPending = true
	}
	r.emitPlan(first)
	return res, nil
}

// planProgress applies a plan_progress call and emits the plan event.
func (r *runState) planProgress(raw json.RawMessage) (any, error) {
	res, err := r.plan.ProgressJSON(raw)
	if err != nil {
		return nil, toolErrorf("%v", err)
	}
	r.emitPlan(false)
	return res, nil
}

func (r *runState) emitPlan(first bool) {
	snap := r.plan.Snapshot()
	r.planRefs = fmt.Sprintf("plan.v%d", snap.Revision)
	typ := EventPlanUpdated
	if first {
		typ = EventPlanAuthored
	}
	todos := append([]Todo(nil), snap.Todos...)
	r.emit(typ, PlanPayload{Revision: snap.Revision, Todos: todos, Focus: snap.Focus, Note: snap.Note, Summary: snap.Summary()},
		References{PlanID: r.planRefs, SectionKey: "planning"})
	if first && r.reviewPending {
		r.emit(EventPlanReviewPending, PlanPayload{Revision: snap.Revision, Todos: todos, Summary: snap.Summary()},
			References{PlanID: r.planRefs, SectionKey: "planning"})
	}
}

// requestInput pauses the run until the host answers with agent/input, the
// request times out, or the run is stopped.
func (r *runState) requestInput(ctx context.Context, question string) (any, error) {
	ch := make(chan string, 1)
	r.inputMu.Lock()
	r.inputCh = ch
	r.inputMu.Unlock()
	defer func() {
		r.inputMu.Lock()
		r.inputCh = nil
		r.inputMu.Unlock()
	}()
	r.emit(EventInputRequested, TextPayload{Text: question}, References{SectionKey: "action"})
	timer := time.NewTimer(r.cfg.RequestInputTimeout)
	defer timer.Stop()
	select {
	case answer := <-ch:
		r.emit(EventInputReceived, TextPayload{Text: answer}, References{SectionKey: "action"})
		return map[string]string{"userInput": answer}, nil
	case <-timer.C:
		r.emit(EventInputTimeout, TextPayload{Text: question}, References{SectionKey: "action"})
		r.endReason = StopStopped
		return nil, toolErrorf("the user did not answer within %s", r.cfg.RequestInputTimeout)
	case <-r.stopped():
		r.endReason = StopStopped
		return nil, toolErrorf("the run was stopped while waiting for the user")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
