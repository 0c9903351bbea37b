package acp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

const testRoot = "/home/me/Notes"

// recorder collects the updates of one turn as decoded JSON, the form a
// client sees.
type recorder struct{ got []map[string]any }

func (r *recorder) send(u sdk.SessionUpdate) {
	b, err := json.Marshal(u)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	r.got = append(r.got, m)
}

func (r *recorder) kinds() string {
	k := make([]string, len(r.got))
	for i, m := range r.got {
		k[i] = m["sessionUpdate"].(string)
	}
	return strings.Join(k, " ")
}

func (r *recorder) text(kind string) string {
	var b strings.Builder
	for _, m := range r.got {
		if m["sessionUpdate"] == kind {
			b.WriteString(m["content"].(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

func ev(typ string, payload agent.Payload) agent.Event {
	return agent.Event{EventType: typ, Payload: payload}
}

func newRecorded(planner bool) (*turnUpdates, *recorder) {
	r := &recorder{}
	return newTurnUpdates("run-1", testRoot, planner, r.send, nil), r
}

func TestToolCallLifecycle(t *testing.T) {
	u, r := newRecorded(true)
	u.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{CallID: "c1", Tool: "localSearch", Arguments: json.RawMessage(`{"query":"sourdough"}`), Summary: `Searching notes for "sourdough"`}))
	u.Emit(ev(agent.EventToolReturned, agent.ToolReturnedPayload{CallID: "c1", Tool: "localSearch", Success: true, Summary: "Found 2 relevant notes",
		Output: json.RawMessage(`{"results":[{"path":"recipes/Sourdough Starter.md","title":"Sourdough Starter"},{"path":"recipes/Loaf.md","title":"Loaf"}]}`)}))
	u.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{CallID: "c1", Tool: "readNote", Arguments: json.RawMessage(`{"notePath":"recipes/Sourdough Starter.md"}`), Summary: "Reading Sourdough Starter"}))
	u.Emit(ev(agent.EventToolReturned, agent.ToolReturnedPayload{CallID: "c1", Tool: "readNote", Success: true, Summary: "Read Sourdough Starter",
		Output: json.RawMessage(`{"path":"recipes/Sourdough Starter.md","content":"Feed it once a week."}`)}))
	u.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{CallID: "c2", Tool: "readNote", Arguments: json.RawMessage(`{"notePath":"Nope"}`), Summary: "Reading Nope"}))
	u.Emit(ev(agent.EventToolReturned, agent.ToolReturnedPayload{CallID: "c2", Tool: "readNote", Success: false, Error: "note \"Nope\": not found\nmore detail"}))

	want := "agent_thought_chunk tool_call tool_call_update tool_call_update agent_thought_chunk " +
		"agent_thought_chunk tool_call tool_call_update tool_call_update agent_thought_chunk " +
		"agent_thought_chunk tool_call tool_call_update tool_call_update agent_thought_chunk"
	if got := r.kinds(); got != want {
		t.Fatalf("updates:\n got %s\nwant %s", got, want)
	}
	search := r.got[1]
	if search["kind"] != "search" || search["status"] != "pending" || search["title"] != `Searching notes for "sourdough"` {
		t.Errorf("search tool_call = %v", search)
	}
	if search["rawInput"].(map[string]any)["query"] != "sourdough" {
		t.Errorf("rawInput = %v", search["rawInput"])
	}
	if r.got[2]["status"] != "in_progress" || r.got[2]["toolCallId"] != search["toolCallId"] {
		t.Errorf("in_progress update = %v", r.got[2])
	}
	done := r.got[3]
	if done["status"] != "completed" {
		t.Errorf("search result = %v", done)
	}
	content := done["content"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"].(string)
	if !strings.Contains(content, "[[Sourdough Starter]] (recipes/Sourdough Starter.md)") {
		t.Errorf("search content = %q", content)
	}
	locs := done["locations"].([]any)
	if len(locs) != 2 || locs[0].(map[string]any)["path"] != testRoot+"/recipes/Sourdough Starter.md" {
		t.Errorf("search locations = %v", locs)
	}

	read := r.got[6]
	if read["kind"] != "read" || read["locations"].([]any)[0].(map[string]any)["path"] != testRoot+"/recipes/Sourdough Starter.md" {
		t.Errorf("readNote tool_call = %v", read)
	}
	if read["toolCallId"] == search["toolCallId"] {
		t.Errorf("a reused model call id gave a reused tool call id %v", read["toolCallId"])
	}
	if got := r.got[8]["content"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]; !strings.Contains(got.(string), "Feed it once a week.") {
		t.Errorf("readNote content = %v", got)
	}

	if _, ok := r.got[11]["locations"]; ok {
		t.Errorf("a read of a title (not a path) has locations before it resolves: %v", r.got[11])
	}
	failed := r.got[13]
	if failed["status"] != "failed" || failed["content"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"] != `note "Nope": not found` {
		t.Errorf("failed update = %v", failed)
	}
	if thoughts := r.text("agent_thought_chunk"); !strings.Contains(thoughts, "[Act] Searching notes for \"sourdough\"\n") || !strings.Contains(thoughts, "[Obs] Found 2 relevant notes\n") {
		t.Errorf("thoughts = %q", thoughts)
	}
}

