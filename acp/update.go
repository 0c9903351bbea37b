package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/reasoning"
)

// Tools that are orchestration rather than actions: they show as plan
// updates, not tool calls.
var plannerTools = map[string]bool{"write_todos": true, "plan_progress": true}

// toolKinds maps the agent's tools onto ACP tool kinds (others are
// "other").
var toolKinds = map[string]sdk.ToolKind{
	"localSearch": sdk.ToolKindSearch,
	"readNote":    sdk.ToolKindRead,
	"getFileTree": sdk.ToolKindRead,
	"getTagList":  sdk.ToolKindRead,

	agent.ToolCreateNote:    sdk.ToolKindEdit,
	agent.ToolAppendToNote:  sdk.ToolKindEdit,
	agent.ToolReplaceInNote: sdk.ToolKindEdit,
	agent.ToolSetProperties: sdk.ToolKindEdit,
}

// maxHits is how many search hits a tool call's result shows.
const maxHits = 5

// turnUpdates is an agent.Sink that turns one run's events into ACP session
// updates:
//
//   - streamed answer text -> agent_message_chunk, and at the end whatever
//     of the final answer was not streamed;
//   - reasoning steps ([Plan]/[Act]/[Obs]/[Reflect] with the planner on,
//     from reasoning.Observer) -> agent_thought_chunk, one line each;
//   - tool calls -> tool_call (pending), tool_call_update (in_progress),
//     then tool_call_update (completed or failed) with a short result and
//     the notes' absolute paths as locations;
//   - write_todos/plan_progress plans, and par's typed plans -> plan.
//
// Emit is called from the run's goroutine, so updates leave in event order.
type turnUpdates struct {
	runID string
	root  string // the vault folder as the client named it
	send  func(sdk.SessionUpdate)
	// onInput is called when the run asks the person a question
	// (request_input); ACP has no such request, so the caller ends the turn
	// with the question.
	onInput func(question string)
	steps   *reasoning.Observer

	turnText   strings.Builder // answer text streamed in the current model turn
	shown      bool            // answer text was streamed earlier in this prompt turn
	lastFinish string          // finish reason of the last model response
	end        *agent.RunTerminatedPayload

	// ids maps the model's call ids (which models reuse across turns) to
	// the session-unique tool call ids sent; n numbers them.
	ids map[string]sdk.ToolCallId
	n   int
	// last is the tool call announced last: the one an inline tool (an
	// edit asking for permission) is running.
	last sdk.ToolCallId

	// par mode's typed plan, shown as plan entries.
	parSteps   []planner.PlanStep
	parCurrent string
	parDone    map[string]bool
}

func newTurnUpdates(runID, root string, planner bool, send func(sdk.SessionUpdate), onInput func(string)) *turnUpdates {
	u := &turnUpdates{runID: runID, root: root, send: send, onInput: onInput, parDone: map[string]bool{}, ids: map[string]sdk.ToolCallId{}}
	u.steps = reasoning.NewObserver(reasoning.Config{
		Planner: planner,
		OnStep:  func(s string) { send(thought(s)) },
	})
	return u
}

// currentTool returns the id of the tool call announced last. Like Emit,
// it is called from the run's goroutine.
func (u *turnUpdates) currentTool() sdk.ToolCallId { return u.last }

