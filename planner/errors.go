package planner

import "errors"

// Tool names of the planner. The agent offers these tools only when the
// planner is enabled (enableAgentPlannerV0).
const (
	ToolWriteTodos   = "write_todos"
	ToolPlanProgress = "plan_progress"
)

// ErrOveruse is the exact tool error text given to planner calls in an
// iteration the OveruseGuard blocked.
const ErrOveruse = "planner_overuse_execute_next_step"

// Sentinel errors. Model-facing failures (invalid arguments, no plan, unknown
// step, batched plan_progress) wrap one of these; their Error text is meant to
// be returned to the model as the tool result.
var (
	// ErrInvalidArgs marks arguments that fail the tool's JSON schema or the
	// extra rules (unique todo ids). The concrete error is an *ArgsError.
	ErrInvalidArgs = errors.New("invalid planner arguments")
	// ErrNoPlan is returned by plan_progress before any write_todos.
	ErrNoPlan = errors.New("plan_progress_requires_plan: call write_todos first to create a plan")
	// ErrUnknownStep is returned when plan_progress names an id that is not in
	// the plan.
	ErrUnknownStep = errors.New("plan_progress: unknown step id")
	// ErrNotSolo is returned when plan_progress is batched with other calls.
	ErrNotSolo = errors.New("plan_progress must be the only tool call in its turn")

	// ErrPlanVersion is returned for a typed-plan version that does not
	// exist or is not written plan.vN.
	ErrPlanVersion = errors.New("bad plan version")
	// ErrInvalidPolicy marks a stage policy that cannot be used.
	ErrInvalidPolicy = errors.New("invalid stage policy")

	// ErrStoreLocked is returned by ReviewStore calls when another process
	// keeps the database locked past a short wait.
	ErrStoreLocked = errors.New("plan review store is locked by another process")
	// ErrStoreClosed is returned by ReviewStore calls after Close.
	ErrStoreClosed = errors.New("plan review store is closed")
	// ErrNoSession is returned by ReviewStore methods given an empty session id.
	ErrNoSession = errors.New("plan review store: empty session id")
)