func TestPlanUpdates(t *testing.T) {
	u, r := newRecorded(true)
	todos := []agent.Todo{{ID: "search", Content: "Search", Status: "completed"}, {ID: "read", Content: "Read", Status: "in_progress"}, {ID: "answer", Content: "Answer", Status: "pending"}}
	u.Emit(ev(agent.EventToolInvoked, agent.ToolInvokedPayload{CallID: "p", Tool: "write_todos", Summary: "Planning"}))
	u.Emit(ev(agent.EventPlanAuthored, agent.PlanPayload{Revision: 1, Todos: todos, Summary: "Plan r1"}))
	u.Emit(ev(agent.EventToolReturned, agent.ToolReturnedPayload{CallID: "p", Tool: "write_todos", Success: true}))
	if got := r.kinds(); got != "agent_thought_chunk plan" {
		t.Fatalf("planner tools must show as a plan, not tool calls: %s", got)
	}
	entries := r.got[1]["entries"].([]any)
	var statuses []string
	for _, e := range entries {
		m := e.(map[string]any)
		if m["priority"] != "medium" || m["content"] == "" {
			t.Errorf("entry = %v", m)
		}
		statuses = append(statuses, m["status"].(string))
	}
	if got := strings.Join(statuses, ","); got != "completed,in_progress,pending" {
		t.Errorf("statuses = %s", got)
	}
}

func TestTypedPlanProgress(t *testing.T) {
	u, r := newRecorded(false)
	plan := planner.TypedPlan{Steps: []planner.PlanStep{{ID: "s1", Description: "Find notes"}, {ID: "s2", Description: "Read them"}}}
	u.Emit(ev(agent.EventPlanAuthored, agent.PlanPayload{Revision: 1, Plan: plan}))
	u.Emit(agent.Event{EventType: agent.EventTurnStarted, Payload: agent.TurnStartedPayload{Iteration: 1}, References: agent.References{StepID: "s1"}})
	u.Emit(agent.Event{EventType: agent.EventTurnStarted, Payload: agent.TurnStartedPayload{Iteration: 2}, References: agent.References{StepID: "s2"}})
	u.Emit(ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: agent.StopFinalAnswer, Answer: "Done."}))
	var got []string
	for _, m := range r.got {
		if m["sessionUpdate"] != "plan" {
			continue
		}
		var s []string
		for _, e := range m["entries"].([]any) {
			s = append(s, e.(map[string]any)["status"].(string))
		}
		got = append(got, strings.Join(s, ","))
	}
	want := "pending,pending | in_progress,pending | completed,in_progress | completed,completed"
	if strings.Join(got, " | ") != want {
		t.Errorf("plan progress:\n got %s\nwant %s", strings.Join(got, " | "), want)
	}
}

