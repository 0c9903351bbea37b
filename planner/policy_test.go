package planner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// agentTools are the names of the agent's tools, which a policy's stages
// may allow.
var agentTools = []string{"getCurrentTime", "getFileTree", "getTagList", "getTimeRangeMs", "localSearch",
	"plan_progress", "readNote", "request_input", "write_todos"}

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
			_, err := ParsePolicy(tt.file, []byte(src), agentTools)
			if err == nil || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParsePolicyJSONAndDefaults(t *testing.T) {
	p, err := ParsePolicy("policy.yaml", []byte(validPolicyYAML), agentTools)
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
	_, err = ParsePolicy("policy.json", []byte(js), agentTools)
	for _, want := range []string{`policy.json: stages[0].promt: unknown key`, `policy.json: stages[0].guardrails.token_budget: want an integer, got 1.5`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant %q", err, want)
		}
	}
	js = strings.Replace(strings.Replace(js, `"promt": "typo",`, "", 1), "1.5", "200", 1)
	p, err = ParsePolicy("policy.json", []byte(js), agentTools)
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Stages[0].Guardrails; g.MaxTurns != defaultStageMaxTurns || g.TokenBudget != 200 {
		t.Fatalf("guardrails = %+v", g)
	}
}

func TestDefaultPolicy(t *testing.T) {
	p, err := LoadPolicy("", agentTools)
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
	if p, err := LoadPolicy(path, agentTools); err != nil || p.Name != "test" {
		t.Fatalf("LoadPolicy = %v, %v", p, err)
	}
	if _, err := LoadPolicy(filepath.Join(dir, "missing.yaml"), agentTools); !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("missing file: %v", err)
	}
}
