package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
)

// fakeVault plays the agent's tools for the offline policy, following the
// tool contracts in offline.go's doc comment.
type fakeVault struct {
	notes map[string]string // path -> content
}

var testNotes = map[string]string{
	"Baking/Sourdough Starter.md": "# Sourdough Starter\n\nMy starter is called Bubbles.\nI feed the sourdough starter every morning with equal parts flour and water. " +
		"It doubles in about six hours when the kitchen is warm.\n\n## Problems\n\n- When the starter smells like acetone, it is hungry and needs more frequent feeding.\n- A layer of hooch on top is harmless.",
	"Baking/Bread Log.md":          "# Bread Log\n\nSaturday loaf: the sourdough rose well after a long cold proof. The crumb was open.\n\n```\nflour 500g\n```\n",
	"Journal/2026-03-02.md":        "Went for a run. Talked to Sam about the garden project. The tomatoes need stakes.",
	"Work/Meeting Notes.md":        "# Meeting Notes\n\nWe agreed to ship the beta in April. Sam owns the release checklist.",
	"Recipes/Sourdough Starter.md": "A second note with the same name. Starter feeding ratio is 1:1:1 by weight for this recipe.",
	"中文/面包.md":                     "今天我做了酸面包。面包很好吃！你想试试吗？酸面包需要很长时间发酵。",
}

var reTerm = regexp.MustCompile(`"[^"]+"|\S+`)

func (v fakeVault) run(tc llm.ToolCall) string {
	var a map[string]any
	if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
		return `{"error":"invalid arguments: ` + err.Error() + `"}`
	}
	switch tc.Name {
	case "write_todos":
		return `{"ok":true,"revision":1,"todoCount":3,"inProgress":"search"}`
	case "plan_progress":
		return `{"ok":true,"message":"recorded"}`
	case "getTimeRangeMs":
		return fmt.Sprintf(`{"startTime":1000,"endTime":2000,"expression":%q}`, a["timeExpression"])
	case "localSearch":
		q, _ := a["query"].(string)
		var terms []string
		// Like the real index, question words do not need to match.
		for _, t := range reTerm.FindAllString(q, -1) {
			t = strings.ToLower(strings.Trim(t, `"?!.,`))
			if t != "or" && t != "" && !stopWords[t] {
				terms = append(terms, t)
			}
		}
		anyTerm := strings.Contains(q, " OR ")
		type hit struct {
			Path       string  `json:"path"`
			Title      string  `json:"title"`
			Score      float64 `json:"score"`
			Snippet    string  `json:"snippet"`
			ChunkIndex int     `json:"chunkIndex"`
		}
		var hits []hit
		paths := make([]string, 0, len(v.notes))
		for p := range v.notes {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			body := strings.ToLower(p + " " + v.notes[p])
			n := 0
			for _, t := range terms {
				if strings.Contains(body, t) {
					n++
				}
			}
			if n > 0 && (anyTerm || n == len(terms)) {
				hits = append(hits, hit{Path: p, Title: noteName(p), Score: float64(n), Snippet: short(v.notes[p], 60)})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
		b, _ := json.Marshal(map[string]any{"results": hits, "total": len(hits)})
		return string(b)
	case "readNote":
		p, _ := a["notePath"].(string)
		c, ok := v.notes[p]
		if !ok {
			return `{"error":"note not found: ` + p + `"}`
		}
		b, _ := json.Marshal(map[string]any{"path": p, "title": noteName(p), "chunkIndex": 0, "chunkCount": 1,
			"content": c, "headings": []map[string]any{{"level": 1, "text": noteName(p)}}})
		return string(b)
	}
	return `{"error":"unknown tool"}`
}

func toolDefs(names ...string) []llm.ToolDef {
	var out []llm.ToolDef
	for _, n := range names {
		out = append(out, llm.ToolDef{Name: n, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	return out
}

type loopResult struct {
	turns   [][]llm.ToolCall
	texts   []string
	answer  string
	deltas  string
	request llm.Request
}

// runLoop drives the offline model like the react loop does.
func runLoop(t *testing.T, goal string, tools []llm.ToolDef, maxTurns int) loopResult {
	t.Helper()
	m := New()
	v := fakeVault{notes: testNotes}
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You are vault-agent."}, {Role: llm.RoleUser, Content: goal}}, Tools: tools}
	var res loopResult
	for i := 0; i < maxTurns; i++ {
		var d strings.Builder
		resp, err := m.Chat(context.Background(), req, func(s string) { d.WriteString(s) })
		if err != nil {
			t.Fatal(err)
		}
		// The answer streams in full; a tool turn's sentence is a step
		// and does not stream at all.
		if want := resp.Content; len(resp.ToolCalls) > 0 && d.String() != "" || len(resp.ToolCalls) == 0 && d.String() != want {
			t.Fatalf("deltas %q for content %q with %d tool calls", d.String(), resp.Content, len(resp.ToolCalls))
		}
		res.texts = append(res.texts, resp.Content)
		if len(resp.ToolCalls) == 0 {
			res.answer, res.deltas, res.request = resp.Content, d.String(), req
			return res
		}
		if strings.Contains(resp.Content, "\n") || strings.TrimSpace(resp.Content) == "" {
			t.Errorf("tool turn text is not one short sentence: %q", resp.Content)
		}
		res.turns = append(res.turns, resp.ToolCalls)
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: v.run(tc)})
		}
	}
	t.Fatalf("no final answer within %d turns; turns: %v", maxTurns, res.turns)
	return res
}

func names(turns [][]llm.ToolCall) []string {
	var out []string
	for _, calls := range turns {
		var n []string
		for _, c := range calls {
			n = append(n, c.Name)
		}
		out = append(out, strings.Join(n, "+"))
	}
	return out
}

func args(t *testing.T, tc llm.ToolCall) map[string]any {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
		t.Fatalf("%s arguments %q: %v", tc.Name, tc.Arguments, err)
	}
	return a
}