func TestAnswerStreaming(t *testing.T) {
	delta := func(s string) agent.Event { return ev(agent.EventAnswerDelta, agent.TextPayload{Text: s}) }
	responded := func(calls int) agent.Event {
		resp := llm.Response{FinishReason: "stop"}
		for range calls {
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: "x", Name: "localSearch"})
		}
		return ev(agent.EventModelResponded, agent.ModelRespondedPayload{Response: resp})
	}
	end := func(reason, answer string) agent.Event {
		return ev(agent.EventRunTerminated, agent.RunTerminatedPayload{StopReason: reason, Answer: answer})
	}
	tests := []struct {
		name   string
		events []agent.Event
		want   string
	}{
		{"streamed answer is not repeated", []agent.Event{delta("The starter "), delta("needs flour."), responded(0), end(agent.StopFinalAnswer, "The starter needs flour.")}, "The starter needs flour."},
		{"an answer that was not streamed arrives whole", []agent.Event{end(agent.StopFinalAnswer, "From your notes: feed it.")}, "From your notes: feed it."},
		{"the rest of a partly streamed answer", []agent.Event{delta("From your"), end(agent.StopFinalAnswer, "From your notes.")}, "From your notes."},
		{"text before tool calls stays, the answer follows", []agent.Event{delta("Let me look that up in detail."), responded(1), delta("Feed it weekly."), end(agent.StopFinalAnswer, "Feed it weekly.")}, "Let me look that up in detail.\n\nFeed it weekly."},
		{"max iterations says so", []agent.Event{end(agent.StopMaxIterations, "Reached the maximum of 3 iterations.")}, "Reached the maximum of 3 iterations."},
		{"a cancelled run adds nothing", []agent.Event{delta("Partial"), end(agent.StopStopped, "Stopped by user.")}, "Partial"},
		{"a failed run adds nothing (the prompt answers an error)", []agent.Event{end(agent.StopError, "Error: boom")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, r := newRecorded(false)
			for _, e := range tt.events {
				u.Emit(e)
			}
			if got := r.text("agent_message_chunk"); got != tt.want {
				t.Errorf("message = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	tests := []struct {
		run, finish string
		cancelled   bool
		want        sdk.StopReason
	}{
		{agent.StopFinalAnswer, "stop", false, sdk.StopReasonEndTurn},
		{agent.StopFinalAnswer, "length", false, sdk.StopReasonMaxTokens},
		{agent.StopFinalAnswer, "content_filter", false, sdk.StopReasonRefusal},
		{agent.StopMaxIterations, "tool_calls", false, sdk.StopReasonMaxTurnRequests},
		{agent.StopStopped, "", false, sdk.StopReasonCancelled},
		{agent.StopFinalAnswer, "stop", true, sdk.StopReasonCancelled},
		{agent.StopTimeout, "", false, sdk.StopReasonEndTurn},
		{agent.StopAwaitUserInput, "", false, sdk.StopReasonEndTurn},
	}
	for _, tt := range tests {
		u, _ := newRecorded(false)
		u.Emit(ev(agent.EventModelResponded, agent.ModelRespondedPayload{Response: llm.Response{FinishReason: tt.finish}}))
		if got := u.stopReason(&agent.Result{StopReason: tt.run}, tt.cancelled); got != tt.want {
			t.Errorf("run %s, finish %q, cancelled %v: %s, want %s", tt.run, tt.finish, tt.cancelled, got, tt.want)
		}
	}
}

func TestInputRequestEndsTheTurn(t *testing.T) {
	var asked string
	u := newTurnUpdates("run-1", testRoot, false, func(sdk.SessionUpdate) {}, func(q string) { asked = q })
	u.Emit(ev(agent.EventInputRequested, agent.TextPayload{Control: map[string]any{"question": "Which project?"}}))
	if asked != "Which project?" {
		t.Errorf("question = %q", asked)
	}
}
