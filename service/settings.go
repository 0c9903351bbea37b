package service

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
	// Provider is offline, openai or scripted; "" is openai when an API
	// key or a base URL is configured (here or in Env), else offline.
	Provider string
	// Model is the model name for openai ("" uses Env.Model, else the
	// first model the server at BaseURL lists).
	Model string
	// BaseURL is an OpenAI-compatible endpoint ("" uses Env.BaseURL).
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

// Merge returns s with every field o sets applied over it.
func (s Settings) Merge(o Settings) Settings {
	sv := reflect.ValueOf(&s).Elem()
	ov := reflect.ValueOf(o)
	for i := range ov.NumField() {
		if f := ov.Field(i); !f.IsZero() {
			sv.Field(i).Set(f)
		}
	}
	return s
}

// NamesModel reports whether s chooses a model: a run whose settings do
// gets a model of its own.
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
	if s.Mode != "" && !slices.Contains(Modes, s.Mode) {
		return &SettingError{Key: "mode", Msg: fmt.Sprintf("must be one of %s, got %q", strings.Join(Modes, ", "), s.Mode)}
	}
	nonNeg := []struct {
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
	for _, n := range nonNeg {
		if n.v < 0 {
			return &SettingError{Key: n.key, Msg: fmt.Sprintf("must not be negative, got %d", n.v)}
		}
	}
	if s.Trace != "" && vaultRoot != "" {
		if err := checkTracePath(vaultRoot, s.Trace); err != nil {
			return err
		}
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
