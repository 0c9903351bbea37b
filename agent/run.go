package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/search"
)

// answerHoldBytes is how much streamed text is held back before it is
// shown as the answer (see callModel).
const answerHoldBytes = 240

// errStopped is the cancellation cause of a run stopped by the host.
var errStopped = errors.New("run stopped")

// runState is everything one run owns. Its fields are touched only by the
// run's goroutine, except the control fields (see their comments).
type runState struct {
	id, session string
	cfg         Config
	goal        string
	model       llm.Model
	sink        Sink
	logger      *slog.Logger
	now         func() time.Time
	started     time.Time
	registry    *Registry
	index       Index
	related     Relater
	// editor carries out the edit tools (nil: no edit tool is offered).
	editor Editor

	// history is the earlier conversation (buildMessages drops its system
	// and empty messages).
	history []llm.Message
	// promptVersion is the version of the prompts of the current phase.
	promptVersion string

	seq       int
	iteration int
	messages  []llm.Message
	lastText  string

	plan     *planner.State
	overuse  planner.OveruseGuard
	cont     planner.Continuation
	planRefs string // plan_id of the current plan revision
	// stepRef is the current par step or stage; tool events carry it as step_id.
	stepRef string
	// gate, when set, restricts the tools offered and run (par step, stage).
	gate *toolGate

	searches []searchRecord
	read     []*search.NoteChunk
	hits     []search.Result

	// stop cancels the run's model calls; it is safe to call from any
	// goroutine. stopCtx is the context it cancels. stopReq is the
	// caller's RunRequest.Stop, checked at every phase boundary too.
	stop    context.CancelCauseFunc
	stopCtx context.Context
	stopReq <-chan struct{}

	// inputMu guards inputCh, set while request_input waits.
	inputMu sync.Mutex
	inputCh chan string

	// reviewPending is set when plan review ends the run after the first plan.
	reviewPending bool
	// endReason, when set by a tool, ends the run after the current phase.
	endReason string
}

// Run executes one run to its end, emitting events to sink. The returned
// error is for infrastructure failures only; a run that ends on a model
// error returns a Result with StopReason "error".
func (a *Agent) Run(ctx context.Context, req RunRequest, sink Sink) (*Result, error) {
	if strings.TrimSpace(req.Message) == "" {
		return nil, fmt.Errorf("%w: message is empty", ErrBadArgument)
	}
	if a.deps.Index == nil {
		return nil, errors.New("agent: no index")
	}
	model := req.Model
	if model == nil {
		model = a.deps.Model
	}
	if model == nil {
		return nil, errors.New("agent: no model configured")
	}
	cfg := req.Config.Normalize()
	if sink == nil {
		sink = SinkFunc(func(Event) {})
	}
	now := a.deps.Now
	if now == nil {
		now = time.Now
	}
	runID := req.RunID
	if runID == "" {
		runID = a.NewRunID()
	}
	r := &runState{
		id: runID, session: req.SessionID, cfg: cfg, goal: strings.TrimSpace(req.Message),
		model: model, sink: sink, logger: a.logger().With("run", runID), now: now,
		registry: a.registry, index: a.deps.Index, related: a.deps.Related, editor: req.Editor, history: req.History, promptVersion: PromptVersion,
		overuse: planner.OveruseGuard{Max: planner.DefaultMaxPlannerOnly},
		cont:    planner.Continuation{Max: cfg.MaxPlanContinuations},
	}
	if cfg.Planner {
		r.plan = planner.NewState()
	}

	user := r.goal
	if r.session != "" && a.reviews != nil {
		if p, ok, err := a.reviews.Take(r.session); err != nil {
			r.logger.Warn("plan review store", "err", err)
		} else if ok {
			// The reply reviews the pending plan: the goal stays the one the
			// plan was made for, and the approved plan is this run's plan, so
			// it is neither paused for review again nor lost to plan_progress.
			reply := r.goal
			r.goal = p.Goal
			user = planner.FeedbackBlock(p, reply) + "\n\n" + p.Goal
			if r.plan != nil && p.Plan.Exists() {
				if _, err := r.plan.Apply(planner.WriteTodosArgs{Todos: p.Plan.Todos, Focus: p.Plan.Focus, Note: p.Plan.Note}); err != nil {
					r.logger.Warn("restore the reviewed plan", "err", err)
				}
			}
		}
	}

	r.started = now()
	// Two contexts: timeoutCtx ends with the run's timeout (its cause is
	// ErrRunTimeout) or the caller's ctx, and bounds tools; runCtx also
	// ends on Stop (cause errStopped), and bounds model calls, so a stop
	// lets a tool in flight finish.
	timeoutCtx, cancelTimeout := context.WithTimeoutCause(ctx, cfg.Timeout, ErrRunTimeout)
	defer cancelTimeout()
	runCtx, stop := context.WithCancelCause(timeoutCtx)
	defer stop(nil)
	r.stop, r.stopCtx, r.stopReq = stop, runCtx, req.Stop
	if err := a.register(r); err != nil {
		return nil, err
	}
	defer a.unregister(runID)
	if req.Stop != nil {
		finished := make(chan struct{})
		defer close(finished)
		go func() {
			select {
			case <-req.Stop:
				r.stop(errStopped)
			case <-finished:
			}
		}()
	}

	r.emit(EventRunStarted, RunStartedPayload{
		Goal: r.goal, Mode: cfg.Mode, Model: model.Name(), MaxIterations: cfg.MaxIterations, Planner: cfg.Planner,
		SessionID: r.session, Config: &cfg, History: req.History,
	}, References{PromptVersion: PromptVersion, SectionKey: "planning"})

	var res *Result
	switch cfg.Mode {
	case ModeReact:
		res = r.react(runCtx, timeoutCtx, user)
	case ModeROA:
		res = r.roa(runCtx, timeoutCtx, user)
	case ModePAR:
		res = r.par(runCtx, timeoutCtx, user)
	case ModeStaged:
		res = r.staged(runCtx, timeoutCtx, user)
	default:
		res = r.finish(StopError, "", fmt.Errorf("mode %q is not available", cfg.Mode))
	}
	if r.reviewPending && a.reviews != nil && r.plan != nil {
		err := a.reviews.Put(r.session, planner.PendingReview{RunID: r.id, Goal: r.goal, Plan: r.plan.Snapshot(), CreatedAt: now()})
		if err != nil {
			r.logger.Warn("store pending plan review", "err", err)
		}
	}
	return res, nil
}

