package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm"
)

const validPolicyYAML = `name: test
version: 2.1.0
stages:
  - name: goal_framing
    prompt: Frame the goal.
    output_schema:
      type: object
      required: [goal]
      properties:
        goal: {type: string, minLength: 1}
  - name: decomposition
    prompt: Decompose it.
    output_schema:
      type: object
      properties:
        subtasks: {type: array, items: {type: string}}
  - name: tool_routing
    prompt: Gather evidence.
    output_schema: {type: object, required: [summary], properties: {summary: {type: string}}}
    guardrails:
      allowed_tools: [localSearch, readNote]
      max_turns: 6
      token_budget: 500
    transitions:
      on_invalid: retry
      max_retries: 1
      fallback_stage: synthesis
  - name: synthesis
    prompt: Answer.
    output_schema: {type: object, required: [answer], properties: {answer: {type: string}}}
    transitions: {on_invalid: terminate, on_success: terminate}
`

func TestParsePolicyMistakes(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		want                 string
	}{
		{"unknown stage reference", "policy.yaml", "fallback_stage: synthesis", "fallback_stage: synthsis",
			`policy.yaml: stages[2].transitions.fallback_stage: unknown stage "synthsis" (stages: goal_framing, decomposition, tool_routing, synthesis)`},
		{"unknown on_success stage", "policy.yaml", "on_success: terminate", "on_success: synth",
			`policy.yaml: stages[3].transitions.on_success: unknown stage "synth" (want next, terminate or a stage: goal_framing, decomposition, tool_routing, synthesis)`},
		{"unknown key", "policy.yaml", "max_turns: 6", "max_turn: 6",
			`policy.yaml: stages[2].guardrails.max_turn: unknown key (known keys: allowed_tools, max_turns, token_budget)`},
		{"unknown top-level key", "policy.yaml", "version: 2.1.0", "verison: 2.1.0",
			`policy.yaml: verison: unknown key (known keys: description, name, stages, version)`},
		{"bad schema type", "policy.yaml", "goal: {type: string, minLength: 1}", "goal: {type: strng}",
			`policy.yaml: stages[0].output_schema.properties.goal.type: unknown type "strng" (want one of array, boolean, integer, null, number, object, string)`},
		{"bad schema keyword", "policy.yaml", "      properties:\n        subtasks", "      propertes:\n        subtasks",
			`policy.yaml: stages[1].output_schema.propertes: unknown JSON schema keyword`},
		{"bad schema required", "policy.yaml", "required: [goal]", "required: goal",
			`policy.yaml: stages[0].output_schema.required: want a list of property names, got "goal"`},
		{"bad schema pattern", "policy.yaml", "goal: {type: string, minLength: 1}", `goal: {type: string, pattern: "(["}`,
			`policy.yaml: stages[0].output_schema: not a valid JSON schema:`},
		{"schema not an object", "policy.yaml", "prompt: Decompose it.\n    output_schema:\n      type: object", "prompt: Decompose it.\n    output_schema:\n      type: array",
			`policy.yaml: stages[1].output_schema.type: a stage output must be an object, got "array"`},
		{"missing schema", "policy.yaml", "    prompt: Answer.\n    output_schema: {type: object, required: [answer], properties: {answer: {type: string}}}\n", "    prompt: Answer.\n",
			`policy.yaml: stages[3].output_schema: required (a JSON schema object for the stage's output)`},
		{"duplicate stage names", "policy.yaml", "name: decomposition", "name: goal_framing",
			`policy.yaml: stages[1].name: duplicate stage name "goal_framing" (also stages[0])`},
		{"empty stages", "policy.yaml", validPolicyYAML, "name: x\nstages: []\n",
			`policy.yaml: stages: at least one stage is required`},
		{"bad stage name", "policy.yaml", "name: decomposition", "name: decompose it",
			`policy.yaml: stages[1].name: "decompose it": use letters, digits, _, . or -`},
		{"unknown tool", "policy.yaml", "allowed_tools: [localSearch, readNote]", "allowed_tools: [localSerch]",
			`policy.yaml: stages[2].guardrails.allowed_tools[0]: unknown tool "localSerch" (tools: getCurrentTime,`},
		{"bad on_invalid", "policy.yaml", "on_invalid: retry", "on_invalid: retyr",
			`policy.yaml: stages[2].transitions.on_invalid: "retyr": want retry, fallback or terminate`},
		{"fallback needs a stage", "policy.yaml", "on_invalid: terminate, on_success", "on_invalid: fallback, on_success",
			`policy.yaml: stages[3].transitions.fallback_stage: required when on_invalid is "fallback"`},
		{"fallback to itself", "policy.yaml", "fallback_stage: synthesis", "fallback_stage: tool_routing",
			`policy.yaml: stages[2].transitions.fallback_stage: a stage cannot fall back to itself`},
		{"wrong type", "policy.yaml", "max_retries: 1", `max_retries: "two"`,
			`policy.yaml: stages[2].transitions.max_retries: want an integer, got "two"`},
		{"out of range", "policy.yaml", "max_turns: 6", "max_turns: 99",
			`policy.yaml: stages[2].guardrails.max_turns: 99 is out of range 0..20`},
		{"missing prompt", "policy.yaml", "    prompt: Frame the goal.\n", "",
			`policy.yaml: stages[0].prompt: required`},
		{"yaml syntax", "policy.yaml", "stages:\n", "stages: [\n", `policy.yaml: yaml:`},
		{"unsupported extension", "policy.toml", "", "", `policy.toml: unsupported extension ".toml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := validPolicyYAML
			if tt.old != "" {
				if !strings.Contains(src, tt.old) {
					t.Fatalf("the base policy has no %q", tt.old)
				}
				src = strings.Replace(src, tt.old, tt.new, 1)
			}
			_, err := ParsePolicy(tt.file, []byte(src))
			if err == nil || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParsePolicyJSONAndDefaults(t *testing.T) {
	p, err := ParsePolicy("policy.yaml", []byte(validPolicyYAML))
	if err != nil {
		t.Fatal(err)
	}
	if p.PromptVersion() != "staged/test@2.1.0" || !slices.Equal(p.StageNames(), []string{"goal_framing", "decomposition", "tool_routing", "synthesis"}) {
		t.Fatalf("policy = %+v", p)
	}
	tr := p.Stages[0].Transitions
	if tr.OnInvalid != OnInvalidRetry || tr.MaxRetries != 1 || tr.OnSuccess != OnSuccessNext || p.Stages[0].Guardrails.MaxTurns != 0 {
		t.Fatalf("defaults = %+v %+v", tr, p.Stages[0].Guardrails)
	}
	if g := p.Stages[2].Guardrails; g.MaxTurns != 6 || g.TokenBudget != 500 || !slices.Equal(g.AllowedTools, []string{"localSearch", "readNote"}) {
		t.Fatalf("guardrails = %+v", g)
	}

	js := `{"name": "j", "stages": [{"name": "only", "prompt": "p", "promt": "typo",
		"output_schema": {"type": "object", "properties": {"answer": {"type": "string"}}},
		"guardrails": {"allowed_tools": ["localSearch"], "token_budget": 1.5}}]}`
	_, err = ParsePolicy("policy.json", []byte(js))
	for _, want := range []string{`policy.json: stages[0].promt: unknown key`, `policy.json: stages[0].guardrails.token_budget: want an integer, got 1.5`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant %q", err, want)
		}
	}
	js = strings.Replace(strings.Replace(js, `"promt": "typo",`, "", 1), "1.5", "200", 1)
	p, err = ParsePolicy("policy.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Stages[0].Guardrails; g.MaxTurns != defaultStageMaxTurns || g.TokenBudget != 200 {
		t.Fatalf("guardrails = %+v", g)
	}
}

func TestDefaultPolicy(t *testing.T) {
	p, err := LoadPolicy("")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.StageNames(), []string{"goal_framing", "decomposition", "tool_routing", "synthesis"}) {
		t.Fatalf("stages = %v", p.StageNames())
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "custom.yml")
	if err := os.WriteFile(path, []byte(validPolicyYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadPolicy(path); err != nil || p.Name != "test" {
		t.Fatalf("LoadPolicy = %v, %v", p, err)
	}
	if _, err := LoadPolicy(filepath.Join(dir, "missing.yaml")); !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("missing file: %v", err)
	}
}

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

func TestStagedOfflineDefaultPolicy(t *testing.T) {
	a, err := New(Deps{Model: llm.NewOffline(), Index: newFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rec := newRecorder()
	res, err := a.Run(context.Background(), RunRequest{RunID: "off", Message: "how do I keep my sourdough starter alive?", Config: Config{Mode: ModeStaged}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopFinalAnswer || !strings.Contains(res.Answer, "[[Sourdough Starter]]") {
		t.Fatalf("result = %+v", res)
	}
	want := []string{"goal_framing:ok", "decomposition:ok", "tool_routing:ok", "synthesis:ok"}
	if got := outcomes(rec); !slices.Equal(got, want) {
		t.Fatalf("outcomes = %v", got)
	}
}
