package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
)

// reasonTurn is a reason reply: prose and a fenced control block.
func reasonTurn(plan string, finish bool) llm.Turn {
	return llm.Turn{Content: fmt.Sprintf("I should look at the notes.\n\n```json\n{\"plan\": %q, \"tools_to_consider\": [\"localSearch\"], \"finish\": %t}\n```", plan, finish)}
}

// observeTurn is an observe reply: prose and a trailing (unfenced) control
// object.
func observeTurn(observation string, cont bool, final string) llm.Turn {
	b, _ := json.Marshal(map[string]any{"observation": observation, "should_continue": cont, "final_answer": final})
	return llm.Turn{Content: "Looking at the results.\n" + string(b)}
}

// phases lists the phase of every ModelResponded event.
func phases(rec *recorder) []string {
	var out []string
	for _, e := range rec.ofType(EventModelResponded) {
		out = append(out, e.Payload.(ModelRespondedPayload).Phase)
	}
	return out
}

func systemOf(req llm.Request) string {
	if len(req.Messages) == 0 || req.Messages[0].Role != llm.RoleSystem {
		return ""
	}
	return req.Messages[0].Content
}

func toolNames(req llm.Request) []string {
	var names []string
	for _, d := range req.Tools {
		names = append(names, d.Name)
	}
	return names
}

func TestROAPhasesRunInOrder(t *testing.T) {
	fi := newFakeIndex(t)
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("Search the notes for the sourdough starter.", false),
		toolTurn("", call("localSearch", map[string]any{"query": "sourdough starter"})),
		observeTurn("The sourdough note looks relevant.", true, ""),
		reasonTurn("Read the sourdough note.", false),
		toolTurn("", call("readNote", map[string]any{"notePath": firstPath(t, fi, "sourdough")})),
		observeTurn("The note says to feed it daily.", false, "Feed it daily. [[Country Sourdough Loaf]]"),
	})
	res, rec := run(t, a, Config{Mode: ModeROA}, "how do I keep my sourdough starter alive?")
	if res.StopReason != StopFinalAnswer || res.Answer != "Feed it daily. [[Country Sourdough Loaf]]" || res.Iterations != 2 {
		t.Fatalf("result = %+v", res)
	}
	step := []string{EventTurnStarted, EventModelResponded, EventReasonEmitted, EventModelResponded,
		EventToolInvoked, EventToolReturned, EventModelResponded, EventObserveEmitted}
	want := append(append(append([]string{EventRunStarted}, step...), step...), EventRunTerminated)
	if got := rec.types(); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	if got, want := phases(rec), []string{"reason", "act", "observe", "reason", "act", "observe"}; !slices.Equal(got, want) {
		t.Fatalf("phases = %v, want %v", got, want)
	}
	for _, r := range returned(rec) {
		if !r.Success {
			t.Fatalf("tool %s failed: %s", r.Tool, r.Error)
		}
	}

	reqs := model.Requests()
	for i, tag := range []string{"[phase:reason]", "[phase:act]", "[phase:observe]", "[phase:reason]", "[phase:act]", "[phase:observe]"} {
		if !strings.Contains(systemOf(reqs[i]), tag) {
			t.Errorf("request %d system message lacks %s:\n%s", i, tag, systemOf(reqs[i]))
		}
		plain := i%3 != 1
		if plain != (len(reqs[i].Tools) == 0) {
			t.Errorf("request %d offered tools %v", i, toolNames(reqs[i]))
		}
	}
	if !slices.Contains(toolNames(reqs[1]), ToolRequestInput) {
		t.Errorf("roa act phase does not offer request_input: %v", toolNames(reqs[1]))
	}
	// The reason plan reaches the act prompt, this step's tool results the
	// observe prompt, and the observation the next reason prompt.
	checks := []struct {
		req  int
		want string
	}{
		{1, "Search the notes for the sourdough starter."},
		{2, "### localSearch"},
		{3, "The sourdough note looks relevant."},
		{4, "Read the sourdough note."},
		{5, "### readNote"},
	}
	for _, c := range checks {
		if !strings.Contains(systemOf(reqs[c.req]), c.want) {
			t.Errorf("request %d system message lacks %q:\n%s", c.req, c.want, systemOf(reqs[c.req]))
		}
	}
	// Every phase sees the tool calls and results made so far, and the
	// conversation never ends with an assistant message.
	for i, req := range reqs {
		if last := req.Messages[len(req.Messages)-1]; last.Role == llm.RoleAssistant {
			t.Errorf("request %d ends with an assistant message", i)
		}
	}
	if n := countRole(reqs[5].Messages, llm.RoleTool); n != 2 {
		t.Errorf("last observe saw %d tool messages, want 2", n)
	}

	reason := rec.ofType(EventReasonEmitted)[0]
	rp := reason.Payload.(TextPayload)
	if rp.Text != "I should look at the notes." || rp.Control["plan"] != "Search the notes for the sourdough starter." || rp.Control["finish"] != false {
		t.Errorf("reason payload = %+v", rp)
	}
	if reason.References.PromptVersion != ROAPromptVersion {
		t.Errorf("reason prompt version = %q", reason.References.PromptVersion)
	}
	op := rec.ofType(EventObserveEmitted)[1].Payload.(TextPayload)
	if op.Control["should_continue"] != false || op.Control["observation"] != "The note says to feed it daily." {
		t.Errorf("observe payload = %+v", op)
	}
}

