package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
)

// ErrExhausted is the model error of a replay that asks for more model
// responses than the trace recorded.
var ErrExhausted = errors.New("replay: the run asked for a model response the trace does not have")

// Report is the outcome of a replay.
type Report struct {
	// Identical is true when the replayed run emitted the recorded events
	// (timestamps and latencies aside).
	Identical bool `json:"identical"`
	// Events is the number of recorded events.
	Events int `json:"events"`
	// Divergence is the first difference, when not identical.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Result is what the replayed run ended with.
	Result *agent.Result `json:"result,omitempty"`
}

// Divergence is the first difference between a recorded and a replayed
// event sequence.
type Divergence struct {
	// Index is the 0-based position in the event sequence.
	Index   int    `json:"index"`
	EventID string `json:"eventId"`
	// Field is the JSON path of the difference (payload.arguments.query),
	// or "event" when one sequence ended before the other.
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

func (d *Divergence) String() string {
	return fmt.Sprintf("event %d (%s): %s: want %s, got %s", d.Index+1, d.EventID, d.Field, d.Want, d.Got)
}

// Run re-executes a recorded run: the same run id, session, message,
// history and normalized config, against idx, with a model that returns
// the recorded ModelResponded responses in order (a recorded model error
// is returned as that error; asking for more is ErrExhausted) and a
// clock pinned to the recorded timestamps (each event gets its recorded
// timestamp; tools see their ToolInvoked time). Host actions are replayed
// too: a recorded stop or timeout ends the replay at the same point, a
// recorded request_input answer is delivered again. It then compares the
// replayed events with the recorded ones: ids, types, iteration,
// references and payloads, excluding timestamps, ToolReturned.latencyMs
// and RunTerminated.elapsedMs.
//
// The error is for traces that cannot be replayed at all (no RunStarted,
// no recorded config); a replay that differs is a report with Identical
// false.
func Run(ctx context.Context, events []agent.Event, idx agent.Index) (*Report, error) {
	recorded := make([]agent.Event, 0, len(events))
	for _, e := range events {
		if !e.Transient() {
			recorded = append(recorded, e)
		}
	}
	if len(recorded) == 0 || recorded[0].EventType != agent.EventRunStarted {
		return nil, fmt.Errorf("%w: the trace does not start with RunStarted", ErrBadTrace)
	}
	start, ok := recorded[0].Payload.(agent.RunStartedPayload)
	if !ok || start.Config == nil {
		return nil, fmt.Errorf("%w: RunStarted records no run config (the trace was written by an older vault-agent); it cannot be replayed", ErrBadTrace)
	}
	runID := recorded[0].RunID
	endReason := ""
	if last := recorded[len(recorded)-1]; last.EventType == agent.EventRunTerminated {
		if p, ok := last.Payload.(agent.RunTerminatedPayload); ok {
			endReason = p.StopReason
		}
	}

	// A recorded timeout is replayed by ending the run's context with the
	// cause a timeout has; cancelling propagates to the run's contexts
	// before it returns, so the run sees it at its next phase boundary.
	rctx, endCtx := context.WithCancelCause(ctx)
	defer endCtx(context.Canceled)
	var ag *agent.Agent
	model := &replayModel{name: start.Model}
	for _, e := range recorded {
		if e.EventType == agent.EventModelResponded {
			p, _ := e.Payload.(agent.ModelRespondedPayload)
			model.turns = append(model.turns, p)
		}
	}

	// A run the host stopped, or that timed out, ended at the first phase
	// boundary after its last recorded event: end the replay there too.
	endAt := -1
	if endReason == agent.StopStopped || endReason == agent.StopTimeout {
		endAt = len(recorded) - 2
	}
	endRun := func() {
		if endReason == agent.StopTimeout {
			endCtx(agent.ErrRunTimeout)
		} else {
			_ = ag.Stop(runID)
		}
	}

	// Should the run still ask for a response past the recording, end it
	// the same way.
	model.exhausted = func() bool {
		if endAt < 0 {
			return false
		}
		endRun()
		return true
	}

	var emitted atomic.Int64
	clock := func() time.Time {
		i := min(int(emitted.Load()), len(recorded)-1)
		return recorded[i].Timestamp
	}
	var mu sync.Mutex
	var replayed []agent.Event
	sink := agent.SinkFunc(func(e agent.Event) {
		if e.Transient() {
			return
		}
		mu.Lock()
		pos := len(replayed)
		replayed = append(replayed, e)
		mu.Unlock()
		emitted.Add(1)
		if pos == endAt {
			endRun()
		}
		if e.EventType == agent.EventInputRequested {
			// Deliver the recorded answer; without one, stop rather than
			// wait for the input timeout.
			if pos+1 < len(recorded) && recorded[pos+1].EventType == agent.EventInputReceived {
				if p, ok := recorded[pos+1].Payload.(agent.TextPayload); ok {
					_ = ag.Input(runID, p.Text)
					return
				}
			}
			_ = ag.Stop(runID)
		}
	})

	var err error
	ag, err = agent.New(agent.Deps{Model: model, Index: idx, Now: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer ag.Close()
	res, err := ag.Run(rctx, agent.RunRequest{
		RunID: runID, SessionID: start.SessionID, Message: start.Goal, History: start.History, Config: *start.Config,
	}, sink)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	rep := &Report{Events: len(recorded), Result: res}
	rep.Divergence = compareEvents(recorded, replayed)
	rep.Identical = rep.Divergence == nil
	return rep, nil
}

// replayModel returns recorded responses in order.
type replayModel struct {
	name      string
	exhausted func() bool // reports whether the run was made to end

	mu    sync.Mutex
	turns []agent.ModelRespondedPayload
	next  int
}

func (m *replayModel) Name() string { return m.name }

func (m *replayModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	n := m.next
	m.next++
	m.mu.Unlock()
	if n >= len(m.turns) {
		if m.exhausted != nil && m.exhausted() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w (response %d of %d recorded)", ErrExhausted, n+1, len(m.turns))
	}
	t := m.turns[n]
	if t.Error != "" {
		return nil, errors.New(t.Error)
	}
	resp := t.Response
	resp.ToolCalls = append([]llm.ToolCall(nil), t.Response.ToolCalls...)
	if onDelta != nil && resp.Content != "" {
		onDelta(resp.Content)
	}
	return &resp, nil
}

// compareEvents returns the first difference between want and got.
func compareEvents(want, got []agent.Event) *Divergence {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return &Divergence{Index: i, EventID: want[i].EventID, Field: "event", Want: want[i].EventType, Got: "(the replay ended)"}
		case i >= len(want):
			return &Divergence{Index: i, EventID: got[i].EventID, Field: "event", Want: "(the trace ended)", Got: got[i].EventType}
		}
		w, g := comparableEvent(want[i]), comparableEvent(got[i])
		if field, wv, gv, differ := firstDiff(w, g, ""); differ {
			return &Divergence{Index: i, EventID: want[i].EventID, Field: field, Want: jsonText(wv), Got: jsonText(gv)}
		}
	}
	return nil
}

// comparableEvent is an event as generic JSON without the fields that may
// differ between a run and its replay.
func comparableEvent(e agent.Event) map[string]any {
	b, err := json.Marshal(e)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	_ = dec.Decode(&m)
	delete(m, "timestamp")
	if p, ok := m["payload"].(map[string]any); ok {
		switch e.EventType {
		case agent.EventToolReturned:
			delete(p, "latencyMs")
		case agent.EventRunTerminated:
			delete(p, "elapsedMs")
		}
	}
	return m
}

// envelopeOrder is the order in which envelope fields are compared, so a
// divergence names the most telling field first.
var envelopeOrder = []string{"event_id", "event_type", "actor", "run_id", "seq", "iteration", "references", "payload"}

func firstDiff(want, got any, path string) (string, any, any, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return pathOr(path), want, got, true
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		var order []string
		if path == "" {
			for _, k := range envelopeOrder {
				if keys[k] {
					order = append(order, k)
					delete(keys, k)
				}
			}
		}
		rest := make([]string, 0, len(keys))
		for k := range keys {
			rest = append(rest, k)
		}
		sort.Strings(rest)
		for _, k := range append(order, rest...) {
			wv, wok := w[k]
			gv, gok := g[k]
			p := k
			if path != "" {
				p = path + "." + k
			}
			if !wok || !gok {
				return p, orAbsent(wv, wok), orAbsent(gv, gok), true
			}
			if f, a, b, d := firstDiff(wv, gv, p); d {
				return f, a, b, true
			}
		}
		return "", nil, nil, false
	case []any:
		g, ok := got.([]any)
		if !ok {
			return pathOr(path), want, got, true
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			if f, a, b, d := firstDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d {
				return f, a, b, true
			}
		}
		if len(w) != len(g) {
			n := min(len(w), len(g))
			var wv, gv any = absent, absent
			if n < len(w) {
				wv = w[n]
			}
			if n < len(g) {
				gv = g[n]
			}
			return fmt.Sprintf("%s[%d]", path, n), wv, gv, true
		}
		return "", nil, nil, false
	default:
		if !reflect.DeepEqual(want, got) {
			return pathOr(path), want, got, true
		}
		return "", nil, nil, false
	}
}

