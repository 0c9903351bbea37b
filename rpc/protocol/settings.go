package protocol

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Settings configure the agent. Each level overrides the one below: the
// defaults, the config file (~/.config/vault-agent/config.toml), the
// sidecar's environment (VAULT_AGENT_MODEL, OPENAI_MODEL...), the command
// line, initialize's settings, each agent/run's. A zero value (or an absent
// key) keeps the value from the level below. The chat model is the offline
// one unless a model or a provider is named at some level: a key or a base
// URL alone chooses nothing. No model setting can make initialize fail: a
// run whose model cannot be reached ends with stopReason error, saying which
// setting or variable chose the model. Numbers out of their range are
// -32602 naming the setting and its range.
type Settings struct {
	// Provider is the model provider: offline, openai, scripted (default:
	// openai when a model is named, else offline).
	Provider string `json:"provider,omitempty"`
	// Model is the chat model (gpt-4o-mini, llama3.1); naming one chooses
	// the openai provider.
	Model string `json:"model,omitempty"`
	// BaseURL is an OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM...).
	BaseURL string `json:"baseUrl,omitempty"`
	// Mode is the loop: react (default), roa, par, staged.
	Mode string `json:"mode,omitempty"`
	// MaxIterations is 1 to 50 (default 10).
	MaxIterations int `json:"maxIterations,omitempty"`
	// TimeoutMs bounds a run: 1 to 86400000 (default 300000).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// EnableAgentPlannerV0 turns on the planner tools (default false).
	EnableAgentPlannerV0 *bool `json:"enableAgentPlannerV0,omitempty"`
	// PlanReview ends a run after its first plan, for the user to review.
	PlanReview *bool `json:"planReview,omitempty"`
	// ReasoningWindow is how many steps the marker shows while reasoning:
	// 1 to 100 (default 2).
	ReasoningWindow int `json:"reasoningWindow,omitempty"`
	// MaxPlanContinuations caps continuation nudges: 1 to 50 (default 5).
	MaxPlanContinuations int `json:"maxPlanContinuations,omitempty"`
	// PlanReminderInterval is the iterations between plan reminders: 1 to
	// 50 (default 3).
	PlanReminderInterval int `json:"planReminderInterval,omitempty"`
	// RequestInputTimeoutMs bounds the wait for agent/input: 1 to 86400000
	// (default 600000).
	RequestInputTimeoutMs int64 `json:"requestInputTimeoutMs,omitempty"`
	// AllowEdits offers the agent the edit tools (create_note, append_to_note,
	// replace_in_note, set_properties); each edit is sent to the host as
	// vault/applyEdit and applied only if approved (default false: read-only).
	AllowEdits *bool `json:"allowEdits,omitempty"`
	// Trace is a file outside the vault (symbolic links resolved) the
	// run's events are appended to as JSON lines; an existing file that is
	// not a trace is refused, never overwritten.
	Trace string `json:"trace,omitempty"`
	// EmbedModel turns on semantic and hybrid search with this embedding
	// model (nomic-embed-text on Ollama, text-embedding-3-small on
	// OpenAI); absent, search is lexical and makes no network call
	// (initialize only).
	EmbedModel string `json:"embedModel,omitempty"`
	// EmbedBaseURL is the embedding model's OpenAI-compatible endpoint
	// (default OPENAI_BASE_URL, else OpenAI; initialize only). Its key is
	// VAULT_AGENT_EMBED_API_KEY (or OPENAI_API_KEY without embedBaseUrl),
	// from the sidecar's environment.
	EmbedBaseURL string `json:"embedBaseUrl,omitempty"`
	// Excludes are vault folders or glob patterns to skip (initialize only).
	Excludes []string `json:"excludes,omitempty"`
	// ObsidianExcludes applies Obsidian's own "Excluded files" setting
	// (userIgnoreFilters in .obsidian/app.json) as excludes (default true;
	// initialize only).
	ObsidianExcludes *bool `json:"obsidianExcludes,omitempty"`

	// unknown holds keys that are not settings, in sorted order.
	unknown []string
}

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

// SettingsKeys lists the settings' JSON keys, sorted.
func SettingsKeys() []string {
	keys := make([]string, 0, len(settingsFields))
	for k := range settingsFields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// UnmarshalJSON decodes known keys, naming the key in type errors (a
// *FieldError), and remembers unknown keys instead of failing on them.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return &FieldError{Field: "settings", Msg: "must be an object"}
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
			return &FieldError{Field: "settings." + k, Msg: "must be " + JSONTypeName(f.Type())}
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

// FieldError is an invalid value of one field of a request's params.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return fmt.Sprintf("%q %s", e.Field, e.Msg)
}

// JSONTypeName names t the way a host author thinks of it: "a string", "an
// array of strings", "an object".
func JSONTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return JSONTypeName(t.Elem())
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
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(JSONTypeName(t.Elem()), "an "), "a ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}