func countRole(msgs []llm.Message, role string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role {
			n++
		}
	}
	return n
}

func TestROAObserveEndsTheRun(t *testing.T) {
	tests := []struct {
		name, observe string
		wantStop      string
		wantAnswer    string
		wantIter      int
	}{
		{"final answer", `Done. {"observation": "found it", "should_continue": false, "final_answer": "The answer. [[X]]"}`, StopFinalAnswer, "The answer. [[X]]", 1},
		{"empty final answer uses the observation", "```json\n{\"observation\": \"Nothing in the notes.\", \"should_continue\": false, \"final_answer\": \"\"}\n```", StopFinalAnswer, "Nothing in the notes.", 1},
		{"no observation field uses the prose", "The notes do not say.\n```json\n{\"should_continue\": \"false\"}\n```", StopFinalAnswer, "The notes do not say.", 1},
		{"final answer without should_continue", `{"observation": "ok", "final_answer": "Short answer."}`, StopFinalAnswer, "Short answer.", 1},
		{"should_continue true goes on", `{"observation": "more to do", "should_continue": true, "final_answer": "ignored"}`, StopMaxIterations, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newTestAgent(t, []llm.Turn{
				reasonTurn("Check the time.", false),
				toolTurn("", call("getCurrentTime", map[string]any{})),
				{Content: tt.observe},
			})
			res, _ := run(t, a, Config{Mode: ModeROA, MaxIterations: 1}, "what time is it?")
			if res.StopReason != tt.wantStop || res.Iterations != tt.wantIter {
				t.Fatalf("result = %+v", res)
			}
			if tt.wantAnswer != "" && res.Answer != tt.wantAnswer {
				t.Fatalf("answer = %q, want %q", res.Answer, tt.wantAnswer)
			}
		})
	}
}

func TestROAMalformedControlIsText(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		{Content: "I will search.\n```json\n{plan: broken, \"finish\": tru\n```"},
		toolTurn("", call("getCurrentTime", map[string]any{})),
		{Content: "It is some time. {should_continue: false"},
		{Content: "No JSON here at all, just thoughts."},
		toolTurn("", call("getTagList", map[string]any{})),
		observeTurn("Tags listed.", false, "You use #recipe."),
	})
	res, rec := run(t, a, Config{Mode: ModeROA}, "what tags do I use?")
	if res.StopReason != StopFinalAnswer || res.Answer != "You use #recipe." || res.Iterations != 2 {
		t.Fatalf("result = %+v", res)
	}
	reasons := rec.ofType(EventReasonEmitted)
	if len(reasons) != 2 {
		t.Fatalf("%d reason events", len(reasons))
	}
	for i, e := range reasons {
		p := e.Payload.(TextPayload)
		if p.Control != nil || p.Text == "" {
			t.Errorf("reason %d payload = %+v, want text without control", i, p)
		}
	}
	if p := rec.ofType(EventObserveEmitted)[0].Payload.(TextPayload); p.Control != nil || !strings.Contains(p.Text, "{should_continue: false") {
		t.Errorf("observe payload = %+v", p)
	}
	// Without a parsed plan, the reason text is the act phase's plan, and a
	// text observation is the next reason phase's last observation.
	reqs := model.Requests()
	if !strings.Contains(systemOf(reqs[1]), "I will search.") {
		t.Errorf("act prompt lacks the reason text:\n%s", systemOf(reqs[1]))
	}
	if !strings.Contains(systemOf(reqs[3]), "It is some time.") {
		t.Errorf("second reason prompt lacks the observation:\n%s", systemOf(reqs[3]))
	}
}

