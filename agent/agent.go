package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/search"
)

// Index is what the agent's tools need from the search index; *search.Index
// satisfies it.
type Index interface {
	Search(ctx context.Context, req search.Request) (*search.Results, error)
	Paths() []string
	Tags() []search.TagCount
	// ReadChunk reads one chunk of the note name designates (see
	// search.ReadChunkOf).
	ReadChunk(name string, chunk int) (*search.NoteChunk, error)
}

// Relater finds the notes closest in meaning to the note name designates;
// *semantic.Engine satisfies it.
type Relater interface {
	Related(ctx context.Context, name string, limit int) (*search.Results, error)
}

// Modes of the run loop.
const (
	ModeReact  = "react"
	ModeROA    = "roa"
	ModePAR    = "par"
	ModeStaged = "staged"
)

// Config is a resolved run configuration. Zero values take the defaults
// that Normalize fills in.
type Config struct {
	Mode                 string        `json:"mode"`
	MaxIterations        int           `json:"maxIterations"` // default 10, clamped to 1..50
	Timeout              time.Duration `json:"timeoutNs"`     // default 5m
	Planner              bool          `json:"planner"`       // enableAgentPlannerV0
	PlanReview           bool          `json:"planReview"`
	MaxPlanContinuations int           `json:"maxPlanContinuations"`  // default 5
	PlanReminderInterval int           `json:"planReminderInterval"`  // default 3
	RequestInputTimeout  time.Duration `json:"requestInputTimeoutNs"` // default 10m
	RequestInput         bool          `json:"requestInput"`          // offer request_input outside roa mode
	PolicyPath           string        `json:"policyPath,omitempty"`  // staged mode policy file; "" = built-in
	PromptDir            string        `json:"promptDir,omitempty"`   // user overrides of embedded prompt templates
	// AllowEdits offers the edit tools (create_note, append_to_note,
	// replace_in_note, set_properties) to a run that has an Editor.
	AllowEdits bool `json:"allowEdits,omitempty"`
}

// RunRequest starts one run.
type RunRequest struct {
	RunID     string
	SessionID string
	Message   string
	// History is the conversation so far, as the model may see it: a
	// front-end strips its own markup (reasoning markers) first.
	History []llm.Message
	Config  Config
	// Model overrides the agent's default model for this run.
	Model llm.Model
	// Stop, when closed, stops the run as Agent.Stop does. A front-end
	// passes the Done channel of the request that asked for the run, so
	// cancelling the request stops the run even before it is registered.
	Stop <-chan struct{}
	// Editor carries out the edit tools' calls (with Config.AllowEdits):
	// the front-end's way of asking the person. Without one no edit tool
	// is offered.
	Editor Editor
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
	// Related, when set, offers the relatedNotes tool (the notes closest in
	// meaning to a note); nil without an embedding model.
	Related Relater
	// ReviewStorePath is the bbolt file for pending plan reviews; "" keeps
	// them in memory only.
	ReviewStorePath string
	Now             func() time.Time
}

// ErrUnknownRun is returned by Stop and Input for a run that is not active.
var ErrUnknownRun = errors.New("unknown or finished run")

// ErrNotWaiting is returned by Input when the run is not waiting for input.
var ErrNotWaiting = errors.New("run is not waiting for input")

// ErrBadArgument marks an argument the caller can fix.
var ErrBadArgument = errors.New("bad argument")

// ErrDuplicateRun is returned by Run when a run with the same id is active.
var ErrDuplicateRun = errors.New("a run with this id is already active")

// ErrRunTimeout is the cause of a run's context when the run's timeout
// ends it; the run then stops with StopTimeout.
var ErrRunTimeout = errors.New("run timed out")

// Normalize fills defaults and clamps limits.
func (c Config) Normalize() Config {
	if c.Mode == "" {
		c.Mode = ModeReact
	}
	if c.MaxIterations <= 0 {
		c.MaxIterations = 10
	}
	c.MaxIterations = min(max(c.MaxIterations, 1), 50)
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.MaxPlanContinuations <= 0 {
		c.MaxPlanContinuations = planner.DefaultMaxContinuations
	}
	if c.PlanReminderInterval <= 0 {
		c.PlanReminderInterval = planner.DefaultReminderInterval
	}
	if c.RequestInputTimeout <= 0 {
		c.RequestInputTimeout = 10 * time.Minute
	}
	return c
}