var basicTools = []string{"localSearch", "readNote", "getTimeRangeMs", "getFileTree"}

func TestOfflineReactLoop(t *testing.T) {
	tests := []struct {
		name      string
		goal      string
		tools     []string
		wantCalls []string
		check     func(t *testing.T, r loopResult)
	}{
		{
			name:      "planner off",
			goal:      "How often do I feed my sourdough starter?",
			tools:     basicTools,
			wantCalls: []string{"localSearch", "readNote+readNote"},
			check: func(t *testing.T, r loopResult) {
				a := args(t, r.turns[0][0])
				if a["query"] != "How often do I feed my sourdough starter" {
					t.Errorf("query = %v", a["query"])
				}
				if !strings.Contains(r.answer, "I feed the sourdough starter every morning") {
					t.Errorf("answer misses the key sentence:\n%s", r.answer)
				}
				// The paragraph that answers, with its citation, then the
				// notes that only touch on it, then the sources.
				lines := strings.Split(r.answer, "\n")
				if lines[0] != "My starter is called Bubbles. I feed the sourdough starter every morning with equal parts flour and water. "+
					"It doubles in about six hours when the kitchen is warm. [[Baking/Sourdough Starter]]" ||
					!strings.Contains(r.answer, "\nSources: [[Baking/Sourdough Starter]]") {
					t.Errorf("answer shape:\n%s", r.answer)
				}
				// Two notes share the basename: the citation carries the folder.
				if !strings.Contains(r.answer, "\nSee also [[Recipes/Sourdough Starter]].") {
					t.Errorf("ambiguous basenames not disambiguated:\n%s", r.answer)
				}
				for _, line := range strings.Split(r.answer, "\n") {
					if strings.HasPrefix(line, "- ") && !strings.HasSuffix(line, "]]") {
						t.Errorf("bullet without citation: %q", line)
					}
				}
				if strings.Contains(r.answer, "flour 500g") {
					t.Errorf("code block quoted:\n%s", r.answer)
				}
			},
		},
		{
			name:      "planner on",
			goal:      "How often do I feed my sourdough starter?",
			tools:     append([]string{"write_todos", "plan_progress"}, basicTools...),
			wantCalls: []string{"write_todos", "localSearch", "plan_progress", "readNote+readNote", "plan_progress"},
			check: func(t *testing.T, r loopResult) {
				todos := args(t, r.turns[0][0])["todos"].([]any)
				if len(todos) != 3 || todos[0].(map[string]any)["status"] != "in_progress" ||
					todos[0].(map[string]any)["id"] != "search" {
					t.Errorf("todos = %v", todos)
				}
				if p := args(t, r.turns[2][0]); p["step_id"] != "search" || p["next_step"] != "read" {
					t.Errorf("first progress = %v", p)
				}
				if p := args(t, r.turns[4][0]); p["step_id"] != "read" || p["plan_status"] != "completed" {
					t.Errorf("last progress = %v", p)
				}
			},
		},
		{
			name:      "time expression",
			goal:      "What did I write about the garden last week?",
			tools:     basicTools,
			wantCalls: []string{"getTimeRangeMs", "localSearch", "readNote"},
			check: func(t *testing.T, r loopResult) {
				if a := args(t, r.turns[0][0]); a["timeExpression"] != "last week" {
					t.Errorf("time args = %v", a)
				}
				a := args(t, r.turns[1][0])
				tr, _ := a["timeRange"].(map[string]any)
				if a["query"] != "What did I write about the garden" || tr["startTime"] != float64(1000) || tr["endTime"] != float64(2000) {
					t.Errorf("search args = %v", a)
				}
				if !strings.Contains(r.answer, "garden project") || !strings.Contains(r.answer, "[[2026-03-02]]") {
					t.Errorf("answer:\n%s", r.answer)
				}
			},
		},
		{
			name:      "zero results: retry then no notes",
			goal:      "Explain quantum chromodynamics lattice methods",
			tools:     basicTools,
			wantCalls: []string{"localSearch", "localSearch"},
			check: func(t *testing.T, r loopResult) {
				if q := args(t, r.turns[1][0])["query"]; q != "chromodynamics OR quantum OR lattice" {
					t.Errorf("retry query = %v", q)
				}
				if !strings.Contains(r.answer, "couldn't find any notes") || !strings.Contains(r.answer, "try other terms") {
					t.Errorf("answer:\n%s", r.answer)
				}
			},
		},
		{
			name:      "zero results with planner closes the plan",
			goal:      "quantum chromodynamics",
			tools:     append([]string{"write_todos", "plan_progress"}, basicTools...),
			wantCalls: []string{"write_todos", "localSearch", "localSearch", "plan_progress"},
		},
		{
			name:      "retry finds notes",
			goal:      "sourdough hydration schedule",
			tools:     basicTools,
			wantCalls: []string{"localSearch", "localSearch", "readNote+readNote+readNote"},
		},
		{
			name:      "CJK goal",
			goal:      "酸面包",
			tools:     basicTools,
			wantCalls: []string{"localSearch", "readNote"},
			check: func(t *testing.T, r loopResult) {
				if !strings.Contains(r.answer, "今天我做了酸面包。面包很好吃！你想试试吗？酸面包需要很长时间发酵。 [[面包]]") {
					t.Errorf("answer:\n%s", r.answer)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var defs []llm.ToolDef
			defs = toolDefs(tt.tools...)
			r := runLoop(t, tt.goal, defs, 10)
			if got := names(r.turns); !reflect.DeepEqual(got, tt.wantCalls) {
				t.Fatalf("calls = %v, want %v", got, tt.wantCalls)
			}
			if len(r.turns)+1 > 8 {
				t.Errorf("%d turns, want <= 8", len(r.turns)+1)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

// TestOfflineHandWrittenResults feeds results written by hand, including a
// failed read and a reminder appended to a tool result.
func TestOfflineHandWrittenResults(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "system"},
		{Role: llm.RoleUser, Content: "older question about cats"},
		{Role: llm.RoleAssistant, Content: "Cats are in [[Pets]]."},
		{Role: llm.RoleUser, Content: "<plan_feedback>\nplan:\n- search\n</plan_feedback>\nWhat is the wifi password at the cabin?"},
		{Role: llm.RoleAssistant, Content: "Searching.", ToolCalls: []llm.ToolCall{{ID: "a", Name: "localSearch", Arguments: `{"query":"wifi password cabin"}`}}},
		{Role: llm.RoleTool, ToolCallID: "a", Content: `{"results":[` +
			`{"path":"Places/Cabin.md","title":"Cabin","score":3.2,"snippet":"The <mark>wifi</mark> password is pinecone42.","chunkIndex":1},` +
			`{"path":"Gone.md","title":"Gone","score":3,"snippet":"The cabin wifi password was changed in 2024.","chunkIndex":0}],"total":2}` +
			"\n\n<goal_plan_reminder>\nReminder\n</goal_plan_reminder>"},
	}
	req := llm.Request{Messages: msgs, Tools: toolDefs("localSearch", "readNote")}
	resp, err := New().Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Arguments != `{"chunkIndex":1,"notePath":"Places/Cabin.md"}` ||
		resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
		t.Fatalf("read calls = %+v", resp.ToolCalls)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: `{"path":"Places/Cabin.md","title":"Cabin","chunkIndex":1,"chunkCount":2,` +
			`"heading":"Wifi","content":"## Wifi\nThe router is behind the couch. The wifi password is pinecone42 and the network is CabinNet.\nBring firewood.","headings":[{"level":2,"text":"Wifi"}]}`},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[1].ID, Content: `{"error":"note not found: Gone.md"}`},
	)
	resp, err = New().Chat(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 0 {
		t.Fatalf("expected the answer, got calls %+v", resp.ToolCalls)
	}
	// The note that could not be read is judged by its snippet.
	for _, want := range []string{"The router is behind the couch. The wifi password is pinecone42 and the network is CabinNet. Bring firewood. [[Cabin#Wifi]]",
		"See also [[Gone]].", "Sources: [[Cabin]]"} {
		if !strings.Contains(resp.Content, want) {
			t.Errorf("answer lacks %q:\n%s", want, resp.Content)
		}
	}
	if strings.Contains(resp.Content, "cats") || strings.Contains(resp.Content, "plan_feedback") {
		t.Errorf("answer uses the wrong goal:\n%s", resp.Content)
	}
}

func TestOfflineContinuationKeepsGoal(t *testing.T) {
	r := runLoop(t, "How often do I feed my sourdough starter?", toolDefs(basicTools...), 10)
	msgs := append(r.request.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: r.answer},
		llm.Message{Role: llm.RoleUser, Content: "<plan-continuation>\nYou stopped before finishing your plan.\n\nGoal:\nsomething else\n</plan-continuation>"})
	resp, err := New().Chat(context.Background(), llm.Request{Messages: msgs, Tools: r.request.Tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 0 || resp.Content != r.answer {
		t.Errorf("after continuation: %+v", resp)
	}
}

func TestOfflineDeterminism(t *testing.T) {
	r := runLoop(t, "sourdough starter feeding", toolDefs(append([]string{"write_todos", "plan_progress"}, basicTools...)...), 10)
	for _, kind := range []string{"", "[phase:reason]", "[phase:observe]", "[phase:plan]", "[stage:synthesis] {\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\"}}}"} {
		req := r.request
		req.Messages = append([]llm.Message{{Role: llm.RoleSystem, Content: kind}}, req.Messages...)
		var first *llm.Response
		var firstDeltas []string
		for i := 0; i < 5; i++ {
			var d []string
			resp, err := New().Chat(context.Background(), req, func(s string) { d = append(d, s) })
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first, firstDeltas = resp, d
				continue
			}
			if !reflect.DeepEqual(resp, first) || !reflect.DeepEqual(d, firstDeltas) {
				t.Fatalf("%q: run %d differs:\n%+v\n%+v", kind, i, resp, first)
			}
		}
	}
}

var reFence = regexp.MustCompile("(?s)```json\n(.*?)\n```")

func TestOfflinePhases(t *testing.T) {
	goal := "How often do I feed my sourdough starter?"
	done := runLoop(t, goal, toolDefs(basicTools...), 10).request.Messages[1:]
	fresh := []llm.Message{{Role: llm.RoleUser, Content: goal}}
	sys := func(tag string) llm.Message {
		return llm.Message{Role: llm.RoleSystem, Content: "You are in a loop.\n" + tag}
	}

	control := func(t *testing.T, content string) map[string]any {
		t.Helper()
		m := reFence.FindStringSubmatch(content)
		if m == nil {
			t.Fatalf("no json block in %q", content)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
			t.Fatalf("control json %q: %v", m[1], err)
		}
		if strings.TrimSpace(content[:strings.Index(content, "```")]) == "" {
			t.Errorf("no text before the block: %q", content)
		}
		return v
	}
	chat := func(t *testing.T, msgs []llm.Message, tools []llm.ToolDef) *llm.Response {
		t.Helper()
		resp, err := New().Chat(context.Background(), llm.Request{Messages: msgs, Tools: tools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("reason", func(t *testing.T) {
		v := control(t, chat(t, append([]llm.Message{sys("[phase:reason]")}, fresh...), nil).Content)
		if v["finish"] != false || !reflect.DeepEqual(v["tools_to_consider"], []any{"localSearch"}) || v["plan"] == "" {
			t.Errorf("fresh reason = %v", v)
		}
		v = control(t, chat(t, append([]llm.Message{sys("[phase:reason]")}, done...), nil).Content)
		if v["finish"] != true {
			t.Errorf("done reason = %v", v)
		}
	})
	t.Run("observe", func(t *testing.T) {
		v := control(t, chat(t, append([]llm.Message{sys("[phase:observe]")}, done...), nil).Content)
		if v["should_continue"] != false || !strings.Contains(v["final_answer"].(string), "[[") ||
			!strings.Contains(v["observation"].(string), "Read") {
			t.Errorf("done observe = %v", v)
		}
		mid := done[:3] // goal, search call, search result
		v = control(t, chat(t, append([]llm.Message{sys("[phase:observe]")}, mid...), nil).Content)
		if v["should_continue"] != true || v["final_answer"] != "" || !strings.Contains(v["observation"].(string), "search found") {
			t.Errorf("mid observe = %v", v)
		}
	})
	t.Run("act", func(t *testing.T) {
		resp := chat(t, append([]llm.Message{sys("[phase:act]")}, fresh...), toolDefs(basicTools...))
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "localSearch" {
			t.Errorf("act = %+v", resp)
		}
	})
	t.Run("plan", func(t *testing.T) {
		resp := chat(t, []llm.Message{sys("[phase:plan]"), {Role: llm.RoleUser, Content: "garden notes from last month"}}, nil)
		var p struct {
			Steps []struct {
				ID           string   `json:"id"`
				Description  string   `json:"description"`
				ExitCriteria string   `json:"exit_criteria"`
				Tools        []string `json:"tools"`
			}
			ExitCriteria string `json:"exit_criteria"`
		}
		if err := json.Unmarshal([]byte(resp.Content), &p); err != nil {
			t.Fatalf("plan %q: %v", resp.Content, err)
		}
		if len(p.Steps) != 4 || p.Steps[0].Tools[0] != "getTimeRangeMs" || p.ExitCriteria == "" {
			t.Errorf("plan = %s", resp.Content)
		}
	})
	t.Run("stages", func(t *testing.T) {
		tests := []struct {
			stage, schema string
			msgs          []llm.Message
			check         func(map[string]any) bool
		}{
			{"goal_framing", `{"type":"object","properties":{"goal":{"type":"string"},"constraints":{"type":"array","items":{"type":"string"}}},"required":["goal","constraints"]}`,
				fresh, func(v map[string]any) bool { return v["goal"] == goal && len(v["constraints"].([]any)) > 0 }},
			{"decomposition", `{"type":"object","properties":{"subtasks":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"description":{"type":"string"}}}}}}`,
				fresh, func(v map[string]any) bool {
					s := v["subtasks"].([]any)
					return len(s) == 3 && s[0].(map[string]any)["id"] == "s1" && strings.Contains(s[0].(map[string]any)["description"].(string), "sourdough")
				}},
			{"synthesis", `{"type":"object","properties":{"answer":{"type":"string"},"citations":{"type":"array","items":{"type":"string"}}}}`,
				done, func(v map[string]any) bool {
					return strings.Contains(v["answer"].(string), "every morning") && len(v["citations"].([]any)) > 0
				}},
			{"custom", `{"type":"object","properties":{"risk":{"type":"string"},"level":{"type":"string","enum":["low","high"]},"ok":{"type":"boolean"},"n":{"type":"integer"}},"required":["risk","level"]}`,
				fresh, func(v map[string]any) bool { return v["risk"] == goal && v["level"] == "low" && v["ok"] == false }},
			{"synthesis", "no schema here", done, func(v map[string]any) bool { return v["answer"] != "" && v["citations"] != nil }},
		}
		for _, tt := range tests {
			t.Run(tt.stage, func(t *testing.T) {
				msgs := append([]llm.Message{sys("[stage:" + tt.stage + "]\nOutput schema:\n" + tt.schema)}, tt.msgs...)
				resp := chat(t, msgs, nil)
				var v map[string]any
				if err := json.Unmarshal([]byte(resp.Content), &v); err != nil {
					t.Fatalf("stage output %q: %v", resp.Content, err)
				}
				if !tt.check(v) {
					t.Errorf("stage output = %s", resp.Content)
				}
			})
		}
		t.Run("tool_routing", func(t *testing.T) {
			msgs := append([]llm.Message{sys("[stage:tool_routing]")}, fresh...)
			if resp := chat(t, msgs, toolDefs(basicTools...)); len(resp.ToolCalls) != 1 {
				t.Errorf("tool_routing = %+v", resp)
			}
			msgs = append([]llm.Message{sys("[stage:tool_routing]")}, done...)
			resp := chat(t, msgs, toolDefs(basicTools...))
			if len(resp.ToolCalls) != 0 || !json.Valid([]byte(resp.Content)) {
				t.Errorf("done tool_routing = %+v", resp)
			}
		})
	})
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"今天我做了面包。面包很好吃！你呢？", []string{"今天我做了面包。", "面包很好吃！", "你呢？"}},
		{"First one here. Second one here! Third one here? yes", []string{"First one here.", "Second one here!", "Third one here?"}},
		{"---\ntitle: x\n---\n# Head\nBody text is here.\n```\ncode line is here.\n```\n- list item one here\n- [x] done item here", []string{"Body text is here.", "list item one here", "done item here"}},
		{"See [[Other Note|the other note]] and [link](http://x) for more info.", []string{"See the other note and link for more info."}},
		{"Mixed English and 中文句子。Another sentence here.", []string{"Mixed English and 中文句子。", "Another sentence here."}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := splitSentences(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
}

func TestExtractTerms(t *testing.T) {
	tests := []struct {
		goal, time string
		phrases    []string
		keywords   []string
	}{
		{`What are my notes about "sourdough starter" feeding?`, "", []string{"sourdough starter"}, []string{"feeding"}},
		{"What did I write about the garden last week?", "last week", nil, []string{"garden"}},
		{"Meetings in March with Sam", "march", nil, []string{"meetings", "sam"}},
		{"summary of 2026-03 journal", "2026-03", nil, []string{"journal"}},
		{"runs in the last 30 days", "last 30 days", nil, []string{"runs"}},
		{"How can I help?", "", nil, []string{"help"}},
		{"酸面包 recipe", "", nil, []string{"酸面包", "recipe"}},
	}
	for _, tt := range tests {
		t.Run(tt.goal, func(t *testing.T) {
			expr, rest := findTimeExpression(tt.goal)
			q := extractTerms(rest, expr != "")
			if expr != tt.time || !reflect.DeepEqual(q.phrases, tt.phrases) || !reflect.DeepEqual(q.keywords, tt.keywords) {
				t.Errorf("time %q phrases %q keywords %q", expr, q.phrases, q.keywords)
			}
		})
	}
}

func TestWordChunks(t *testing.T) {
	for _, s := range []string{"", "one", "From your notes:\n\n- a b [[c]]\n", "  lead space"} {
		if got := strings.Join(wordChunks(s), ""); got != s {
			t.Errorf("chunks of %q join to %q", s, got)
		}
	}
}

// A long pasted goal gives a search query within the search's limits,
// which keeps the goal's first terms.
func TestQueryWithinSearchLimits(t *testing.T) {
	var goal strings.Builder
	for i := range 300 {
		fmt.Fprintf(&goal, "keyword%03d ", i)
	}
	goal.WriteString(`"a quoted phrase"`)
	q := extractTerms(goal.String(), false).query()
	if err := search.CheckQuerySize(q); err != nil || !strings.HasPrefix(q, `"a quoted phrase" keyword000`) {
		t.Fatalf("query %q: %v", q, err)
	}
}

// TestFailedSearchIsNotNoNotes: when every search of the turn failed, the
// answer says the vault could not be searched and why, not that no note
// matches.
func TestFailedSearchIsNotNoNotes(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "system"},
		{Role: llm.RoleUser, Content: "what is a goblin"},
		{Role: llm.RoleAssistant, Content: "Searching.", ToolCalls: []llm.ToolCall{{ID: "a", Name: "localSearch", Arguments: `{"query":"what is a goblin"}`}}},
		{Role: llm.RoleTool, ToolCallID: "a", Content: `{"error":"the search failed on an internal error (not your query or your vault; please report it): runtime error: index out of range [0] with length 0"}`},
	}
	req := llm.Request{Messages: msgs, Tools: toolDefs("localSearch", "readNote")}
	for range 3 {
		resp, err := New().Chat(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.ToolCalls) == 0 {
			if !strings.Contains(resp.Content, `I could not search your vault for "goblin": the search failed on an internal error`) ||
				strings.Contains(resp.Content, "couldn't find any notes") {
				t.Errorf("answer:\n%s", resp.Content)
			}
			return
		}
		// A retry of the search fails the same way.
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, c := range resp.ToolCalls {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: `{"error":"the search failed on an internal error (not your query or your vault; please report it): runtime error: index out of range [0] with length 0"}`})
		}
	}
	t.Fatal("no answer after three turns")
}