// Emit maps one event.
func (u *turnUpdates) Emit(ev agent.Event) {
	switch ev.EventType {
	case agent.EventTurnStarted:
		u.endModelTurn()
		u.steps.Emit(ev)
		if ev.References.StepID != "" && len(u.parSteps) > 0 && ev.References.StepID != u.parCurrent {
			if u.parCurrent != "" {
				u.parDone[u.parCurrent] = true
			}
			u.parCurrent = ev.References.StepID
			u.send(u.parPlan())
		}
	case agent.EventAnswerDelta:
		p, _ := ev.Payload.(agent.TextPayload)
		if p.Text == "" {
			return
		}
		text := p.Text
		if u.turnText.Len() == 0 && u.shown {
			text = "\n\n" + text
		}
		u.turnText.WriteString(p.Text)
		u.send(message(text))
	case agent.EventModelResponded:
		p, _ := ev.Payload.(agent.ModelRespondedPayload)
		u.lastFinish = p.Response.FinishReason
		if len(p.Response.ToolCalls) > 0 {
			u.endModelTurn()
		}
		u.steps.Emit(ev)
	case agent.EventToolInvoked:
		u.steps.Emit(ev) // the [Act] step first, then the call
		p, _ := ev.Payload.(agent.ToolInvokedPayload)
		if plannerTools[p.Tool] {
			return
		}
		u.n++
		id := sdk.ToolCallId(fmt.Sprintf("%s/%d-%s", u.runID, u.n, p.CallID))
		u.ids[p.CallID] = id
		u.last = id
		start, running := toolStarted(id, u.root, p)
		u.send(start)
		u.send(running)
	case agent.EventToolReturned:
		p, _ := ev.Payload.(agent.ToolReturnedPayload)
		if id, ok := u.ids[p.CallID]; ok && !plannerTools[p.Tool] {
			u.send(toolFinished(id, u.root, p))
		}
		u.steps.Emit(ev) // then the [Obs] step
	case agent.EventPlanAuthored, agent.EventPlanUpdated:
		u.steps.Emit(ev)
		p, _ := ev.Payload.(agent.PlanPayload)
		if len(p.Todos) > 0 {
			u.send(todoPlan(p.Todos))
		} else if steps := typedPlanSteps(p.Plan); len(steps) > 0 {
			u.parSteps = steps
			u.send(u.parPlan())
		}
	case agent.EventInputRequested:
		u.steps.Emit(ev)
		p, _ := ev.Payload.(agent.TextPayload)
		q := p.Text
		if q == "" {
			q, _ = p.Control["question"].(string)
		}
		if u.onInput != nil {
			u.onInput(q)
		}
	case agent.EventRunTerminated:
		u.steps.Emit(ev)
		p, _ := ev.Payload.(agent.RunTerminatedPayload)
		u.end = &p
		if p.StopReason == agent.StopFinalAnswer && len(u.parSteps) > 0 {
			if u.parCurrent != "" {
				u.parDone[u.parCurrent] = true
			}
			u.parCurrent = ""
			u.send(u.parPlan())
		}
		u.finishAnswer(p)
	default:
		u.steps.Emit(ev)
	}
}

// endModelTurn closes the current model turn: text it streamed stays shown
// (it was the model speaking before its tool calls), and the next text
// starts a new paragraph.
func (u *turnUpdates) endModelTurn() {
	if u.turnText.Len() > 0 {
		u.shown = true
		u.turnText.Reset()
	}
}

// finishAnswer sends what the client has not seen of the run's final
// answer. A stopped run's ending note is not sent: the client cancelled it.
// A failed run is answered with a JSON-RPC error instead.
func (u *turnUpdates) finishAnswer(p agent.RunTerminatedPayload) {
	if p.StopReason == agent.StopStopped || p.StopReason == agent.StopError {
		return
	}
	answer := strings.TrimSpace(p.Answer)
	streamed := u.turnText.String()
	switch {
	case answer == "" || strings.TrimSpace(streamed) == answer:
	case streamed != "" && strings.HasPrefix(answer, streamed):
		u.send(message(answer[len(streamed):]))
	default:
		if u.shown || streamed != "" {
			answer = "\n\n" + answer
		}
		u.send(message(answer))
	}
}

// stopReason maps how the run ended onto an ACP stop reason. cancelled
// reports that the client cancelled the turn.
func (u *turnUpdates) stopReason(res *agent.Result, cancelled bool) sdk.StopReason {
	if cancelled {
		return sdk.StopReasonCancelled
	}
	switch res.StopReason {
	case agent.StopMaxIterations:
		return sdk.StopReasonMaxTurnRequests
	case agent.StopStopped:
		return sdk.StopReasonCancelled
	case agent.StopFinalAnswer:
		switch u.lastFinish {
		case "content_filter":
			return sdk.StopReasonRefusal
		case "length":
			return sdk.StopReasonMaxTokens
		}
	}
	return sdk.StopReasonEndTurn
}

