package service

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/agent"
)

// Settings configure the model, the agent's runs and the vault. Every
// front-end shares them: a vault is opened with defaults, a run may
// override any of them (Merge). A zero value, or a nil pointer, keeps the
// value from the level below; the documented defaults apply at the end
// (RunConfig). The JSON forms (rpc's initialize and agent/run settings)
// belong to the front-ends.
type Settings struct {
	// Provider is offline, openai or scripted; "" is openai when a Model
	// is named, else offline (ChooseModel).
	Provider string
	// Model is the model name for openai ("" with provider openai: the
	// first chat model the server at BaseURL lists).
	Model string
	// BaseURL is an OpenAI-compatible endpoint ("": OpenAI's).
	BaseURL string
	// Script is the fixture file of the scripted provider.
	Script string

	// Mode is the loop: react (default), roa, par or staged.
	Mode string
	// MaxIterations is clamped to 1..50 (default 10).
	MaxIterations int
	// Timeout bounds a run (default 5 minutes).
	Timeout time.Duration
	// Planner turns on the write_todos planner (enableAgentPlannerV0).
	Planner *bool
	// PlanReview ends a run after its first plan, for the user to review.
	PlanReview *bool
	// MaxPlanContinuations caps continuation nudges (default 5).
	MaxPlanContinuations int
	// PlanReminderInterval is the iterations between plan reminders
	// (default 3).
	PlanReminderInterval int
	// RequestInputTimeout bounds the wait for the user's answer to
	// request_input (default 10 minutes).
	RequestInputTimeout time.Duration
	// Policy is the stage policy file of staged mode ("" = built in).
	Policy string

	// ReasoningWindow is how many steps the reasoning block shows while
	// reasoning (default 2).
	ReasoningWindow int
	// Trace is a file, outside the vault, the run's events are written to
	// as JSON lines.
	Trace string

	// EmbedModel turns on semantic and hybrid search: the embedding model
	// (nomic-embed-text on Ollama, text-embedding-3-small on OpenAI); ""
	// keeps search lexical, with no network call. EmbedBaseURL is its
	// OpenAI-compatible endpoint ("" uses Env.BaseURL, else OpenAI). Both
	// apply when the vault is opened.
	EmbedModel   string
	EmbedBaseURL string
	// AllowEdits offers the agent the edit tools; each edit is applied only
	// after the person approves it through the front-end (default false:
	// read-only).
	AllowEdits *bool

	// Excludes are vault folders or glob patterns to skip; they apply when
	// the vault is opened.
	Excludes []string
	// ObsidianExcludes applies Obsidian's "Excluded files" setting (default
	// true); it applies when the vault is opened.
	ObsidianExcludes *bool

	// Sources says where the value of each field set came from, by field
	// name ("Model": "--model", "OPENAI_MODEL", "model in
	// ~/.config/vault-agent/config.toml"), for messages that tell a person
	// what to change. A field without a source came from a front-end that
	// did not say (see Named).
	Sources map[string]string
}

// Providers are the model providers.
var Providers = []string{ProviderOffline, ProviderOpenAI, ProviderScripted}

// Provider names.
const (
	ProviderOffline  = "offline"
	ProviderOpenAI   = "openai"
	ProviderScripted = "scripted"
)

// Modes are the agent's loops.
var Modes = []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged}

// Merge returns s with every field o sets applied over it, with its
// source.
func (s Settings) Merge(o Settings) Settings {
	sources := s.Sources
	sv := reflect.ValueOf(&s).Elem()
	ov := reflect.ValueOf(o)
	t := ov.Type()
	for i := range ov.NumField() {
		name := t.Field(i).Name
		if name == "Sources" {
			continue
		}
		if f := ov.Field(i); !f.IsZero() {
			sv.Field(i).Set(f)
			if src, ok := o.Sources[name]; ok || sources[name] != "" {
				sources = maps.Clone(sources)
				if sources == nil {
					sources = map[string]string{}
				}
				if ok {
					sources[name] = src
				} else {
					delete(sources, name)
				}
			}
		}
	}
	s.Sources = sources
	return s
}

// Named returns s with name(key) as the source of every field it sets
// that has none: a front-end says how it spells its settings (a flag, a
// host's setting key).
func (s Settings) Named(name func(k Key) string) Settings {
	v := reflect.ValueOf(s)
	t := v.Type()
	out := maps.Clone(s.Sources)
	for i := range v.NumField() {
		field := t.Field(i).Name
		if field == "Sources" || v.Field(i).IsZero() || out[field] != "" {
			continue
		}
		k, ok := keyOf(field)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[field] = name(k)
	}
	s.Sources = out
	return s
}

// Source says where the field named field got its value: its source, or
// the setting's host name when none was recorded, or "" when unset.
func (s Settings) Source(field string) string {
	if src := s.Sources[field]; src != "" {
		return src
	}
	if f := reflect.ValueOf(s).FieldByName(field); !f.IsValid() || f.IsZero() {
		return ""
	}
	if k, ok := keyOf(field); ok {
		return "the " + k.Setting + " setting"
	}
	return field
}