// stopReasonOf classifies why the run's context ended: stopped (Stop, or
// the caller cancelling it) or timed out (the run's timeout, or a deadline
// of the caller's).
func stopReasonOf(runCtx context.Context) string {
	switch cause := context.Cause(runCtx); {
	case errors.Is(cause, errStopped):
		return StopStopped
	case errors.Is(cause, ErrRunTimeout), errors.Is(cause, context.DeadlineExceeded):
		return StopTimeout
	}
	return StopStopped
}

// ended finishes the run if it was stopped, cancelled or timed out, and
// returns nil otherwise; loops call it at every phase boundary.
func (r *runState) ended(runCtx context.Context) *Result {
	select {
	case <-r.stopReq: // nil when there is none: never ready
		r.stop(errStopped)
	default:
	}
	if runCtx.Err() != nil {
		return r.finish(stopReasonOf(runCtx), "", nil)
	}
	return nil
}

// failed finishes the run after a failed model call of phase: as stopped
// or timed out when that is why it failed, as an error otherwise.
func (r *runState) failed(runCtx context.Context, phase string, err error) *Result {
	if res := r.ended(runCtx); res != nil {
		return res
	}
	return r.finish(StopError, "", fmt.Errorf("%s call failed: %w", phase, err))
}

// react is the native tool-calling loop: each iteration is one model call
// plus its tool calls.
func (r *runState) react(runCtx, timeoutCtx context.Context, user string) *Result {
	system := r.preamble("") + "\n\n" + reactSystemPrompt
	if r.plan != nil {
		system += "\n\n" + planner.PromptGuidance
	}
	r.messages = buildMessages(system, r.history, user)
	r.readNamed(timeoutCtx)
	return r.loop(runCtx, timeoutCtx)
}

func (r *runState) loop(runCtx, timeoutCtx context.Context) *Result {
	tools := r.toolDefs()
	for r.iteration < r.cfg.MaxIterations {
		if res := r.ended(runCtx); res != nil {
			return res
		}
		r.iteration++
		r.emit(EventTurnStarted, TurnStartedPayload{Iteration: r.iteration}, References{})

		resp, err := r.callModel(runCtx, "act", tools)
		if err != nil {
			return r.failed(runCtx, "model", err)
		}
		text := strings.TrimSpace(resp.Content)
		if text != "" {
			r.lastText = text
		}
		if len(resp.ToolCalls) == 0 {
			if text == "" {
				return r.finish(StopError, "", errors.New("the model returned neither text nor tool calls"))
			}
			if r.plan != nil && r.cont.ShouldContinue(r.plan.Snapshot()) {
				r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content})
				msg, attempt := r.cont.Next(r.plan.Snapshot(), r.goal)
				r.messages = append(r.messages, llm.Message{Role: llm.RoleUser, Content: msg})
				r.emit(EventPlanContinuation, PlanContinuationPayload{
					Attempt: attempt, Max: r.cont.Max, Remaining: len(r.plan.Snapshot().Unfinished()), Text: firstSentence(text, 160),
				}, References{PlanID: r.planRefs, SectionKey: "planning"})
				continue
			}
			return r.finish(StopFinalAnswer, text, nil)
		}
		if r.plan != nil && text != "" {
			r.emit(EventReflectionAdded, TextPayload{Text: firstSentence(text, 160)}, References{SectionKey: "reflection"})
		}
		r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		r.runTools(timeoutCtx, resp.ToolCalls)
		if r.endReason != "" {
			return r.finish(r.endReason, "", nil)
		}
		if r.reviewPending {
			return r.finish(StopAwaitUserInput, "", nil)
		}
	}
	return r.finish(StopMaxIterations, "", nil)
}

