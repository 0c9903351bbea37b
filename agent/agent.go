package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Index is what the agent's tools need from the search index; *search.Index
// satisfies it.
type Index interface {
	Search(ctx context.Context, req search.Request) (*search.Results, error)
	Paths() []string
	Tags() []search.TagCount
	Vault() *vault.Vault
}

// Modes of the run loop.
const (
	ModeReact  = "react"
	ModeROA    = "roa"
	ModePAR    = "par"
	ModeStaged = "staged"
)

// Config is a resolved run configuration. Zero values take the defaults of
// DESIGN.md (see Normalize).
type Config struct {
	Mode                 string
	MaxIterations        int           // default 10, clamped to 1..50
	Timeout              time.Duration // default 5m
	Planner              bool          // enableAgentPlannerV0
	PlanReview           bool
	MaxPlanContinuations int           // default 5
	PlanReminderInterval int           // default 3
	RequestInputTimeout  time.Duration // default 10m
	RequestInput         bool          // offer request_input outside roa mode
	PolicyPath           string        // staged mode policy file; "" = built-in
	PromptDir            string        // user overrides of embedded prompt templates
}

// RunRequest starts one run.
type RunRequest struct {
	RunID     string
	SessionID string
	Message   string
	History   []llm.Message
	Config    Config
	// Model overrides the agent's default model for this run.
	Model llm.Model
}

// Result is what a run ended with.
type Result struct {
	RunID      string `json:"runId"`
	Answer     string `json:"answer"`
	StopReason string `json:"stopReason"`
	Iterations int    `json:"iterations"`
	ElapsedMs  int64  `json:"elapsedMs"`
	Plan       any    `json:"plan,omitempty"`
	Capsule    any    `json:"capsule,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Deps are the agent's collaborators.
type Deps struct {
	Model  llm.Model
	Index  Index
	Logger *slog.Logger
	// ReviewStorePath is the bbolt file for pending plan reviews; "" keeps
	// them in memory only.
	ReviewStorePath string
	Now             func() time.Time
}

// ErrUnknownRun is returned by Stop and Input for a run that is not active.
var ErrUnknownRun = errors.New("unknown or finished run")

// Agent runs agent loops. It is safe for concurrent use: runs are
// independent and may run at once.
type Agent struct {
	deps Deps
}

// New returns an Agent.
func New(deps Deps) *Agent { return &Agent{deps: deps} }

// Run executes one run to its end, emitting events to sink. The returned
// error is for infrastructure failures; a run that ends on a model error
// returns a Result with StopReason "error".
func (a *Agent) Run(ctx context.Context, req RunRequest, sink Sink) (*Result, error) {
	return nil, errors.New("agent: not implemented yet")
}

// Stop asks a run to stop at its next phase boundary.
func (a *Agent) Stop(runID string) error { return ErrUnknownRun }

// Input delivers the host's answer to a run paused by request_input.
func (a *Agent) Input(runID, content string) error { return ErrUnknownRun }

// Close releases the agent's resources (the plan review store).
func (a *Agent) Close() error { return nil }
