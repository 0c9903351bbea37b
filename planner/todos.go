package planner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/vault-agent/vault-agent/internal/truncate"
)

// Todo statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// Limits of write_todos arguments. Lengths are in characters
// (Unicode code points), not bytes: "café" is 4.
const (
	MinTodos          = 1
	MaxTodos          = 8
	MaxTodoIDLen      = 40
	MaxTodoContentLen = 140
	MaxFocusLen       = 40
	MaxNoteLen        = 200
)

// Todo is one item of the plan.
type Todo struct {
	ID      string `json:"id" jsonschema:"short stable identifier of the step, e.g. search or read_notes (1-40 characters)"`
	Content string `json:"content" jsonschema:"short action-oriented description of the step (1-140 characters)"`
	Status  string `json:"status" jsonschema:"pending, in_progress or completed"`
}

// WriteTodosArgs are the arguments of write_todos: the full current todo list
// (replace semantics, not a patch).
type WriteTodosArgs struct {
	Todos []Todo `json:"todos" jsonschema:"the complete current checklist (1-8 todos); it replaces the previous one"`
	Focus string `json:"focus,omitempty" jsonschema:"optional short label of the current focus (up to 40 characters)"`
	Note  string `json:"note,omitempty" jsonschema:"optional short note about the plan (up to 200 characters)"`
}

var writeTodosValidator = sync.OnceValue(func() *validator {
	s := mustFor[WriteTodosArgs]()
	todos := s.Properties["todos"]
	todos.Type, todos.Types = "array", nil // a nil slice is not a valid plan
	todos.MinItems, todos.MaxItems = intPtr(MinTodos), intPtr(MaxTodos)
	item := todos.Items
	item.Properties["id"].MinLength = intPtr(1)
	item.Properties["id"].MaxLength = intPtr(MaxTodoIDLen)
	item.Properties["content"].MinLength = intPtr(1)
	item.Properties["content"].MaxLength = intPtr(MaxTodoContentLen)
	item.Properties["status"].Enum = []any{StatusPending, StatusInProgress, StatusCompleted}
	s.Properties["focus"].MaxLength = intPtr(MaxFocusLen)
	s.Properties["note"].MaxLength = intPtr(MaxNoteLen)
	return newValidator(ToolWriteTodos, s, uniqueIDs)
})

// uniqueIDs reports todo ids used more than once (JSON Schema's uniqueItems
// compares whole items, not one field).
func uniqueIDs(v any) []string {
	todos, _ := v.(map[string]any)["todos"].([]any)
	first := map[string]int{}
	var problems []string
	for i, t := range todos {
		id, _ := t.(map[string]any)["id"].(string)
		if j, ok := first[id]; ok {
			problems = append(problems, fmt.Sprintf("todos[%d].id: duplicate id %q (already used by todos[%d])", i, id, j))
			continue
		}
		first[id] = i
	}
	return problems
}

// WriteTodosSchema returns a copy of the JSON schema of write_todos, with
// every limit set.
func WriteTodosSchema() *jsonschema.Schema { return writeTodosValidator().schema.CloneSchemas() }

// WriteTodosParameters returns the write_todos schema as JSON, ready to be
// offered to a model as the tool's parameters.
func WriteTodosParameters() json.RawMessage { return mustJSON(writeTodosValidator().schema) }

// ParseWriteTodos validates raw model arguments against the write_todos
// schema (limits, enum, required and unknown fields) and the unique-id rule,
// then decodes them. The error is an *ArgsError whose text goes back to the
// model as the tool result.
func ParseWriteTodos(raw []byte) (WriteTodosArgs, error) {
	var args WriteTodosArgs
	if err := writeTodosValidator().validate(raw); err != nil {
		return args, err
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return WriteTodosArgs{}, &ArgsError{Tool: ToolWriteTodos, Problems: []string{"arguments: " + err.Error()}}
	}
	return args, nil
}

// Validate checks already-decoded arguments with the same rules as
// ParseWriteTodos (unknown fields cannot occur in a Go value).
func (a WriteTodosArgs) Validate() error {
	raw, err := json.Marshal(a)
	if err != nil {
		return &ArgsError{Tool: ToolWriteTodos, Problems: []string{"arguments: " + err.Error()}}
	}
	return writeTodosValidator().validate(raw)
}

// Result is the write_todos tool result sent back to the model:
// {"ok":true,"revision":1,"todoCount":3,"inProgress":"search"}.
type Result struct {
	OK        bool `json:"ok"`
	Revision  int  `json:"revision"`
	TodoCount int  `json:"todoCount"`
	// InProgress is the id of the (first) in_progress todo, "" if none.
	InProgress string `json:"inProgress"`
	// Unchanged is set when the call repeated the current plan exactly; no
	// new revision was made.
	Unchanged bool `json:"unchanged,omitempty"`
}

// Plan is a snapshot of the planner state.
type Plan struct {
	// Revision counts write_todos calls that changed the plan; 0 means no
	// plan yet. plan_progress does not create revisions.
	Revision int    `json:"revision"`
	Todos    []Todo `json:"todos"`
	Focus    string `json:"focus,omitempty"`
	Note     string `json:"note,omitempty"`
	// StepSummaries holds plan_progress step_summary texts by todo id.
	StepSummaries map[string]string `json:"stepSummaries,omitempty"`
	UpdatedAt     time.Time         `json:"updatedAt"`
	// Completed is set by plan_progress(plan_status="completed").
	Completed bool `json:"completed"`
}

// Exists reports whether a plan has been written.
func (p Plan) Exists() bool { return p.Revision > 0 && len(p.Todos) > 0 }

// DoneCount counts completed todos.
func (p Plan) DoneCount() int {
	n := 0
	for _, t := range p.Todos {
		if t.Status == StatusCompleted {
			n++
		}
	}
	return n
}