func TestROAReasonFinishSkipsAct(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("I can answer directly.", true),
		observeTurn("Nothing to look up.", false, "Hello!"),
	})
	res, rec := run(t, a, Config{Mode: ModeROA}, "say hello")
	if res.StopReason != StopFinalAnswer || res.Answer != "Hello!" {
		t.Fatalf("result = %+v", res)
	}
	if got := phases(rec); !slices.Equal(got, []string{"reason", "observe"}) {
		t.Fatalf("phases = %v", got)
	}
	if len(rec.ofType(EventToolInvoked)) != 0 {
		t.Fatal("a tool ran")
	}
	if s := systemOf(model.Requests()[1]); !strings.Contains(s, "No tools were run in this step") {
		t.Fatalf("observe prompt:\n%s", s)
	}
}

func TestROAActWithoutToolsGoesToObserve(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("Answer from general knowledge.", false),
		{Content: "I think the answer is 42."},
		observeTurn("The act phase answered.", false, "42"),
	})
	res, _ := run(t, a, Config{Mode: ModeROA}, "meaning of life")
	if res.StopReason != StopFinalAnswer || res.Answer != "42" {
		t.Fatalf("result = %+v", res)
	}
	if s := systemOf(model.Requests()[2]); !strings.Contains(s, "No tools were called") || !strings.Contains(s, "I think the answer is 42.") {
		t.Fatalf("observe prompt:\n%s", s)
	}
}

func TestROAMaxIterations(t *testing.T) {
	var turns []llm.Turn
	for i := 0; i < 3; i++ {
		turns = append(turns, reasonTurn("Check the time again.", false),
			toolTurn("", call("getCurrentTime", map[string]any{})),
			observeTurn(fmt.Sprintf("Observation %d.", i+1), true, ""))
	}
	a, model := newTestAgent(t, turns)
	res, rec := run(t, a, Config{Mode: ModeROA, MaxIterations: 3}, "loop")
	if res.StopReason != StopMaxIterations || res.Iterations != 3 || model.Remaining() != 0 {
		t.Fatalf("result = %+v, remaining %d", res, model.Remaining())
	}
	if !strings.Contains(res.Answer, "maximum of 3 iterations") || !strings.Contains(res.Answer, "Observation 3.") {
		t.Fatalf("answer = %q", res.Answer)
	}
	if n := len(rec.ofType(EventTurnStarted)); n != 3 {
		t.Fatalf("%d turns", n)
	}
}

func TestROATimeout(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
	res, _ := run(t, a, Config{Mode: ModeROA, Timeout: 50 * time.Millisecond}, "be slow")
	if res.StopReason != StopTimeout {
		t.Fatalf("result = %+v", res)
	}
}

func TestROAModelErrorEndsWithError(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{reasonTurn("x", false), {Error: "upstream exploded"}})
	res, rec := run(t, a, Config{Mode: ModeROA}, "x")
	if res.StopReason != StopError || !strings.Contains(res.Error, "act call failed") || !strings.Contains(res.Error, "upstream exploded") {
		t.Fatalf("result = %+v", res)
	}
	if got := phases(rec); !slices.Equal(got, []string{"reason", "act"}) {
		t.Fatalf("phases = %v", got)
	}
}

