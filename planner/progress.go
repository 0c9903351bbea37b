package planner

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Plan statuses accepted by plan_progress.
const (
	PlanStatusCompleted  = "completed"
	PlanStatusInProgress = "in_progress"
)

// MaxStepSummaryLen caps plan_progress step_summary (characters).
const MaxStepSummaryLen = 200

// ProgressArgs are the arguments of plan_progress; every field is optional.
type ProgressArgs struct {
	StepID      string `json:"step_id,omitempty" jsonschema:"id of the todo you just completed"`
	StepSummary string `json:"step_summary,omitempty" jsonschema:"one short sentence on what the step accomplished (up to 200 characters)"`
	NextStep    string `json:"next_step,omitempty" jsonschema:"id of the todo you will work on next"`
	PlanStatus  string `json:"plan_status,omitempty" jsonschema:"completed when every step is done; in_progress otherwise"`
}

var progressValidator = sync.OnceValue(func() *validator {
	s := mustFor[ProgressArgs]()
	s.Properties["step_id"].MaxLength = intPtr(MaxTodoIDLen)
	s.Properties["next_step"].MaxLength = intPtr(MaxTodoIDLen)
	s.Properties["step_summary"].MaxLength = intPtr(MaxStepSummaryLen)
	s.Properties["plan_status"].Enum = []any{PlanStatusCompleted, PlanStatusInProgress}
	return newValidator(ToolPlanProgress, s, nil)
})

// ProgressParameters returns the plan_progress schema as JSON.
func ProgressParameters() json.RawMessage { return mustJSON(progressValidator().schema) }

// ParseProgress validates raw model arguments against the plan_progress
// schema and decodes them. The error is an *ArgsError.
func ParseProgress(raw []byte) (ProgressArgs, error) {
	var args ProgressArgs
	if err := progressValidator().validate(raw); err != nil {
		return args, err
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return ProgressArgs{}, &ArgsError{Tool: ToolPlanProgress, Problems: []string{"arguments: " + err.Error()}}
	}
	return args, nil
}

// Validate checks decoded arguments with the rules of ParseProgress.
func (a ProgressArgs) Validate() error {
	raw, err := json.Marshal(a)
	if err != nil {
		return &ArgsError{Tool: ToolPlanProgress, Problems: []string{"arguments: " + err.Error()}}
	}
	return progressValidator().validate(raw)
}

// ProgressResult is the plan_progress tool result sent back to the model.
type ProgressResult struct {
	OK bool `json:"ok"`
	// StepCompleted is the id marked completed by this call, if any.
	StepCompleted string `json:"stepCompleted,omitempty"`
	// InProgress is the id of the todo now in progress, "" if none.
	InProgress    string `json:"inProgress"`
	Done          int    `json:"done"`
	Total         int    `json:"total"`
	PlanCompleted bool   `json:"planCompleted"`
	// Message orients the model: what to do next.
	Message string `json:"message"`
}

// Progress records plan progress:
//   - step_id marks that todo completed (and stores step_summary for it);
//   - next_step marks that todo in_progress; when omitted after a completed
//     step, the first pending todo becomes in_progress unless one already is;
//   - plan_status "completed" marks every todo completed and the plan
//     Completed; "in_progress" clears the Completed mark.
//
// It needs a plan (ErrNoPlan otherwise); unknown ids fail with
// ErrUnknownStep listing the known ids. All checks happen before any change,
// so a failing call changes nothing.
//
// Progress does not create a new revision: it is bookkeeping inside the same
// plan, and a new revision would reset the continuation guard's attempt
// counter (it resets only on re-planning). It updates
// UpdatedAt.
func (s *State) Progress(args ProgressArgs) (ProgressResult, error) {
	if err := args.Validate(); err != nil {
		return ProgressResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &s.plan
	if !p.Exists() {
		return ProgressResult{}, ErrNoPlan
	}
	index := func(id string) int {
		for i, t := range p.Todos {
			if t.ID == id {
				return i
			}
		}
		return -1
	}
	for _, id := range []string{args.StepID, args.NextStep} {
		if id != "" && index(id) < 0 {
			ids := make([]string, len(p.Todos))
			for i, t := range p.Todos {
				ids[i] = t.ID
			}
			return ProgressResult{}, fmt.Errorf("%w %q (known ids: %s)", ErrUnknownStep, id, strings.Join(ids, ", "))
		}
	}

	res := ProgressResult{OK: true}
	if args.StepID != "" {
		p.Todos[index(args.StepID)].Status = StatusCompleted
		res.StepCompleted = args.StepID
		if args.StepSummary != "" {
			if p.StepSummaries == nil {
				p.StepSummaries = map[string]string{}
			}
			p.StepSummaries[args.StepID] = args.StepSummary
		}
	}
	switch args.PlanStatus {
	case PlanStatusCompleted:
		for i := range p.Todos {
			p.Todos[i].Status = StatusCompleted
		}
		p.Completed = true
	case PlanStatusInProgress:
		p.Completed = false
	}
	if !p.Completed {
		if args.NextStep != "" {
			// Naming the step just completed as next is a no-op, not a reopen.
			if args.NextStep != args.StepID {
				p.Todos[index(args.NextStep)].Status = StatusInProgress
			}
		} else if args.StepID != "" && p.InProgress() == "" {
			for i := range p.Todos {
				if p.Todos[i].Status == StatusPending {
					p.Todos[i].Status = StatusInProgress
					break
				}
			}
		}
	}
	p.UpdatedAt = s.now()

	res.InProgress = p.InProgress()
	res.Done = p.DoneCount()
	res.Total = len(p.Todos)
	res.PlanCompleted = p.Completed
	switch {
	case p.Completed:
		res.Message = "Plan marked completed. Give the final answer now."
	case res.Done == res.Total:
		res.Message = `All todos are completed. Call plan_progress with plan_status="completed", then give the final answer.`
	default:
		next := p.Unfinished()[0]
		res.Message = fmt.Sprintf("%d/%d done. Next: %s (id: %s). Execute it now.", res.Done, res.Total, next.Content, next.ID)
	}
	return res, nil
}

// ProgressJSON parses raw model arguments (see ParseProgress) and records
// them.
func (s *State) ProgressJSON(raw []byte) (ProgressResult, error) {
	args, err := ParseProgress(raw)
	if err != nil {
		return ProgressResult{}, err
	}
	return s.Progress(args)
}

// ValidateSolo enforces that plan_progress is the only tool call of its turn.
// callNames are the names of every tool call the model made in the turn. It
// returns ErrNotSolo when plan_progress is batched with any other call
// (including a second plan_progress), nil otherwise. The agent then answers
// every plan_progress call of that turn with this error and runs the rest.
func ValidateSolo(callNames []string) error {
	if len(callNames) <= 1 {
		return nil
	}
	for _, n := range callNames {
		if n == ToolPlanProgress {
			return ErrNotSolo
		}
	}
	return nil
}