// AllDone reports whether the plan is finished: marked completed, or every
// todo completed.
func (p Plan) AllDone() bool {
	return p.Completed || (len(p.Todos) > 0 && p.DoneCount() == len(p.Todos))
}

// InProgress returns the id of the first in_progress todo, "" if none.
func (p Plan) InProgress() string {
	for _, t := range p.Todos {
		if t.Status == StatusInProgress {
			return t.ID
		}
	}
	return ""
}

// Unfinished returns the todos not completed: in_progress ones first, then
// pending ones, each group in plan order.
func (p Plan) Unfinished() []Todo {
	var out []Todo
	for _, st := range []string{StatusInProgress, StatusPending} {
		for _, t := range p.Todos {
			if t.Status == st {
				out = append(out, t)
			}
		}
	}
	return out
}

func (p Plan) clone() Plan {
	p.Todos = slices.Clone(p.Todos)
	if p.StepSummaries != nil {
		m := make(map[string]string, len(p.StepSummaries))
		for k, v := range p.StepSummaries {
			m[k] = v
		}
		p.StepSummaries = m
	}
	return p
}

// summaryContentLen caps the step text in Summary.
const summaryContentLen = 60

// Summary is one line for the reasoning block, e.g.
// "Plan r2: 1/3 done · now: Read the top notes". It is "" without a plan.
func (p Plan) Summary() string {
	if !p.Exists() {
		return ""
	}
	head := fmt.Sprintf("Plan r%d: %d/%d done", p.Revision, p.DoneCount(), len(p.Todos))
	if p.AllDone() {
		return head + " · completed"
	}
	next := p.Unfinished()[0]
	label := "next"
	if next.Status == StatusInProgress {
		label = "now"
	}
	return head + " · " + label + ": " + truncate.Runes(strings.TrimSpace(next.Content), summaryContentLen)
}

// Render is the checklist text used in continuation, reminder and feedback
// messages:
//
//	Plan (revision 2, 1/3 done) · focus: notes
//	- [x] Search the vault (id: search)
//	- [~] Read the top notes (id: read, in progress)
//	- [ ] Write the answer (id: answer)
//	Note: ...
//
// It is "" without a plan.
func (p Plan) Render() string {
	if !p.Exists() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Plan (revision %d, %d/%d done", p.Revision, p.DoneCount(), len(p.Todos))
	if p.Completed {
		b.WriteString(", marked completed")
	}
	b.WriteString(")")
	if p.Focus != "" {
		b.WriteString(" · focus: " + p.Focus)
	}
	for _, t := range p.Todos {
		switch t.Status {
		case StatusCompleted:
			fmt.Fprintf(&b, "\n- [x] %s (id: %s)", t.Content, t.ID)
		case StatusInProgress:
			fmt.Fprintf(&b, "\n- [~] %s (id: %s, in progress)", t.Content, t.ID)
		default:
			fmt.Fprintf(&b, "\n- [ ] %s (id: %s)", t.Content, t.ID)
		}
	}
	if p.Note != "" {
		b.WriteString("\nNote: " + p.Note)
	}
	return b.String()
}

// State is the planner state of one run. It lives in memory only (no file
// I/O, no vault access). Methods are safe for concurrent use; the zero value
// is ready to use.
type State struct {
	// Now is the clock used for UpdatedAt; nil means time.Now. Set it before
	// first use.
	Now func() time.Time

	mu   sync.Mutex // guards plan
	plan Plan
}

// NewState returns an empty planner state.
func NewState() *State { return &State{} }

func (s *State) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Apply validates args and replaces the whole plan with them (replace
// semantics). Each change makes a new revision and clears the Completed mark
// and the step summaries of ids no longer present. Repeating the current
// plan exactly makes no new revision (Result.Unchanged): a model that rewrites
// an unchanged list must not reset the continuation guard. On invalid args
// the state is untouched and the error is an *ArgsError.
func (s *State) Apply(args WriteTodosArgs) (Result, error) {
	if err := args.Validate(); err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan.Exists() && slices.Equal(s.plan.Todos, args.Todos) &&
		s.plan.Focus == args.Focus && s.plan.Note == args.Note {
		return s.resultLocked(true), nil
	}
	s.plan.Revision++
	s.plan.Todos = slices.Clone(args.Todos)
	s.plan.Focus = args.Focus
	s.plan.Note = args.Note
	s.plan.Completed = false
	for id := range s.plan.StepSummaries {
		if !slices.ContainsFunc(args.Todos, func(t Todo) bool { return t.ID == id }) {
			delete(s.plan.StepSummaries, id)
		}
	}
	s.plan.UpdatedAt = s.now()
	return s.resultLocked(false), nil
}

// ApplyJSON parses raw model arguments (see ParseWriteTodos) and applies them.
func (s *State) ApplyJSON(raw []byte) (Result, error) {
	args, err := ParseWriteTodos(raw)
	if err != nil {
		return Result{}, err
	}
	return s.Apply(args)
}

func (s *State) resultLocked(unchanged bool) Result {
	return Result{
		OK:         true,
		Revision:   s.plan.Revision,
		TodoCount:  len(s.plan.Todos),
		InProgress: s.plan.InProgress(),
		Unchanged:  unchanged,
	}
}

// Snapshot returns a copy of the current plan (Revision 0 before the first
// write_todos).
func (s *State) Snapshot() Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan.clone()
}

// HasPlan reports whether write_todos has succeeded at least once.
func (s *State) HasPlan() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan.Exists()
}

// Summary is Snapshot().Summary().
func (s *State) Summary() string { return s.Snapshot().Summary() }

// Render is Snapshot().Render().
func (s *State) Render() string { return s.Snapshot().Render() }
