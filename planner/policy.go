package planner

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// Stage transition values.
const (
	OnInvalidRetry     = "retry"
	OnInvalidFallback  = "fallback"
	OnInvalidTerminate = "terminate"
	OnSuccessNext      = "next"
	OnSuccessTerminate = "terminate"
)

// Defaults of a stage's guardrails and transitions.
const (
	defaultStageMaxTurns = 4 // tool turns, when allowed_tools is set
	defaultMaxRetries    = 1
	maxStageRetries      = 10
	maxStageTurns        = 20
)

// Policy is a staged-mode policy: ordered stages, each with its prompt,
// output schema, guardrails and transition rules.
// A loaded Policy is valid and read-only.
type Policy struct {
	Name        string  `json:"name"`
	Version     string  `json:"version,omitempty"`
	Description string  `json:"description,omitempty"`
	Stages      []Stage `json:"stages"`
}

// Stage is one stage of a policy.
type Stage struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Prompt      string `json:"prompt"`
	// OutputSchema is the JSON schema the stage's output object must match.
	OutputSchema json.RawMessage `json:"output_schema"`
	Guardrails   Guardrails      `json:"guardrails"`
	Transitions  Transitions     `json:"transitions"`

	schema *jsonschema.Resolved
}

// Guardrails bound what a stage may do.
type Guardrails struct {
	// AllowedTools are the only tools offered (and run) in the stage.
	AllowedTools []string `json:"allowed_tools"`
	// TokenBudget bounds the completion tokens of one attempt's model calls
	// (0: no bound). It is sent as max_tokens, and usage reported above it
	// is a guardrail violation, handled like an invalid output.
	TokenBudget int `json:"token_budget,omitempty"`
	// MaxTurns bounds the model calls of one attempt that may call tools
	// (default 4 when AllowedTools is set).
	MaxTurns int `json:"max_turns,omitempty"`
}

// Transitions say where a run goes after a stage.
type Transitions struct {
	// OnInvalid is retry (up to MaxRetries, then FallbackStage if set, else
	// terminate), fallback (to FallbackStage at once) or terminate.
	OnInvalid     string `json:"on_invalid"`
	MaxRetries    int    `json:"max_retries"`
	FallbackStage string `json:"fallback_stage,omitempty"`
	// OnSuccess is next, terminate or the name of a stage.
	OnSuccess string `json:"on_success"`
}

// PromptVersion identifies the policy in events (prompt_version).
func (p *Policy) PromptVersion() string {
	v := p.Version
	if v == "" {
		v = "0"
	}
	return "staged/" + p.Name + "@" + v
}

// StageIndex returns the position of the named stage, or -1.
func (p *Policy) StageIndex(name string) int {
	for i, s := range p.Stages {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// StageNames lists the stage names in order.
func (p *Policy) StageNames() []string {
	names := make([]string, len(p.Stages))
	for i, s := range p.Stages {
		names[i] = s.Name
	}
	return names
}

// Validate checks a value against the stage's output schema.
func (s *Stage) Validate(v any) error {
	if s.schema == nil {
		return nil
	}
	return s.schema.Validate(v)
}

//go:embed policies/default.yaml
var defaultPolicyYAML []byte

var defaultPolicy = sync.OnceValues(func() (*Policy, error) {
	return ParsePolicy("policies/default.yaml", defaultPolicyYAML, nil)
})

// DefaultPolicy returns the embedded default policy (stages goal_framing,
// decomposition, tool_routing, synthesis).
func DefaultPolicy() *Policy {
	p, err := defaultPolicy()
	if err != nil {
		panic(fmt.Sprintf("embedded default policy: %v", err)) // TestDefaultPolicy keeps it valid
	}
	return p
}

// LoadPolicy reads and validates a policy file, YAML (.yaml, .yml) or JSON
// (.json) by extension, against the tool names a stage may allow (nil:
// any). "" returns the embedded default.
func LoadPolicy(path string, tools []string) (*Policy, error) {
	if path == "" {
		return DefaultPolicy(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPolicy, err)
	}
	return ParsePolicy(path, data, tools)
}

// ParsePolicy parses and validates a policy; name is the file name, used
// for the format (by extension) and in error messages. Every problem is
// reported with its location, one per line:
//
//	policy.yaml: stages[2].transitions.fallback_stage: unknown stage "synthsis" (stages: goal_framing, ...)
//
// Unknown keys are rejected; output schemas are compiled with jsonschema-go;
// allowed tools must be among tools unless tools is nil.
func ParsePolicy(name string, data []byte, tools []string) (*Policy, error) {
	var doc any
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".yaml", ".yml":
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidPolicy, name, err)
		}
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidPolicy, name, err)
		}
	default:
		return nil, fmt.Errorf("%w: %s: unsupported extension %q (want .yaml, .yml or .json)", ErrInvalidPolicy, name, ext)
	}
	c := &policyChecker{tools: tools}
	p := c.policy(doc)
	if len(c.problems) > 0 {
		lines := make([]string, len(c.problems))
		for i, pr := range c.problems {
			lines[i] = name + ": " + pr
		}
		return nil, fmt.Errorf("%w:\n%s", ErrInvalidPolicy, strings.Join(lines, "\n"))
	}
	return p, nil
}

// PolicyOutline is the plan artifact of a staged run: the stage sequence
// with each stage's constraints, the per-stage tooling included.
type PolicyOutline struct {
	Policy  string         `json:"policy"`
	Version string         `json:"version,omitempty"`
	Stages  []StageOutline `json:"stages"`
}

// StageOutline is one stage of a PolicyOutline.
type StageOutline struct {
	Name          string   `json:"name"`
	AllowedTools  []string `json:"allowed_tools"`
	MaxTurns      int      `json:"max_turns,omitempty"`
	TokenBudget   int      `json:"token_budget,omitempty"`
	OnSuccess     string   `json:"on_success"`
	OnInvalid     string   `json:"on_invalid"`
	MaxRetries    int      `json:"max_retries"`
	FallbackStage string   `json:"fallback_stage,omitempty"`
}

// Outline returns the policy's outline.
func (p *Policy) Outline() PolicyOutline {
	o := PolicyOutline{Policy: p.Name, Version: p.Version, Stages: make([]StageOutline, 0, len(p.Stages))}
	for _, s := range p.Stages {
		o.Stages = append(o.Stages, StageOutline{
			Name: s.Name, AllowedTools: slices.Clone(s.Guardrails.AllowedTools), MaxTurns: s.Guardrails.MaxTurns,
			TokenBudget: s.Guardrails.TokenBudget, OnSuccess: s.Transitions.OnSuccess, OnInvalid: s.Transitions.OnInvalid,
			MaxRetries: s.Transitions.MaxRetries, FallbackStage: s.Transitions.FallbackStage,
		})
	}
	return o
}
