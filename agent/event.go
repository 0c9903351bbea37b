package agent

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

// Event types. Every significant action of a run is one append-only Event
// carrying one of these types; payloadTypes says which payload each has.
const (
	EventRunStarted        = "RunStarted"
	EventTurnStarted       = "TurnStarted"
	EventModelResponded    = "ModelResponded"
	EventToolInvoked       = "ToolInvoked"
	EventToolReturned      = "ToolReturned"
	EventPlanAuthored      = "PlanAuthored"
	EventPlanUpdated       = "PlanUpdated"
	EventReflectionAdded   = "ReflectionAdded"
	EventPlanContinuation  = "PlanContinuation"
	EventPlanReviewPending = "PlanReviewPending"
	EventReasonEmitted     = "ReasonEmitted"
	EventObserveEmitted    = "ObserveEmitted"
	EventInputRequested    = "InputRequested"
	EventInputReceived     = "InputReceived"
	EventInputTimeout      = "InputTimeout"
	EventStageStarted      = "StageStarted"
	EventStageCompleted    = "StageCompleted"
	EventRunTerminated     = "RunTerminated"
	// EventAnswerDelta is transient: it carries streamed answer text, is not
	// written to traces and is not part of replay comparison.
	EventAnswerDelta = "AnswerDelta"
)

// Stop reasons of a run.
const (
	StopFinalAnswer    = "final_answer"
	StopMaxIterations  = "max_iterations"
	StopTimeout        = "timeout"
	StopStopped        = "stopped"
	StopAwaitUserInput = "await_user_input"
	StopError          = "error"
)

// References ties an event to plans, prompts and tools.
type References struct {
	PlanID        string `json:"plan_id,omitempty"`
	StepID        string `json:"step_id,omitempty"`
	PromptVersion string `json:"prompt_version,omitempty"`
	ToolVersion   string `json:"tool_version,omitempty"`
	SectionKey    string `json:"section_key,omitempty"` // planning | action | reflection
	Namespace     string `json:"namespace,omitempty"`
}

// Event is the envelope of every event.
type Event struct {
	EventID    string     `json:"event_id"`
	EventType  string     `json:"event_type"`
	Timestamp  time.Time  `json:"timestamp"`
	Actor      string     `json:"actor"`
	RunID      string     `json:"run_id"`
	Seq        int        `json:"seq"`
	Iteration  int        `json:"iteration"`
	References References `json:"references"`
	// Payload is the one payload type of EventType (see payloadTypes), in
	// a live event and in one read back from a trace alike.
	Payload Payload `json:"payload"`
}

// Payload is an event's payload. The set is closed: the *Payload types of
// this package, one per event type, so a view of the event stream reads a
// payload with a type assertion or switch, never by decoding it.
type Payload interface{ isPayload() }

func (RunStartedPayload) isPayload()       {}
func (TurnStartedPayload) isPayload()      {}
func (ModelRespondedPayload) isPayload()   {}
func (ToolInvokedPayload) isPayload()      {}
func (ToolReturnedPayload) isPayload()     {}
func (PlanPayload) isPayload()             {}
func (TextPayload) isPayload()             {}
func (PlanContinuationPayload) isPayload() {}
func (StagePayload) isPayload()            {}
func (RunTerminatedPayload) isPayload()    {}

// payloadTypes gives the payload type of every event type: the one
// decoder of payloads read back as JSON.
var payloadTypes = map[string]func(json.RawMessage) (Payload, error){
	EventRunStarted:        decodeAs[RunStartedPayload],
	EventTurnStarted:       decodeAs[TurnStartedPayload],
	EventModelResponded:    decodeAs[ModelRespondedPayload],
	EventToolInvoked:       decodeAs[ToolInvokedPayload],
	EventToolReturned:      decodeAs[ToolReturnedPayload],
	EventPlanAuthored:      decodeAs[PlanPayload],
	EventPlanUpdated:       decodeAs[PlanPayload],
	EventPlanReviewPending: decodeAs[PlanPayload],
	EventReflectionAdded:   decodeAs[TextPayload],
	EventReasonEmitted:     decodeAs[TextPayload],
	EventObserveEmitted:    decodeAs[TextPayload],
	EventInputRequested:    decodeAs[TextPayload],
	EventInputReceived:     decodeAs[TextPayload],
	EventInputTimeout:      decodeAs[TextPayload],
	EventAnswerDelta:       decodeAs[TextPayload],
	EventPlanContinuation:  decodeAs[PlanContinuationPayload],
	EventStageStarted:      decodeAs[StagePayload],
	EventStageCompleted:    decodeAs[StagePayload],
	EventRunTerminated:     decodeAs[RunTerminatedPayload],
}

func decodeAs[T Payload](raw json.RawMessage) (Payload, error) {
	p, err := decodeValue[T](raw)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// DecodePayload decodes the JSON payload of an event of type eventType into
// its payload type.
func DecodePayload(eventType string, raw json.RawMessage) (Payload, error) {
	decode, ok := payloadTypes[eventType]
	if !ok {
		return nil, fmt.Errorf("unknown event type %q", eventType)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("%s event without a payload", eventType)
	}
	p, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s payload: %v", eventType, err)
	}
	return p, nil
}