// Key names one setting in every place it can be set.
type Key struct {
	// Field is the Settings field.
	Field string
	// Setting is the host's key (serve's settings, ACP's _meta).
	Setting string
	// Flag is the command-line flag, "" when there is none.
	Flag string
	// Env are the environment variables, first the one that wins; File
	// the config file key; both "" for settings these cannot set.
	Env  []string
	File string
}

// Keys are the settings, with their names; the first eight can also be set
// in the environment and the config file.
var Keys = []Key{
	{"Provider", "provider", "--provider", []string{"VAULT_AGENT_PROVIDER"}, "provider"},
	{"Model", "model", "--model", []string{"VAULT_AGENT_MODEL", "OPENAI_MODEL"}, "model"},
	{"BaseURL", "baseUrl", "--base-url", []string{"VAULT_AGENT_BASE_URL", "OPENAI_BASE_URL"}, "base-url"},
	{"EmbedModel", "embedModel", "--embed-model", []string{"VAULT_AGENT_EMBED_MODEL"}, "embed-model"},
	{"EmbedBaseURL", "embedBaseUrl", "--embed-base-url", []string{"VAULT_AGENT_EMBED_BASE_URL"}, "embed-base-url"},
	{"Excludes", "excludes", "--exclude", []string{"VAULT_AGENT_EXCLUDE"}, "exclude"},
	{"Planner", "enableAgentPlannerV0", "--planner", []string{"VAULT_AGENT_PLANNER"}, "planner"},
	{"Mode", "mode", "--mode", []string{"VAULT_AGENT_MODE"}, "mode"},
	{Field: "Script", Setting: "script", Flag: "--script"},
	{Field: "MaxIterations", Setting: "maxIterations", Flag: "--max-iterations"},
	{Field: "Timeout", Setting: "timeoutMs", Flag: "--timeout"},
	{Field: "PlanReview", Setting: "planReview"},
	{Field: "MaxPlanContinuations", Setting: "maxPlanContinuations"},
	{Field: "PlanReminderInterval", Setting: "planReminderInterval"},
	{Field: "RequestInputTimeout", Setting: "requestInputTimeoutMs"},
	{Field: "Policy", Setting: "policy", Flag: "--policy"},
	{Field: "ReasoningWindow", Setting: "reasoningWindow"},
	{Field: "Trace", Setting: "trace", Flag: "--trace"},
	{Field: "AllowEdits", Setting: "allowEdits", Flag: "--allow-edits"},
	{Field: "ObsidianExcludes", Setting: "obsidianExcludes", Flag: "--no-obsidian-excludes"},
}

func keyOf(field string) (Key, bool) {
	for _, k := range Keys {
		if k.Field == field {
			return k, true
		}
	}
	return Key{}, false
}

// FlagName is how the command line spells a setting (Named's argument).
func FlagName(k Key) string {
	if k.Flag != "" {
		return k.Flag
	}
	return k.Setting
}

// NamesModel reports whether s says anything of the model: a run whose
// settings do gets a model of its own.
func (s Settings) NamesModel() bool {
	return s.Provider != "" || s.Model != "" || s.BaseURL != "" || s.Script != ""
}

// SettingError is a setting with a value that cannot be used. Key is the
// setting's name as hosts write it (maxIterations, timeoutMs, trace...).
type SettingError struct {
	Key string
	Msg string
	// Err is the underlying error, when there is one.
	Err error
}

func (e *SettingError) Error() string { return fmt.Sprintf("%q %s", e.Key, e.Msg) }

func (e *SettingError) Unwrap() error { return e.Err }

// Validate checks values, naming the setting at fault. vaultRoot, when
// set, is where a trace must not be written.
func (s Settings) Validate(vaultRoot string) error {
	if p := strings.ToLower(strings.TrimSpace(s.Provider)); p != "" && !slices.Contains(Providers, p) {
		return &SettingError{Key: "provider", Msg: fmt.Sprintf("must be one of %s, got %q", strings.Join(Providers, ", "), s.Provider)}
	}
	if u := strings.TrimSpace(s.BaseURL); u != "" {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			// The value is not shown: a URL may hold a key.
			return &SettingError{Key: "baseUrl", Msg: "must be the http(s) URL of an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"}
		}
	}
	if s.Mode != "" && !slices.Contains(Modes, s.Mode) {
		return &SettingError{Key: "mode", Msg: fmt.Sprintf("must be one of %s, got %q", strings.Join(Modes, ", "), s.Mode)}
	}
	numbers := []struct {
		key string
		v   int64
	}{
		{"maxIterations", int64(s.MaxIterations)},
		{"timeoutMs", s.Timeout.Milliseconds()},
		{"reasoningWindow", int64(s.ReasoningWindow)},
		{"maxPlanContinuations", int64(s.MaxPlanContinuations)},
		{"planReminderInterval", int64(s.PlanReminderInterval)},
		{"requestInputTimeoutMs", s.RequestInputTimeout.Milliseconds()},
	}
	for _, n := range numbers {
		if err := CheckNumber(n.key, float64(n.v)); err != nil {
			return err
		}
	}
	if s.Trace != "" && vaultRoot != "" {
		if err := checkTracePath(vaultRoot, s.Trace); err != nil {
			return err
		}
	}
	return nil
}