// startROA runs in the background and returns the recorder and the result
// channel.
func startRun(t *testing.T, a *Agent, req RunRequest) (*recorder, <-chan *Result) {
	t.Helper()
	rec := newRecorder()
	done := make(chan *Result, 1)
	go func() {
		res, err := a.Run(context.Background(), req, rec)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	return rec, done
}

func TestROAStopDuringReason(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		{Content: "slow reasoning", DelayMs: 60_000},
		toolTurn("", call("getCurrentTime", map[string]any{})),
		observeTurn("never", false, "never"),
	})
	rec, done := startRun(t, a, RunRequest{RunID: "stop1", Message: "x", Config: Config{Mode: ModeROA}})
	rec.waitFor(t, EventTurnStarted)
	if err := a.Stop("stop1"); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.StopReason != StopStopped {
		t.Fatalf("result = %+v", res)
	}
	if len(model.Requests()) != 1 || model.Remaining() != 2 {
		t.Fatalf("the act phase ran after the stop: %d requests", len(model.Requests()))
	}
	if len(rec.ofType(EventReasonEmitted)) != 0 || len(rec.ofType(EventToolInvoked)) != 0 {
		t.Fatalf("events after the stop: %v", rec.types())
	}
	if got := rec.types(); got[len(got)-1] != EventRunTerminated {
		t.Fatalf("events = %v", got)
	}
}

func TestROAStopDuringActFinishesToolsThenStops(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("Block.", false),
		toolTurn("", call("block", map[string]any{})),
		observeTurn("never", false, "never"),
	})
	release := addBlockingTool(a)
	rec, done := startRun(t, a, RunRequest{RunID: "stop2", Message: "x", Config: Config{Mode: ModeROA}})
	rec.waitFor(t, EventToolInvoked)
	if err := a.Stop("stop2"); err != nil {
		t.Fatal(err)
	}
	close(release)
	res := <-done
	if res.StopReason != StopStopped {
		t.Fatalf("result = %+v", res)
	}
	if r := returned(rec); len(r) != 1 || !r[0].Success {
		t.Fatalf("the tool in flight should finish: %+v", r)
	}
	if model.Remaining() != 1 || len(rec.ofType(EventObserveEmitted)) != 0 {
		t.Fatal("the observe phase ran after the stop")
	}
}

func TestROARequestInputPausesAndResumes(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("Ask which starter.", false),
		toolTurn("", call(ToolRequestInput, map[string]any{"question": "Which starter, rye or wheat?"})),
		observeTurn("The user means rye.", false, "Feed the rye starter daily."),
	})
	rec, done := startRun(t, a, RunRequest{RunID: "in1", Message: "starter help", Config: Config{Mode: ModeROA}})
	ev := rec.waitFor(t, EventInputRequested)
	if q := ev.Payload.(TextPayload).Text; q != "Which starter, rye or wheat?" {
		t.Fatalf("question = %q", q)
	}
	if err := a.Input("in1", "rye, please"); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.StopReason != StopFinalAnswer || res.Answer != "Feed the rye starter daily." {
		t.Fatalf("result = %+v", res)
	}
	obs := model.Requests()[2]
	last := obs.Messages[len(obs.Messages)-1]
	if last.Role != llm.RoleTool || last.Name != ToolRequestInput || !strings.Contains(last.Content, "rye, please") {
		t.Fatalf("observe conversation ends with %+v", last)
	}
	if !strings.Contains(systemOf(obs), "rye, please") {
		t.Fatalf("observe prompt lacks the answer:\n%s", systemOf(obs))
	}
	if len(rec.ofType(EventInputReceived)) != 1 {
		t.Fatalf("events = %v", rec.types())
	}
}

func TestROAPlanReviewEndsAfterThePlan(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("Plan first.", false),
		toolTurn("", call("write_todos", map[string]any{"todos": threeTodos()})),
		observeTurn("never", false, "never"),
	})
	res, rec := run(t, a, Config{Mode: ModeROA, Planner: true, PlanReview: true}, "plan a trip")
	if res.StopReason != StopAwaitUserInput || model.Remaining() != 1 || len(rec.ofType(EventPlanReviewPending)) != 1 {
		t.Fatalf("result = %+v, remaining %d, events %v", res, model.Remaining(), rec.types())
	}
}