// toolDefs lists the tools offered to the model in this run.
func (r *runState) toolDefs() []llm.ToolDef { return r.registry.Defs(r.allowed) }

// allowed reports whether the run offers the tool named name: the planner
// tools only with the planner on, request_input only where enabled, and
// nothing outside the current step's or stage's gate.
func (r *runState) allowed(name string) bool {
	if r.gate != nil && !r.gate.allow(name) {
		return false
	}
	switch name {
	case planner.ToolWriteTodos, planner.ToolPlanProgress:
		return r.plan != nil
	case ToolRequestInput:
		return r.cfg.RequestInput || r.cfg.Mode == ModeROA
	}
	if IsEditTool(name) {
		return r.editsOffered()
	}
	return true
}

// editsOffered reports whether the run offers the edit tools.
func (r *runState) editsOffered() bool { return r.cfg.AllowEdits && r.editor != nil }

// callModel makes one tool-calling model call of the react loop, streaming
// its answer text, and records it.
func (r *runState) callModel(ctx context.Context, phase string, tools []llm.ToolDef) (*llm.Response, error) {
	return r.modelCall(ctx, callSpec{phase: phase, tools: tools, stream: true,
		refs: References{PromptVersion: r.promptVersion, SectionKey: "action"},
		// A text-only reply that the continuation guard will not accept
		// as final is not shown as the answer.
		final: func(*llm.Response) bool { return r.plan == nil || !r.cont.ShouldContinue(r.plan.Snapshot()) },
	})
}

// callSpec describes one model call.
type callSpec struct {
	phase  string
	tools  []llm.ToolDef
	stream bool // stream deltas as answer text (only turns that may be the final answer)
	// final, when set, decides whether a text-only response whose text
	// was held back is the final answer and is shown.
	final     func(*llm.Response) bool
	maxTokens int
	refs      References
}

