package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

// fakeIndex is agenttest.FakeIndex: the agent's behaviour is tested
// independently of ranking.
type fakeIndex = agenttest.FakeIndex

func newFakeIndex(t testing.TB) *fakeIndex { return agenttest.NewFakeIndex(t) }

// recorder is a Sink that keeps every event and lets tests wait for one.
type recorder struct {
	mu     sync.Mutex
	events []Event
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1000)} }

func (r *recorder) Emit(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// types lists the non-transient event types in order.
func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if !e.Transient() {
			out = append(out, e.EventType)
		}
	}
	return out
}

func (r *recorder) ofType(typ string) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.EventType == typ {
			out = append(out, e)
		}
	}
	return out
}

// waitFor blocks until an event of typ was emitted, or fails the test.
func (r *recorder) waitFor(t *testing.T, typ string) Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if evs := r.ofType(typ); len(evs) > 0 {
			return evs[0]
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; got %v", typ, r.types())
		}
	}
}

func newTestAgent(t *testing.T, turns []llm.Turn) (*Agent, *llm.Scripted) {
	t.Helper()
	model := llm.NewScripted(turns)
	a, err := New(Deps{Model: model, Index: newFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, model
}

func call(name string, args any) llm.ScriptedToolCall {
	return llm.ScriptedToolCall{Name: name, Arguments: args}
}

func toolTurn(text string, calls ...llm.ScriptedToolCall) llm.Turn {
	return llm.Turn{Content: text, ToolCalls: calls}
}

func run(t *testing.T, a *Agent, cfg Config, msg string) (*Result, *recorder) {
	t.Helper()
	rec := newRecorder()
	res, err := a.Run(context.Background(), RunRequest{RunID: "r1", Message: msg, Config: cfg}, rec)
	if err != nil {
		t.Fatal(err)
	}
	return res, rec
}

func returned(rec *recorder) []ToolReturnedPayload {
	var out []ToolReturnedPayload
	for _, e := range rec.ofType(EventToolReturned) {
		out = append(out, e.Payload.(ToolReturnedPayload))
	}
	return out
}

func TestMultiToolRun(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("Searching for the starter.", call("localSearch", map[string]any{"query": "sourdough starter"})),
		toolTurn("Reading the best note.", call("readNote", map[string]any{"notePath": firstPath(t, a0(t), "sourdough")})),
		{Content: "Feed it daily. [[Sourdough Starter]]"},
	})
	res, rec := run(t, a, Config{}, "how do I keep my sourdough starter alive?")
	if res.StopReason != StopFinalAnswer || res.Answer != "Feed it daily. [[Sourdough Starter]]" || res.Iterations != 3 {
		t.Fatalf("result = %+v", res)
	}
	want := []string{EventRunStarted,
		EventTurnStarted, EventModelResponded, EventToolInvoked, EventToolReturned,
		EventTurnStarted, EventModelResponded, EventToolInvoked, EventToolReturned,
		EventTurnStarted, EventModelResponded, EventRunTerminated}
	if got := rec.types(); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	for _, r := range returned(rec) {
		if !r.Success {
			t.Fatalf("tool %s failed: %s", r.Tool, r.Error)
		}
	}
	// The model saw the tool results: the third request carries two tool messages.
	reqs := model.Requests()
	var tools int
	for _, m := range reqs[2].Messages {
		if m.Role == llm.RoleTool {
			tools++
		}
	}
	if tools != 2 {
		t.Fatalf("third request had %d tool messages, want 2", tools)
	}
	// Planner off: no planner tools offered, no phase events.
	for _, d := range reqs[0].Tools {
		if planner.IsPlannerTool(d.Name) || d.Name == ToolRequestInput {
			t.Fatalf("tool %s offered with the planner off", d.Name)
		}
	}
	if c, ok := res.Capsule.(planner.Capsule); !ok || len(c.Artifacts) != 1 {
		t.Fatalf("capsule = %#v", res.Capsule)
	}
	// Event ids are stable: run id + sequence.
	if evs := rec.ofType(EventRunStarted); evs[0].EventID != "r1-0001" {
		t.Fatalf("event id = %q", evs[0].EventID)
	}
}