type absentValue struct{}

var absent = absentValue{}

func orAbsent(v any, ok bool) any {
	if !ok {
		return absent
	}
	return v
}

func pathOr(p string) string {
	if p == "" {
		return "event"
	}
	return p
}

// jsonText renders a compared value, capped for display.
func jsonText(v any) string {
	if _, ok := v.(absentValue); ok {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if r := []rune(s); len(r) > 500 {
		s = string(r[:499]) + "…"
	}
	return s
}

// WriteTimeline writes a readable timeline of events: the time since the
// first event, the iteration, the type and a one-line summary. It needs no
// vault.
func WriteTimeline(w io.Writer, events []agent.Event) error {
	if len(events) == 0 {
		return nil
	}
	t0 := events[0].Timestamp
	bw := bufio.NewWriter(w)
	for _, e := range events {
		if e.Transient() {
			continue
		}
		ref := ""
		if e.References.StepID != "" {
			ref = " [" + e.References.StepID + "]"
		}
		fmt.Fprintf(bw, "%+9.3fs  it %-2d  %-17s %s%s\n", e.Timestamp.Sub(t0).Seconds(), e.Iteration, e.EventType, Summary(e), ref)
	}
	return bw.Flush()
}

// agent.EventSummary is a one-line description of an event.
func Summary(e agent.Event) string {
	line := func(s string) string { return truncate.FirstLine(strings.Join(strings.Fields(s), " "), 140) }
	switch e.EventType {
	case agent.EventRunStarted:
		p, _ := e.Payload.(agent.RunStartedPayload)
		return line(fmt.Sprintf("mode %s, model %s, max %d iterations: %q", p.Mode, p.Model, p.MaxIterations, p.Goal))
	case agent.EventTurnStarted:
		p, _ := e.Payload.(agent.TurnStartedPayload)
		return fmt.Sprintf("iteration %d", p.Iteration)
	case agent.EventModelResponded:
		p, _ := e.Payload.(agent.ModelRespondedPayload)
		phase := p.Phase
		if phase == "" {
			phase = "act"
		}
		switch {
		case p.Error != "":
			return line(fmt.Sprintf("%s: error: %s", phase, p.Error))
		case len(p.Response.ToolCalls) > 0:
			var names []string
			for _, c := range p.Response.ToolCalls {
				names = append(names, c.Name)
			}
			return line(fmt.Sprintf("%s: %d tool call(s): %s", phase, len(names), strings.Join(names, ", ")))
		}
		return line(fmt.Sprintf("%s: %s", phase, p.Response.Content))
	case agent.EventToolInvoked:
		p, _ := e.Payload.(agent.ToolInvokedPayload)
		return line(p.Summary)
	case agent.EventToolReturned:
		p, _ := e.Payload.(agent.ToolReturnedPayload)
		s := p.Summary
		if s == "" && !p.Success {
			s = p.Tool + " failed: " + p.Error
		}
		return line(fmt.Sprintf("%s (%.1f ms)", s, p.LatencyMs))
	case agent.EventPlanAuthored, agent.EventPlanUpdated, agent.EventPlanReviewPending:
		p, _ := e.Payload.(agent.PlanPayload)
		return line(p.Summary)
	case agent.EventStageStarted, agent.EventStageCompleted:
		p, _ := e.Payload.(agent.StagePayload)
		s := fmt.Sprintf("%s (attempt %d)", p.Stage, p.Attempt)
		if p.Outcome != "" {
			s += ": " + p.Outcome
		}
		if p.Error != "" {
			s += ": " + p.Error
		}
		return line(s)
	case agent.EventPlanContinuation:
		p, _ := e.Payload.(agent.PlanContinuationPayload)
		return line(fmt.Sprintf("continuation %d/%d: %s", p.Attempt, p.Max, p.Text))
	case agent.EventRunTerminated:
		p, _ := e.Payload.(agent.RunTerminatedPayload)
		s := p.StopReason
		if p.Error != "" {
			s += ": " + p.Error
		} else if p.Answer != "" {
			s += ": " + p.Answer
		}
		return line(s)
	}
	p, _ := e.Payload.(agent.TextPayload)
	return line(p.Text)
}
