package agenttest

import (
	"encoding/json"

	"github.com/vault-agent/vault-agent/llm"
)

// Goal is the question of the scripted fixture runs.
const Goal = "how do I keep my sourdough starter alive?"

// PlanSearchReadAnswer is a typed plan of three steps: search, read the
// best note, answer.
const PlanSearchReadAnswer = `{"steps":[
		{"id":"s1","description":"Search the vault","tools":["localSearch"],"exit_criteria":"notes found"},
		{"id":"s1b","description":"Read the best note","tools":["readNote"],"exit_criteria":"note read"},
		{"id":"s2","description":"Answer","tools":[],"exit_criteria":"answered"}],
		"exit_criteria":"the question is answered"}`

// Fenced renders v as a fenced JSON block, the way models write control
// blocks.
func Fenced(v any) string {
	b, _ := json.Marshal(v)
	return "```json\n" + string(b) + "\n```"
}

// ScriptedTurns are the model turns of a short run of mode (react, roa,
// par or staged) that searches the fixture vault for Goal, reads the
// starter note and answers. The react one uses the clock tools, so a
// replay must pin the clock.
func ScriptedTurns(mode string) []llm.Turn {
	starter := "recipes/Sourdough Starter.md"
	search := llm.ScriptedToolCall{Name: "localSearch", Arguments: map[string]any{"query": "sourdough starter"}}
	read := llm.ScriptedToolCall{Name: "readNote", Arguments: map[string]any{"notePath": starter}}
	switch mode {
	case "react":
		return []llm.Turn{
			{Content: "Checking the date.", ToolCalls: []llm.ScriptedToolCall{{Name: "getCurrentTime"}, {Name: "getTimeRangeMs", Arguments: map[string]any{"timeExpression": "last week"}}}},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{read}},
			{Content: "Feed it daily. [[Sourdough Starter]]"},
		}
	case "roa":
		return []llm.Turn{
			{Content: "Search first.\n\n" + Fenced(map[string]any{"plan": "search", "tools_to_consider": []string{"localSearch"}, "finish": false})},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Found it.\n\n" + Fenced(map[string]any{"observation": "found", "should_continue": false, "final_answer": "Feed it daily. [[Sourdough Starter]]"})},
		}
	case "par":
		return []llm.Turn{
			{Content: PlanSearchReadAnswer},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Found.\n" + Fenced(map[string]any{"satisfied": true})},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{read}},
			{Content: "Read.\n" + Fenced(map[string]any{"satisfied": true, "done": true})},
			{Content: "Feed it daily. [[Sourdough Starter]]"},
		}
	case "staged":
		return []llm.Turn{
			{Content: `{"goal": "keep the starter alive", "constraints": []}`},
			{Content: `{"subtasks": ["search", "read"]}`},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{read}},
			{Content: `{"summary": "feed it daily", "sources": ["[[Sourdough Starter]]"]}`},
			{Content: `{"answer": "Feed it daily. [[Sourdough Starter]]", "citations": ["[[Sourdough Starter]]"]}`},
		}
	}
	return nil
}