// NumberLimit is the range of a number setting as hosts write it; zero (or
// an absent key) is always allowed and means the default.
type NumberLimit struct {
	Min, Max int64
	// Default is the value zero stands for; Unit is "ms" for durations.
	Default int64
	Unit    string
}

// NumberLimits are the number settings and their ranges. Durations stop at
// a day: a longer run is a mistake, and a host's value past that (9e15
// milliseconds) would overflow when made a duration.
var NumberLimits = map[string]NumberLimit{
	"maxIterations":         {Min: 1, Max: 50, Default: 10},
	"timeoutMs":             {Min: 1, Max: maxDurationMs, Default: 300_000, Unit: "ms"},
	"requestInputTimeoutMs": {Min: 1, Max: maxDurationMs, Default: 600_000, Unit: "ms"},
	"reasoningWindow":       {Min: 1, Max: 100, Default: 2},
	"maxPlanContinuations":  {Min: 1, Max: 50, Default: 5},
	"planReminderInterval":  {Min: 1, Max: 50, Default: 3},
}

// maxDurationMs is a day in milliseconds.
const maxDurationMs = 24 * 60 * 60 * 1000

// CheckNumber checks the value a host gave the number setting key, before
// it is converted (a float64, as JSON numbers decode): a *SettingError
// naming the setting and its range when v is not a whole number in it.
func CheckNumber(key string, v float64) error {
	l, ok := NumberLimits[key]
	if !ok || v == 0 {
		return nil
	}
	if v != math.Trunc(v) || v < float64(l.Min) || v > float64(l.Max) {
		unit := ""
		if l.Unit != "" {
			unit = " " + l.Unit
		}
		return &SettingError{Key: key, Msg: fmt.Sprintf("must be a whole number from %d to %d%s (0 or absent: %d%s), got %s",
			l.Min, l.Max, unit, l.Default, unit, strconv.FormatFloat(v, 'g', -1, 64))}
	}
	return nil
}

// RunConfig is the agent's run configuration of s, defaults applied.
func (s Settings) RunConfig() agent.Config {
	return agent.Config{
		Mode:                 s.Mode,
		MaxIterations:        s.MaxIterations,
		Timeout:              s.Timeout,
		Planner:              isTrue(s.Planner),
		PlanReview:           isTrue(s.PlanReview),
		MaxPlanContinuations: s.MaxPlanContinuations,
		PlanReminderInterval: s.PlanReminderInterval,
		RequestInputTimeout:  s.RequestInputTimeout,
		PolicyPath:           s.Policy,
		AllowEdits:           isTrue(s.AllowEdits),
	}.Normalize()
}

func isTrue(p *bool) bool { return p != nil && *p }

// checkTracePath refuses a trace path inside the vault at root, as the
// file system would resolve it: a relative path against the working
// directory, and every symbolic link on the way (the file's own, its
// folders', the vault's), so that no spelling of a note's path gets
// written over.
func checkTracePath(root, trace string) error {
	abs, err := filepath.Abs(trace)
	if err != nil {
		return &SettingError{Key: "trace", Msg: err.Error(), Err: err}
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return &SettingError{Key: "trace", Msg: err.Error(), Err: err}
	}
	roots := []string{rootAbs}
	if real, err := filepath.EvalSymlinks(rootAbs); err == nil && real != rootAbs {
		roots = append(roots, real)
	}
	paths := []string{abs}
	if real := resolveExisting(abs); real != abs {
		paths = append(paths, real)
	}
	for _, r := range roots {
		for _, p := range paths {
			if within(r, p) {
				return &SettingError{Key: "trace", Msg: fmt.Sprintf(
					"must be outside the vault (the vault is read-only): %s is inside %s; write it elsewhere, e.g. %s",
					trace, root, suggestTrace(roots[len(roots)-1], abs))}
			}
		}
	}
	return nil
}

// resolveExisting resolves the symbolic links of p's longest existing
// prefix and joins the rest on unchanged: p need not exist yet.
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether p is root or under it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// suggestTrace names a place outside the vault for a trace: the folder
// holding the vault, or the temporary folder when the vault is a root.
func suggestTrace(root, trace string) string {
	name := filepath.Base(trace)
	if parent := filepath.Dir(root); parent != root && !within(root, parent) {
		return filepath.Join(parent, name)
	}
	return filepath.Join(os.TempDir(), name)
}