// a0 returns an index for helper lookups in table construction.
func a0(t *testing.T) *fakeIndex { return newFakeIndex(t) }

func firstPath(t *testing.T, fi *fakeIndex, substr string) string {
	t.Helper()
	for _, p := range fi.Paths() {
		if strings.Contains(strings.ToLower(p), substr) {
			return p
		}
	}
	t.Fatalf("no fixture note contains %q; have %v", substr, fi.Paths())
	return ""
}

func TestToolErrorsGoBackToTheModel(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("", call("readNote", map[string]any{"notePath": 42})),
		{ToolCalls: []llm.ScriptedToolCall{{Name: "localSearch", ArgumentsRaw: `{"query": "bread"`}}},
		toolTurn("", call("deleteNote", map[string]any{"path": "x.md"})),
		toolTurn("", call("readNote", map[string]any{"notePath": "../../etc/passwd"})),
		toolTurn("", call("readNote", map[string]any{"notePath": "no such note at all"})),
		{Content: "done"},
	})
	res, rec := run(t, a, Config{}, "test errors")
	if res.StopReason != StopFinalAnswer {
		t.Fatalf("stop reason %s (%s)", res.StopReason, res.Error)
	}
	rets := returned(rec)
	wants := []string{"invalid arguments for readNote", "not valid JSON", `unknown tool "deleteNote"`, "escapes", "not found"}
	if len(rets) != len(wants) {
		t.Fatalf("got %d tool results", len(rets))
	}
	for i, w := range wants {
		if rets[i].Success || !strings.Contains(rets[i].Error, w) {
			t.Errorf("result %d = %+v, want error containing %q", i, rets[i], w)
		}
	}
	// The model saw each error as the tool message.
	last := model.Requests()[5].Messages
	if m := last[len(last)-1]; m.Role != llm.RoleTool || !strings.Contains(m.Content, `"error"`) {
		t.Fatalf("last message = %+v", m)
	}
}

func TestToolPanicIsRecovered(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{
		toolTurn("", call("explode", map[string]any{})),
		{Content: "still here"},
	})
	a.registry.tools["explode"] = defineTool(toolSpec[NoArgs]{
		name: "explode", version: "1", description: "panics",
		run: func(context.Context, toolEnv, NoArgs) (any, error) { panic("boom") },
	})
	res, rec := run(t, a, Config{}, "panic please")
	if res.StopReason != StopFinalAnswer || res.Answer != "still here" {
		t.Fatalf("result = %+v", res)
	}
	if r := returned(rec)[0]; r.Success || !strings.Contains(r.Error, "panicked: boom") {
		t.Fatalf("tool result = %+v", r)
	}
}

func TestMaxIterations(t *testing.T) {
	var turns []llm.Turn
	for i := 0; i < 3; i++ {
		turns = append(turns, toolTurn("", call("getCurrentTime", map[string]any{})))
	}
	a, model := newTestAgent(t, turns)
	res, _ := run(t, a, Config{MaxIterations: 3}, "loop forever")
	if res.StopReason != StopMaxIterations || res.Iterations != 3 || model.Remaining() != 0 {
		t.Fatalf("result = %+v, remaining %d", res, model.Remaining())
	}
	if !strings.Contains(res.Answer, "maximum of 3 iterations") {
		t.Fatalf("answer = %q", res.Answer)
	}
}

func TestMaxIterationsClamped(t *testing.T) {
	for in, want := range map[int]int{0: 10, -3: 10, 1: 1, 50: 50, 51: 50, 1000: 50} {
		if got := (Config{MaxIterations: in}).Normalize().MaxIterations; got != want {
			t.Errorf("MaxIterations %d -> %d, want %d", in, got, want)
		}
	}
}