func (u *turnUpdates) parPlan() sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(u.parSteps))
	for _, s := range u.parSteps {
		st := sdk.PlanEntryStatusPending
		switch {
		case u.parDone[s.ID]:
			st = sdk.PlanEntryStatusCompleted
		case s.ID == u.parCurrent:
			st = sdk.PlanEntryStatusInProgress
		}
		content := s.Description
		if content == "" {
			content = s.ID
		}
		entries = append(entries, sdk.PlanEntry{Content: content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return sdk.UpdatePlan(entries...)
}

// typedPlanSteps reads par's typed plan out of a plan payload.
func typedPlanSteps(plan any) []planner.PlanStep {
	if p, ok := plan.(planner.TypedPlan); ok {
		return p.Steps
	}
	return nil
}

// todoPlan renders the write_todos list. Todos carry no priority; their
// order is the plan's order, so every entry is medium.
func todoPlan(todos []agent.Todo) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(todos))
	for _, t := range todos {
		st := sdk.PlanEntryStatusPending
		switch t.Status {
		case "in_progress":
			st = sdk.PlanEntryStatusInProgress
		case "completed":
			st = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, sdk.PlanEntry{Content: t.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return sdk.UpdatePlan(entries...)
}

func thought(step string) sdk.SessionUpdate { return sdk.UpdateAgentThoughtText(step + "\n") }

func message(text string) sdk.SessionUpdate { return sdk.UpdateAgentMessageText(text) }

// toolStarted returns the tool_call (pending) and the tool_call_update
// (in_progress) for an invoked tool.
func toolStarted(id sdk.ToolCallId, root string, p agent.ToolInvokedPayload) (sdk.SessionUpdate, sdk.SessionUpdate) {
	kind, ok := toolKinds[p.Tool]
	if !ok {
		kind = sdk.ToolKindOther
	}
	title := strings.TrimSpace(p.Summary)
	if title == "" {
		title = "Calling " + p.Tool
	}
	tc := &sdk.SessionUpdateToolCall{
		SessionUpdate: "tool_call",
		ToolCallId:    id,
		Title:         title,
		Kind:          kind,
		Status:        sdk.ToolCallStatusPending,
	}
	var args any
	if json.Unmarshal(p.Arguments, &args) == nil {
		tc.RawInput = args
	}
	if p.Tool == "readNote" {
		var a struct {
			NotePath string `json:"notePath"`
		}
		if json.Unmarshal(p.Arguments, &a) == nil && strings.HasSuffix(strings.ToLower(a.NotePath), ".md") {
			tc.Locations = []sdk.ToolCallLocation{{Path: absPath(root, a.NotePath)}}
		}
	}
	running := sdk.UpdateToolCall(tc.ToolCallId, sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress))
	return sdk.SessionUpdate{ToolCall: tc}, running
}

// toolFinished returns the tool_call_update that closes a tool call, with a
// short text result and the notes it touched.
func toolFinished(id sdk.ToolCallId, root string, p agent.ToolReturnedPayload) sdk.SessionUpdate {
	if !p.Success {
		msg := strings.TrimSpace(p.Error)
		if msg == "" {
			msg = p.Summary
		}
		msg, _ = capText(firstLine(msg), 300)
		return sdk.UpdateToolCall(id, sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(msg))}))
	}
	text := strings.TrimSpace(p.Summary)
	var locs []sdk.ToolCallLocation
	switch p.Tool {
	case "localSearch":
		var r struct {
			Results []struct {
				Path  string `json:"path"`
				Title string `json:"title"`
			} `json:"results"`
		}
		if json.Unmarshal(p.Output, &r) == nil {
			var b strings.Builder
			b.WriteString(text)
			for i, h := range r.Results {
				if i == maxHits {
					fmt.Fprintf(&b, "\n- and %d more", len(r.Results)-maxHits)
					break
				}
				fmt.Fprintf(&b, "\n- [[%s]] (%s)", h.Title, h.Path)
				locs = append(locs, sdk.ToolCallLocation{Path: absPath(root, h.Path)})
			}
			text = b.String()
		}
	case "readNote":
		var n struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if json.Unmarshal(p.Output, &n) == nil && n.Path != "" {
			locs = []sdk.ToolCallLocation{{Path: absPath(root, n.Path)}}
			if excerpt, cut := capText(strings.TrimSpace(n.Content), 200); excerpt != "" {
				if cut {
					excerpt += "…"
				}
				text += "\n\n" + excerpt
			}
		}
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted)}
	if text != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}))
	}
	if len(locs) > 0 {
		opts = append(opts, sdk.WithUpdateLocations(locs))
	}
	return sdk.UpdateToolCall(id, opts...)
}

// absPath turns a vault-relative slash path into an absolute path under the
// vault folder as the client named it.
func absPath(root, rel string) string {
	return filepath.Join(root, filepath.FromSlash(rel))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
