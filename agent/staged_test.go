package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

// testStagePolicy: frame (retry once) → gather (localSearch, 2 turns, no
// retry, falls back to answer) → answer (terminate on invalid).
const testStagePolicy = `name: t
stages:
  - name: frame
    prompt: Frame it.
    output_schema: {type: object, required: [goal], properties: {goal: {type: string, minLength: 1}}}
    transitions: {on_invalid: retry, max_retries: 1}
  - name: gather
    prompt: Gather.
    output_schema: {type: object, required: [summary], properties: {summary: {type: string}}}
    guardrails: {allowed_tools: [localSearch], max_turns: 2}
    transitions: {on_invalid: retry, max_retries: 0, fallback_stage: answer}
  - name: answer
    prompt: Answer.
    output_schema: {type: object, required: [answer], properties: {answer: {type: string, minLength: 1}}}
    transitions: {on_invalid: terminate}
`

func stagedRun(t *testing.T, policy string, model llm.Model) (*Result, *recorder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := New(Deps{Model: model, Index: newFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := newRecorder()
	res, err := a.Run(context.Background(), RunRequest{RunID: "r1", Message: "how do I keep my sourdough starter alive?",
		Config: Config{Mode: ModeStaged, PolicyPath: path}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

// outcomes lists "stage:outcome" of the StageCompleted events.
func outcomes(rec *recorder) []string {
	var out []string
	for _, e := range rec.ofType(EventStageCompleted) {
		p := e.Payload.(StagePayload)
		out = append(out, p.Stage+":"+p.Outcome)
	}
	return out
}

func TestStagedTransitions(t *testing.T) {
	frameOK := llm.Turn{Content: `{"goal": "keep the starter alive"}`, Expect: &llm.Expect{Contains: "[stage:frame]", ToolsOffered: []string{}}}
	search := llm.Turn{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "starter"})},
		Expect: &llm.Expect{Contains: "[stage:gather]", ToolsOffered: []string{"localSearch"}}}
	gatherOK := llm.Turn{Content: "Done.\n```json\n{\"summary\": \"feed it\"}\n```"}
	answerOK := llm.Turn{Content: `{"answer": "Feed it daily. [[Sourdough Starter]]"}`, Expect: &llm.Expect{Contains: `- gather: {"summary":"feed it"}`}}
	tests := []struct {
		name       string
		turns      []llm.Turn
		stop       string
		answer     string
		outcomes   []string
		errHas     string // in the first non-ok StageCompleted
		reflection string
	}{
		{name: "all ok", turns: []llm.Turn{frameOK, search, gatherOK, answerOK}, stop: StopFinalAnswer,
			answer: "Feed it daily. [[Sourdough Starter]]", outcomes: []string{"frame:ok", "gather:ok", "answer:ok"}},
		{name: "schema violation is retried",
			turns: []llm.Turn{{Content: `{"goal": ""}`}, {Content: `{"goal": "g"}`, Expect: &llm.Expect{Contains: "Your previous output was rejected"}},
				search, gatherOK, answerOK},
			stop: StopFinalAnswer, outcomes: []string{"frame:retry", "frame:ok", "gather:ok", "answer:ok"},
			errHas: "the output does not match the stage's output_schema"},
		{name: "no JSON falls back", turns: []llm.Turn{frameOK, search, {Content: "I found some notes."},
			{Content: `{"answer": "Fallback answer."}`, Expect: &llm.Expect{Contains: "[stage:answer]"}}},
			stop: StopFinalAnswer, answer: "Fallback answer.", outcomes: []string{"frame:ok", "gather:fallback", "answer:ok"},
			errHas: "the output holds no JSON object", reflection: "Stage gather failed after 1 attempt(s) (the output holds no JSON object); falling back to answer."},
		{name: "retries exhausted terminate", turns: []llm.Turn{{Content: `{"goal": 3}`}, {Content: `{}`}},
			stop: StopError, outcomes: []string{"frame:retry", "frame:terminate"}, errHas: "output_schema",
			reflection: "Stage frame failed after 2 attempt(s)"},
		{name: "terminate on invalid", turns: []llm.Turn{frameOK, search, gatherOK, {Content: `{"answer": ""}`}},
			stop: StopError, outcomes: []string{"frame:ok", "gather:ok", "answer:terminate"}, errHas: "output_schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := llm.NewScripted(tt.turns)
			res, rec := stagedRun(t, testStagePolicy, model)
			if res.StopReason != tt.stop || (tt.answer != "" && res.Answer != tt.answer) {
				t.Fatalf("result = %+v", res)
			}
			if model.Remaining() != 0 {
				t.Fatalf("%d turns not played", model.Remaining())
			}
			if got := outcomes(rec); !slices.Equal(got, tt.outcomes) {
				t.Fatalf("outcomes = %v, want %v", got, tt.outcomes)
			}
			if tt.errHas != "" {
				found := false
				for _, e := range rec.ofType(EventStageCompleted) {
					if p := e.Payload.(StagePayload); p.Outcome != StageOK {
						found = strings.Contains(p.Error, tt.errHas)
						break
					}
				}
				if !found {
					t.Fatalf("no failed StageCompleted with %q", tt.errHas)
				}
			}
			if tt.reflection != "" {
				refl := rec.ofType(EventReflectionAdded)
				if len(refl) != 1 || !strings.Contains(refl[0].Payload.(TextPayload).Text, tt.reflection) {
					t.Fatalf("reflections = %+v", refl)
				}
			}
			if tt.stop == StopError && !strings.Contains(res.Error, "failed after") {
				t.Fatalf("error = %q", res.Error)
			}
			for _, e := range rec.ofType(EventToolInvoked) {
				if e.References.StepID != "gather" || e.References.PlanID != "plan.v1" {
					t.Fatalf("tool refs = %+v", e.References)
				}
			}
		})
	}
}

func TestStagedGuardrails(t *testing.T) {
	t.Run("disallowed tool is refused", func(t *testing.T) {
		model := llm.NewScripted([]llm.Turn{
			{Content: `{"goal": "g"}`},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{call("readNote", map[string]any{"notePath": "recipes/Sourdough Starter.md"})}},
			{Content: `{"summary": "s"}`},
			{Content: `{"answer": "a"}`},
		})
		res, rec := stagedRun(t, testStagePolicy, model)
		if res.StopReason != StopFinalAnswer {
			t.Fatalf("result = %+v", res)
		}
		rets := returned(rec)
		if len(rets) != 1 || rets[0].Success || rets[0].Error != `tool "readNote" is not allowed in stage "gather"; allowed tools: localSearch` {
			t.Fatalf("returned = %+v", rets)
		}
	})
	t.Run("tool turns are bounded", func(t *testing.T) {
		search := func(q string) llm.Turn {
			return llm.Turn{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": q})}}
		}
		model := llm.NewScripted([]llm.Turn{
			{Content: `{"goal": "g"}`},
			search("starter"), search("levain"),
			// The third call offers no tools; a tool call is refused.
			{Content: "More.", ToolCalls: []llm.ScriptedToolCall{call("localSearch", map[string]any{"query": "bread"})},
				Expect: &llm.Expect{ToolsOffered: []string{}}},
			{Content: `{"summary": "s"}`},
			{Content: `{"answer": "a"}`},
		})
		res, rec := stagedRun(t, testStagePolicy, model)
		if res.StopReason != StopFinalAnswer {
			t.Fatalf("result = %+v", res)
		}
		rets := returned(rec)
		if len(rets) != 3 || !rets[0].Success || !rets[1].Success || rets[2].Success ||
			!strings.Contains(rets[2].Error, `stage "gather" has used its 2 tool turn(s)`) {
			t.Fatalf("returned = %+v", rets)
		}
	})
	t.Run("token budget", func(t *testing.T) {
		policy := strings.Replace(testStagePolicy, "    transitions: {on_invalid: retry, max_retries: 1}",
			"    guardrails: {token_budget: 100}\n    transitions: {on_invalid: terminate}", 1)
		inner := llm.NewScripted([]llm.Turn{{Content: `{"goal": "g"}`}})
		var maxTokens int
		model := usageModel{Model: inner, completion: 250, seen: &maxTokens}
		res, rec := stagedRun(t, policy, model)
		if res.StopReason != StopError || !strings.Contains(res.Error, "guardrail violation: the stage used 250 completion tokens, over its token_budget of 100") {
			t.Fatalf("result = %+v", res)
		}
		if maxTokens != 100 {
			t.Fatalf("max_tokens sent = %d", maxTokens)
		}
		if got := outcomes(rec); !slices.Equal(got, []string{"frame:terminate"}) {
			t.Fatalf("outcomes = %v", got)
		}
	})
	t.Run("on_success jumps", func(t *testing.T) {
		policy := strings.Replace(testStagePolicy, "transitions: {on_invalid: retry, max_retries: 1}", "transitions: {on_success: answer}", 1)
		model := llm.NewScripted([]llm.Turn{{Content: `{"goal": "g"}`}, {Content: `{"answer": "skipped gathering"}`}})
		res, rec := stagedRun(t, policy, model)
		if res.StopReason != StopFinalAnswer || res.Answer != "skipped gathering" || res.Iterations != 2 {
			t.Fatalf("result = %+v", res)
		}
		if got := outcomes(rec); !slices.Equal(got, []string{"frame:ok", "answer:ok"}) {
			t.Fatalf("outcomes = %v", got)
		}
	})
	t.Run("invalid policy ends the run", func(t *testing.T) {
		res, _ := stagedRun(t, "name: x\nstages: []\n", llm.NewScripted(nil))
		if res.StopReason != StopError || !strings.Contains(res.Error, "stages: at least one stage is required") {
			t.Fatalf("result = %+v", res)
		}
	})
}

// usageModel reports a fixed completion token usage and records the
// max_tokens it was sent.
type usageModel struct {
	llm.Model
	completion int
	seen       *int
}

func (m usageModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	*m.seen = req.MaxTokens
	resp, err := m.Model.Chat(ctx, req, onDelta)
	if resp != nil {
		resp.Usage.CompletionTokens = m.completion
	}
	return resp, err
}

// The embedded default policy only allows tools the agent has (the planner
// parses it without knowing them).
func TestDefaultPolicyAllowsAgentTools(t *testing.T) {
	a, _ := newTestAgent(t, nil)
	p, err := planner.LoadPolicy("", a.registry.Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Stages {
		for _, name := range st.Guardrails.AllowedTools {
			if _, ok := a.registry.Get(name); !ok {
				t.Errorf("stage %s allows %q, which the agent does not have", st.Name, name)
			}
		}
	}
}