func TestTimeout(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
	res, rec := run(t, a, Config{Timeout: 50 * time.Millisecond}, "be slow")
	if res.StopReason != StopTimeout {
		t.Fatalf("stop reason = %s", res.StopReason)
	}
	if rec.types()[len(rec.types())-1] != EventRunTerminated {
		t.Fatal("no RunTerminated")
	}
}

func TestStopDuringModelCall(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
	rec := newRecorder()
	done := make(chan *Result)
	go func() {
		res, _ := a.Run(context.Background(), RunRequest{RunID: "s1", Message: "x"}, rec)
		done <- res
	}()
	rec.waitFor(t, EventTurnStarted)
	if err := a.Stop("s1"); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.StopReason != StopStopped {
		t.Fatalf("stop reason = %s", res.StopReason)
	}
	if err := a.Stop("s1"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("stop after end: %v", err)
	}
}

func TestStopMidToolFinishesTheToolFirst(t *testing.T) {
	a, model := newTestAgent(t, []llm.Turn{
		toolTurn("", call("block", map[string]any{})),
		{Content: "never asked"},
	})
	release := addBlockingTool(a)
	rec, done := startRun(t, a, RunRequest{RunID: "m1", Message: "x"})
	rec.waitFor(t, EventToolInvoked)
	if err := a.Stop("m1"); err != nil {
		t.Fatal(err)
	}
	close(release)
	res := <-done
	if res.StopReason != StopStopped {
		t.Fatalf("stop reason = %s", res.StopReason)
	}
	if r := returned(rec); len(r) != 1 || !r[0].Success {
		t.Fatalf("the tool in flight should finish: %+v", r)
	}
	if model.Remaining() != 1 {
		t.Fatal("the model was called after the stop")
	}
}

// addBlockingTool registers a tool "block" that runs until the returned
// channel is closed.
func addBlockingTool(a *Agent) chan struct{} {
	release := make(chan struct{})
	a.registry.tools["block"] = defineTool(toolSpec[NoArgs]{
		name: "block", version: "1", description: "blocks",
		run: func(ctx context.Context, _ toolEnv, _ NoArgs) (any, error) {
			<-release
			return "ok", nil
		},
	})
	return release
}

func TestCancelContext(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
	ctx, cancel := context.WithCancel(context.Background())
	rec := newRecorder()
	done := make(chan *Result)
	go func() {
		res, _ := a.Run(ctx, RunRequest{Message: "x"}, rec)
		done <- res
	}()
	rec.waitFor(t, EventTurnStarted)
	cancel()
	if res := <-done; res.StopReason != StopStopped {
		t.Fatalf("stop reason = %s", res.StopReason)
	}
}

func TestConcurrentRuns(t *testing.T) {
	idx := newFakeIndex(t)
	a, err := New(Deps{Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	slow := llm.NewScripted([]llm.Turn{{Content: "slow", DelayMs: 60_000}})
	fast := llm.NewScripted([]llm.Turn{toolTurn("", call("getCurrentTime", map[string]any{})), {Content: "fast answer"}})
	recSlow := newRecorder()
	slowDone := make(chan *Result)
	go func() {
		res, _ := a.Run(context.Background(), RunRequest{RunID: "slow", Message: "x", Model: slow}, recSlow)
		slowDone <- res
	}()
	recSlow.waitFor(t, EventTurnStarted)
	res, err := a.Run(context.Background(), RunRequest{RunID: "fast", Message: "y", Model: fast}, newRecorder())
	if err != nil || res.Answer != "fast answer" {
		t.Fatalf("fast run: %+v %v", res, err)
	}
	if _, err := a.Run(context.Background(), RunRequest{RunID: "slow", Message: "dup", Model: fast}, nil); !errors.Is(err, ErrDuplicateRun) {
		t.Fatalf("duplicate run id: %v", err)
	}
	if err := a.Stop("slow"); err != nil {
		t.Fatal(err)
	}
	if r := <-slowDone; r.StopReason != StopStopped {
		t.Fatalf("slow run: %s", r.StopReason)
	}
}

func TestNearDuplicateSearchGetsAHint(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{
		toolTurn("", call("localSearch", map[string]any{"query": "sourdough starter"})),
		toolTurn("", call("localSearch", map[string]any{"query": "Sourdough starters"})),
		toolTurn("", call("localSearch", map[string]any{"query": "pizza dough"})),
		{Content: "ok"},
	})
	_, rec := run(t, a, Config{}, "bread")
	rets := returned(rec)
	var out [3]LocalSearchResult
	for i := range out {
		if err := json.Unmarshal(rets[i].Output, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	if out[0].Hint != "" || out[1].Hint == "" || out[2].Hint != "" {
		t.Fatalf("hints: %q / %q / %q", out[0].Hint, out[1].Hint, out[2].Hint)
	}
}

func TestModelErrorEndsWithError(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Error: "upstream exploded"}})
	res, _ := run(t, a, Config{}, "x")
	if res.StopReason != StopError || !strings.Contains(res.Error, "upstream exploded") {
		t.Fatalf("result = %+v", res)
	}
}