// modelCall makes one model call with r.messages and records it as
// ModelResponded.
//
// Models write a short sentence before their tool calls, and a stream
// cannot tell it from the start of a final answer. Streamed text is
// therefore held back until it is long enough to be an answer (or the turn
// ends without tool calls), so a host never shows a preamble as the answer
// and then takes it back.
func (r *runState) modelCall(ctx context.Context, c callSpec) (*llm.Response, error) {
	var held strings.Builder
	streaming := false
	var onDelta func(string)
	if c.stream {
		onDelta = func(text string) {
			if text == "" {
				return
			}
			if streaming {
				r.emit(EventAnswerDelta, TextPayload{Text: text}, References{})
				return
			}
			held.WriteString(text)
			if held.Len() >= answerHoldBytes || strings.Contains(held.String(), "\n\n") {
				streaming = true
				r.emit(EventAnswerDelta, TextPayload{Text: held.String()}, References{})
			}
		}
	}
	resp, err := r.model.Chat(ctx, llm.Request{Messages: r.messages, Tools: c.tools, MaxTokens: c.maxTokens}, onDelta)
	if err == nil && !streaming && held.Len() > 0 && len(resp.ToolCalls) == 0 && (c.final == nil || c.final(resp)) {
		r.emit(EventAnswerDelta, TextPayload{Text: held.String()}, References{})
	}
	payload := ModelRespondedPayload{Phase: c.phase, Messages: len(r.messages)}
	for _, t := range c.tools {
		payload.ToolNames = append(payload.ToolNames, t.Name)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		payload.Error = err.Error()
	} else {
		payload.Response = *resp
	}
	r.emit(EventModelResponded, payload, c.refs)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// runTools executes one turn's tool calls in order and appends their
// results to the conversation.
func (r *runState) runTools(ctx context.Context, calls []llm.ToolCall) {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	overused := r.plan != nil && r.overuse.Step(names)
	soloErr := planner.ValidateSolo(names)
	var contents []*string
	start := len(r.messages)
	for _, c := range calls {
		var out any
		var err error
		tool, known := r.registry.Get(c.Name)
		offered := known && r.allowed(c.Name)
		refs := References{ToolVersion: toolsVersion, SectionKey: "action", PlanID: r.planRefs, StepID: r.stepRef}
		if tool != nil {
			refs.ToolVersion = tool.Version
		}
		args := json.RawMessage(c.Arguments)
		if !json.Valid(args) {
			b, _ := json.Marshal(c.Arguments)
			args = b
		}
		summary := fmt.Sprintf("Calling %s", c.Name)
		if offered {
			summary = tool.Summary(json.RawMessage(c.Arguments))
		}
		// Tools see the clock pinned at their ToolInvoked timestamp, so that
		// a replay (which pins the clock to recorded timestamps) gets the
		// same getCurrentTime and getTimeRangeMs results.
		at := r.emit(EventToolInvoked, ToolInvokedPayload{CallID: c.ID, Tool: c.Name, Arguments: args, Summary: summary}, refs).Timestamp
		began := time.Now()
		switch {
		case !offered && known && r.gate != nil && !r.gate.allow(c.Name):
			err = r.gate.refuse(c.Name)
		case !offered:
			err = toolErrorf("unknown tool %q; available tools: %s", c.Name, strings.Join(r.offeredNames(), ", "))
		case overused && planner.IsPlannerTool(c.Name):
			err = toolErrorf("%s", planner.ErrOveruse)
		case c.Name == planner.ToolPlanProgress && soloErr != nil:
			err = toolErrorf("%v", soloErr)
		default:
			out, err = tool.Call(ctx, toolEnv{index: r.index, related: r.related, logger: r.logger, now: func() time.Time { return at }}, r, c.Arguments)
		}
		latency := float64(time.Since(began).Microseconds()) / 1000
		content := toolContent(out, err)
		ret := ToolReturnedPayload{CallID: c.ID, Tool: c.Name, Success: err == nil, LatencyMs: latency}
		if err != nil {
			ret.Error = err.Error()
		} else {
			ret.Output = json.RawMessage(content)
		}
		ret.Summary = fmt.Sprintf("%s failed: %s", c.Name, truncate.FirstLine(ret.Error, 120))
		if offered {
			ret.Summary = tool.Outcome(out, err)
		}
		r.emit(EventToolReturned, ret, refs)
		r.messages = append(r.messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content})
	}
	for i := start; i < len(r.messages); i++ {
		contents = append(contents, &r.messages[i].Content)
	}
	if r.plan != nil && r.plan.HasPlan() {
		planner.AppendReminder(contents, r.goal, r.plan.Render(), r.iteration, r.cfg.PlanReminderInterval)
	}
}

// toolContent renders a tool's outcome as the tool message the model sees.
func toolContent(out any, err error) string {
	if err != nil {
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return string(b)
	}
	b, mErr := json.Marshal(out)
	if mErr != nil {
		b, _ = json.Marshal(map[string]string{"error": "result could not be encoded: " + mErr.Error()})
	}
	return string(b)
}

func (r *runState) offeredNames() []string {
	var names []string
	for _, d := range r.toolDefs() {
		names = append(names, d.Name)
	}
	return names
}

// finish emits RunTerminated and builds the result.
func (r *runState) finish(reason, answer string, err error) *Result {
	if answer == "" {
		answer = r.endingNote(reason, err)
	}
	elapsed := r.now().Sub(r.started).Milliseconds()
	p := RunTerminatedPayload{StopReason: reason, Answer: answer, Iterations: r.iteration, ElapsedMs: elapsed}
	if err != nil {
		p.Error = err.Error()
	}
	r.emit(EventRunTerminated, p, References{SectionKey: "reflection"})
	res := &Result{RunID: r.id, Answer: answer, StopReason: reason, Iterations: r.iteration, ElapsedMs: elapsed}
	if err != nil {
		res.Error = err.Error()
	}
	if r.plan != nil && r.plan.HasPlan() {
		snap := r.plan.Snapshot()
		res.Plan = snap
	}
	res.Capsule = r.capsule()
	return res
}

// emit appends an event to the run's stream. Event ids are the run id and
// a sequence number, so they are stable across retries and replays.
func (r *runState) emit(typ string, payload Payload, refs References) Event {
	if refs.Namespace == "" {
		refs.Namespace = "vault-agent"
	}
	ev := Event{
		EventType: typ, Timestamp: r.now(), Actor: "vault-agent/" + r.cfg.Mode, RunID: r.id,
		Iteration: r.iteration, References: refs, Payload: payload,
	}
	if !ev.Transient() {
		r.seq++
		ev.Seq = r.seq
		ev.EventID = fmt.Sprintf("%s-%04d", r.id, r.seq)
	}
	r.sink.Emit(ev)
	return ev
}

// stopped is closed when the run is stopped or cancelled.
func (r *runState) stopped() <-chan struct{} { return r.stopCtx.Done() }