// Agent runs agent loops. It is safe for concurrent use: runs are
// independent and may run at once.
type Agent struct {
	deps     Deps
	registry *Registry
	reviews  reviewStore

	// mu guards runs and nextID.
	mu     sync.Mutex
	runs   map[string]*runState
	nextID int
}

// reviewStore keeps pending plan reviews; *planner.ReviewStore satisfies it.
type reviewStore interface {
	Put(sessionID string, p planner.PendingReview) error
	Take(sessionID string) (planner.PendingReview, bool, error)
	Close() error
}

// New returns an Agent. It opens the plan review store when
// Deps.ReviewStorePath is set.
func New(deps Deps) (*Agent, error) {
	a := &Agent{deps: deps, runs: map[string]*runState{}}
	tools := builtinTools()
	if deps.Related != nil {
		tools = append(tools, relatedTool())
	}
	if _, ok := deps.Index.(TaskIndex); ok {
		tools = append(tools, taskTools()...)
	}
	if _, ok := deps.Index.(LinkIndex); ok {
		tools = append(tools, linkTools()...)
	}
	a.registry = NewRegistry(append(append(tools, plannerTools()...), editTools()...)...)
	if deps.ReviewStorePath != "" {
		st, err := planner.OpenReviewStore(deps.ReviewStorePath, time.Hour)
		if err != nil {
			return nil, fmt.Errorf("open plan review store: %w", err)
		}
		a.reviews = st
	} else {
		a.reviews = planner.NewMemoryReviews()
	}
	return a, nil
}

// Tools returns the definitions of every tool the agent may offer.
func (a *Agent) Tools() []llm.ToolDef { return a.registry.Defs(nil) }

func (a *Agent) logger() *slog.Logger {
	if a.deps.Logger != nil {
		return a.deps.Logger.With("component", "agent")
	}
	return slog.New(slog.DiscardHandler)
}

// NewRunID returns a run id no other run of this agent has: a front-end
// that must name a run before starting it (to address its notifications)
// takes one here.
func (a *Agent) NewRunID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextID++
	return fmt.Sprintf("run-%d-%d", time.Now().UnixMilli(), a.nextID)
}

func (a *Agent) register(r *runState) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.runs[r.id]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicateRun, r.id)
	}
	a.runs[r.id] = r
	return nil
}

func (a *Agent) unregister(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.runs, id)
}

func (a *Agent) lookup(id string) (*runState, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.runs[id]
	return r, ok
}

// Active reports whether a run with this id is running.
func (a *Agent) Active(runID string) bool {
	_, ok := a.lookup(runID)
	return ok
}

// Stop asks a run to stop at its next phase boundary: a model call in
// flight is cancelled, a tool in flight finishes first.
func (a *Agent) Stop(runID string) error {
	r, ok := a.lookup(runID)
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownRun, runID)
	}
	r.stop(errStopped)
	return nil
}

// StopAll stops every active run as Stop does.
func (a *Agent) StopAll() {
	a.mu.Lock()
	runs := make([]*runState, 0, len(a.runs))
	for _, r := range a.runs {
		runs = append(runs, r)
	}
	a.mu.Unlock()
	for _, r := range runs {
		r.stop(errStopped)
	}
}

// Input delivers the host's answer to a run paused by request_input.
func (a *Agent) Input(runID, content string) error {
	r, ok := a.lookup(runID)
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownRun, runID)
	}
	r.inputMu.Lock()
	ch := r.inputCh
	r.inputCh = nil
	r.inputMu.Unlock()
	if ch == nil {
		return fmt.Errorf("%w: %s", ErrNotWaiting, runID)
	}
	ch <- content
	return nil
}

// Close releases the agent's resources (the plan review store).
func (a *Agent) Close() error {
	if a.reviews != nil {
		return a.reviews.Close()
	}
	return nil
}