func TestROAPromptOverrides(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agent_reason_prompt.md", "CUSTOM REASON for {{.Goal}} (step {{.Step}}/{{.MaxSteps}}).\nTools:\n{{.Tools}}")
	a, model := newTestAgent(t, []llm.Turn{
		reasonTurn("x", true),
		observeTurn("done", false, "ok"),
	})
	res, rec := run(t, a, Config{Mode: ModeROA, PromptDir: dir}, "custom goal")
	if res.StopReason != StopFinalAnswer {
		t.Fatalf("result = %+v", res)
	}
	reqs := model.Requests()
	reason := systemOf(reqs[0])
	for _, want := range []string{"[phase:reason]", "CUSTOM REASON for custom goal (step 1/10).", "- localSearch: "} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason prompt lacks %q:\n%s", want, reason)
		}
	}
	// The observe template was not overridden: the embedded one is used.
	if obs := systemOf(reqs[1]); !strings.Contains(obs, "[phase:observe]") || !strings.Contains(obs, "OBSERVE phase of step 1") {
		t.Errorf("observe prompt:\n%s", obs)
	}
	if v := rec.ofType(EventReasonEmitted)[0].References.PromptVersion; v != ROAPromptVersion+"+user" {
		t.Errorf("prompt version = %q", v)
	}

	bad := []struct{ name, file, body, want string }{
		{"unparsable", "agent_observe_prompt.md", "{{.Goal", "agent_observe_prompt.md"},
		{"unknown field", "agent_act_prompt.md", "{{.Nope}}", "can't evaluate field Nope"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := CheckPromptDir(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckPromptDir = %v, want an error containing %q", err, tt.want)
			}
			a, model := newTestAgent(t, []llm.Turn{reasonTurn("x", true)})
			res, _ := run(t, a, Config{Mode: ModeROA, PromptDir: dir}, "x")
			if res.StopReason != StopError || !strings.Contains(res.Error, tt.want) || len(model.Requests()) != 0 {
				t.Fatalf("result = %+v, %d requests", res, len(model.Requests()))
			}
		})
	}
	if err := CheckPromptDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing prompt folder was accepted")
	}
	if err := CheckPromptDir(""); err != nil {
		t.Errorf("embedded prompts: %v", err)
	}
}

func TestEmbeddedPromptsCarryTheirTags(t *testing.T) {
	p, err := embeddedPrompts()
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range roaPhases {
		raw, err := promptFS.ReadFile("prompts/" + ph.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(raw), ph.tag) {
			t.Errorf("%s does not start with %s", ph.file, ph.tag)
		}
		out, err := p.render(ph.phase, PromptData{Goal: "the goal", Step: 2, MaxSteps: 5})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, ph.tag) || !strings.Contains(out, "the goal") || strings.Contains(out, "<no value>") {
			t.Errorf("%s renders as:\n%s", ph.file, out)
		}
	}
}

func TestControlFields(t *testing.T) {
	c := map[string]any{"plan": []any{"search", "", "read"}, "a": true, "b": "False", "c": 3.0, "s": "  x  "}
	if got := controlString(c, "plan"); got != "search; read" {
		t.Errorf("list plan = %q", got)
	}
	if got := controlString(c, "s"); got != "x" {
		t.Errorf("string = %q", got)
	}
	for key, want := range map[string][2]bool{"a": {true, true}, "b": {false, true}, "c": {false, false}, "zz": {false, false}} {
		if v, ok := controlBool(c, key); v != want[0] || ok != want[1] {
			t.Errorf("controlBool(%s) = %v, %v", key, v, ok)
		}
	}
	if controlString(nil, "x") != "" || observeEnds(nil) {
		t.Error("nil control")
	}
}

func TestROAUnknownRunAndErrors(t *testing.T) {
	a, _ := newTestAgent(t, nil)
	if err := a.Input("nope", "x"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("Input on unknown run: %v", err)
	}
}