func TestScriptExhaustionFailsLoudly(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{toolTurn("", call("getCurrentTime", map[string]any{}))})
	res, _ := run(t, a, Config{}, "x")
	if res.StopReason != StopError || !strings.Contains(res.Error, "fixture has only 1") {
		t.Fatalf("result = %+v", res)
	}
}

func TestToolSchemasAreGenerated(t *testing.T) {
	a, _ := newTestAgent(t, nil)
	for _, d := range a.Tools() {
		var s map[string]any
		if err := json.Unmarshal(d.Parameters, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s: schema %s (%v)", d.Name, d.Parameters, err)
		}
		if d.Description == "" {
			t.Errorf("%s: no description", d.Name)
		}
	}
	var s struct {
		Required []string `json:"required"`
	}
	tool, _ := a.registry.Get("readNote")
	_ = json.Unmarshal(tool.Parameters, &s)
	if fmt.Sprint(s.Required) != "[notePath]" {
		t.Fatalf("readNote required = %v", s.Required)
	}
}

// Slips models make in arguments whose intent is clear are repaired before
// validation: numbers and booleans as strings, one string for a list,
// arguments encoded twice. A string that is not a number still fails.
func TestToolArgumentSlipsAreRepaired(t *testing.T) {
	note := firstPath(t, a0(t), "sourdough starter")
	a, _ := newTestAgent(t, []llm.Turn{
		toolTurn("", call("readNote", map[string]any{"notePath": note, "chunkIndex": " 0 "})),
		toolTurn("", call("localSearch", map[string]any{"query": "rye", "salientTerms": "rye"})),
		{ToolCalls: []llm.ScriptedToolCall{{Name: "localSearch", ArgumentsRaw: `"{\"query\": \"starter\"}"`}}},
		toolTurn("", call("localSearch", map[string]any{"query": "rye", "timeRange": map[string]any{"startTime": "0", "endTime": "4102444800000"}})),
		toolTurn("", call("readNote", map[string]any{"notePath": note, "chunkIndex": "first"})),
		{Content: "done"},
	})
	res, rec := run(t, a, Config{}, "slips")
	if res.StopReason != StopFinalAnswer {
		t.Fatalf("stop reason %s (%s)", res.StopReason, res.Error)
	}
	rets := returned(rec)
	if len(rets) != 5 {
		t.Fatalf("got %d tool results", len(rets))
	}
	for i := range 4 {
		if !rets[i].Success {
			t.Errorf("call %d failed: %s", i, rets[i].Error)
		}
	}
	if rets[4].Success || !strings.Contains(rets[4].Error, "invalid arguments for readNote") {
		t.Errorf("non-numeric chunkIndex: %+v", rets[4])
	}
	// The step line describes the repaired call, not a generic one.
	if inv := rec.ofType(EventToolInvoked); !strings.HasPrefix(inv[0].Payload.(ToolInvokedPayload).Summary, "Reading") {
		t.Errorf("summary = %q", inv[0].Payload.(ToolInvokedPayload).Summary)
	}
}