// UnmarshalJSON decodes an event, its payload as the payload type of its
// event type.
func (e *Event) UnmarshalJSON(b []byte) error {
	type envelope Event
	var raw struct {
		envelope
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	p, err := DecodePayload(raw.EventType, raw.Payload)
	if err != nil {
		return err
	}
	*e = Event(raw.envelope)
	e.Payload = p
	return nil
}

// Transient reports whether the event is a streaming artefact that traces
// and replay ignore.
func (e Event) Transient() bool { return e.EventType == EventAnswerDelta }

// Sink receives a run's events in order. Emit is called from the run's
// goroutine and must not block for long.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// RunStartedPayload opens a run.
type RunStartedPayload struct {
	Goal          string `json:"goal"`
	Mode          string `json:"mode"`
	Model         string `json:"model"`
	MaxIterations int    `json:"maxIterations"`
	Planner       bool   `json:"planner"`
	// SessionID, Config (normalized) and History are what replay needs to
	// re-create the run.
	SessionID string        `json:"sessionId,omitempty"`
	Config    *Config       `json:"config,omitempty"`
	History   []llm.Message `json:"history,omitempty"`
}

// TurnStartedPayload opens one iteration.
type TurnStartedPayload struct {
	Iteration int `json:"iteration"`
}

// ModelRespondedPayload records a model output so a run can be replayed.
type ModelRespondedPayload struct {
	Phase     string         `json:"phase,omitempty"` // act | reason | observe | plan | stage:<name>
	Response  llm.Response   `json:"response"`
	Error     string         `json:"error,omitempty"`
	Messages  int            `json:"messages"`
	ToolNames []string       `json:"toolNames,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// ToolInvokedPayload is a tool call about to run.
type ToolInvokedPayload struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Summary is a one-line operational description ("Searching notes for ...").
	Summary string `json:"summary"`
}

// ToolReturnedPayload is a tool call's outcome.
type ToolReturnedPayload struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Success   bool            `json:"success"`
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	LatencyMs float64         `json:"latencyMs"`
	// Summary is a one-line result description ("Found 5 relevant notes").
	Summary string `json:"summary"`
}

// Todo is one item of the write_todos plan.
type Todo = planner.Todo

// PlanPayload is carried by PlanAuthored and PlanUpdated.
type PlanPayload struct {
	Revision int    `json:"revision"`
	Todos    []Todo `json:"todos,omitempty"`
	Focus    string `json:"focus,omitempty"`
	Note     string `json:"note,omitempty"`
	// Summary is a one-line description for the reasoning block.
	Summary string `json:"summary"`
	// Plan is the typed plan in par mode.
	Plan any `json:"plan,omitempty"`
	// Diff describes what changed from the previous version (par mode).
	Diff any `json:"diff,omitempty"`
}

// UnmarshalJSON decodes Plan and Diff into the types the loops put there:
// Plan is a planner.TypedPlan (par) or a planner.PolicyOutline (staged),
// Diff a planner.PlanDiff.
func (p *PlanPayload) UnmarshalJSON(b []byte) error {
	type fields PlanPayload
	var raw struct {
		fields
		Plan json.RawMessage `json:"plan"`
		Diff json.RawMessage `json:"diff"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = PlanPayload(raw.fields)
	if len(raw.Plan) > 0 && string(raw.Plan) != "null" {
		var probe struct {
			Policy *string `json:"policy"`
		}
		if err := json.Unmarshal(raw.Plan, &probe); err != nil {
			return fmt.Errorf("plan: %v", err)
		}
		var err error
		if probe.Policy != nil {
			p.Plan, err = decodeValue[planner.PolicyOutline](raw.Plan)
		} else {
			p.Plan, err = decodeValue[planner.TypedPlan](raw.Plan)
		}
		if err != nil {
			return fmt.Errorf("plan: %v", err)
		}
	}
	if len(raw.Diff) > 0 && string(raw.Diff) != "null" {
		d, err := decodeValue[planner.PlanDiff](raw.Diff)
		if err != nil {
			return fmt.Errorf("diff: %v", err)
		}
		p.Diff = d
	}
	return nil
}

func decodeValue[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// TextPayload carries one piece of model text: reflections, reason and
// observe phases, answer deltas, continuation notes, input questions.
type TextPayload struct {
	Text string `json:"text"`
	// Control is the parsed JSON control block of roa phases, if any.
	Control map[string]any `json:"control,omitempty"`
}

// StagePayload is carried by StageStarted and StageCompleted.
type StagePayload struct {
	Stage   string         `json:"stage"`
	Attempt int            `json:"attempt"`
	Output  map[string]any `json:"output,omitempty"`
	Outcome string         `json:"outcome,omitempty"` // ok | retry | fallback | terminate
	Error   string         `json:"error,omitempty"`
}

// PlanContinuationPayload is carried by PlanContinuation events.
type PlanContinuationPayload struct {
	Attempt   int    `json:"attempt"`
	Max       int    `json:"max"`
	Remaining int    `json:"remaining"`
	Text      string `json:"text"`
}

// RunTerminatedPayload closes a run.
type RunTerminatedPayload struct {
	StopReason string `json:"stopReason"`
	Answer     string `json:"answer"`
	Error      string `json:"error,omitempty"`
	Iterations int    `json:"iterations"`
	ElapsedMs  int64  `json:"elapsedMs"`
}
