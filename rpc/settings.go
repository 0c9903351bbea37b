package rpc

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/service"
)

// Settings configure the agent. They come from Config.DefaultSettings, are
// overridden by initialize's settings, and those by each agent/run's.
// A zero value (or an absent key) keeps the value from the level below.
type Settings struct {
	// Provider is the model provider: offline (default), openai, scripted.
	Provider string `json:"provider,omitempty"`
	// Model is the provider's model name.
	Model string `json:"model,omitempty"`
	// BaseURL is an OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM...).
	BaseURL string `json:"baseUrl,omitempty"`
	// Mode is the loop: react (default), roa, par, staged.
	Mode string `json:"mode,omitempty"`
	// MaxIterations is clamped to 1..50 (default 10).
	MaxIterations int `json:"maxIterations,omitempty"`
	// TimeoutMs bounds a run (default 300000).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// EnableAgentPlannerV0 turns on the planner tools (default false).
	EnableAgentPlannerV0 *bool `json:"enableAgentPlannerV0,omitempty"`
	// PlanReview ends a run after its first plan, for the user to review.
	PlanReview *bool `json:"planReview,omitempty"`
	// ReasoningWindow is how many steps the marker shows while reasoning
	// (default 2).
	ReasoningWindow int `json:"reasoningWindow,omitempty"`
	// MaxPlanContinuations caps continuation nudges (default 5).
	MaxPlanContinuations int `json:"maxPlanContinuations,omitempty"`
	// PlanReminderInterval is the iterations between plan reminders
	// (default 3).
	PlanReminderInterval int `json:"planReminderInterval,omitempty"`
	// RequestInputTimeoutMs bounds the wait for agent/input (default 600000).
	RequestInputTimeoutMs int64 `json:"requestInputTimeoutMs,omitempty"`
	// Trace is a file (outside the vault) the run's events are appended to
	// as JSON lines.
	Trace string `json:"trace,omitempty"`
	// Excludes are vault folders or glob patterns to skip (initialize only).
	Excludes []string `json:"excludes,omitempty"`
	// ObsidianExcludes applies Obsidian's own "Excluded files" setting
	// (userIgnoreFilters in .obsidian/app.json) as excludes (default true;
	// initialize only).
	ObsidianExcludes *bool `json:"obsidianExcludes,omitempty"`

	// unknown holds keys that are not settings, in sorted order.
	unknown []string
}

// Modes and providers the sidecar accepts.
var (
	validModes     = []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged}
	validProviders = service.Providers
)

// settingsFields maps each JSON key to its field index.
var settingsFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Settings]()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		m[name] = i
	}
	return m
}()

func settingsKeys() []string {
	keys := make([]string, 0, len(settingsFields))
	for k := range settingsFields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// UnmarshalJSON decodes known keys, naming the key in type errors, and
// remembers unknown keys instead of failing on them.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return &paramError{field: "settings", msg: "must be an object"}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	v := reflect.ValueOf(s).Elem()
	for _, k := range keys {
		i, ok := settingsFields[k]
		if !ok {
			s.unknown = append(s.unknown, k)
			continue
		}
		f := v.Field(i)
		if err := json.Unmarshal(m[k], f.Addr().Interface()); err != nil {
			return &paramError{field: "settings." + k, msg: "must be " + jsonTypeName(f.Type())}
		}
	}
	return nil
}

// Unknown returns the keys that were not settings.
func (s *Settings) Unknown() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.unknown)
}

// merge returns s with every set field of o applied over it.
func (s Settings) merge(o *Settings) Settings {
	if o == nil {
		return s
	}
	sv := reflect.ValueOf(&s).Elem()
	ov := reflect.ValueOf(o).Elem()
	for _, i := range settingsFields {
		if f := ov.Field(i); !f.IsZero() {
			sv.Field(i).Set(f)
		}
	}
	s.unknown = nil
	return s
}

// validate checks values, naming the offending key. vaultRoot, when set,
// is where a trace file must not be written.
func (s Settings) validate(vaultRoot string) error {
	if s.Provider != "" && !slices.Contains(validProviders, s.Provider) {
		return &paramError{field: "settings.provider", msg: fmt.Sprintf("must be one of %s, got %q", strings.Join(validProviders, ", "), s.Provider)}
	}
	if s.Mode != "" && !slices.Contains(validModes, s.Mode) {
		return &paramError{field: "settings.mode", msg: fmt.Sprintf("must be one of %s, got %q", strings.Join(validModes, ", "), s.Mode)}
	}
	nonNeg := []struct {
		key string
		v   int64
	}{
		{"maxIterations", int64(s.MaxIterations)},
		{"timeoutMs", s.TimeoutMs},
		{"reasoningWindow", int64(s.ReasoningWindow)},
		{"maxPlanContinuations", int64(s.MaxPlanContinuations)},
		{"planReminderInterval", int64(s.PlanReminderInterval)},
		{"requestInputTimeoutMs", s.RequestInputTimeoutMs},
	}
	for _, n := range nonNeg {
		if n.v < 0 {
			return &paramError{field: "settings." + n.key, msg: fmt.Sprintf("must not be negative, got %d", n.v)}
		}
	}
	if s.Trace != "" && vaultRoot != "" {
		abs, err := filepath.Abs(s.Trace)
		if err != nil {
			return &paramError{field: "settings.trace", msg: err.Error()}
		}
		if rel, err := filepath.Rel(vaultRoot, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return &paramError{field: "settings.trace", msg: "must be outside the vault (the vault is read-only)"}
		}
	}
	return nil
}

func boolOf(p *bool) bool { return p != nil && *p }

// agentConfig maps settings onto the agent's run configuration.
func (s Settings) agentConfig() agent.Config {
	return agent.Config{
		Mode:                 s.Mode,
		MaxIterations:        s.MaxIterations,
		Timeout:              time.Duration(s.TimeoutMs) * time.Millisecond,
		Planner:              boolOf(s.EnableAgentPlannerV0),
		PlanReview:           boolOf(s.PlanReview),
		MaxPlanContinuations: s.MaxPlanContinuations,
		PlanReminderInterval: s.PlanReminderInterval,
		RequestInputTimeout:  time.Duration(s.RequestInputTimeoutMs) * time.Millisecond,
	}.Normalize()
}

// jsonTypeName names t the way a host author thinks of it.
func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Name() == "RawMessage" {
			return "a JSON value"
		}
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonTypeName(t.Elem()), "an "), "a ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}
