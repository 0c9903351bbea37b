package reasoning

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/planner"
)

// Observer turns a run's agent events into reasoning steps on a Block and
// publishes the host message whenever it changed. It satisfies agent.Sink
// and is only a view: it never calls back into the agent.
//
// Emit is meant to be called from the run's goroutine; it is nevertheless
// safe against concurrent Emit calls and against the timer goroutine.
// Publish calls never overlap and always carry the newest content.
type Observer struct {
	cfg   Config
	block *Block

	pubMu      sync.Mutex // serializes Publish; guards the fields below
	last       string     // the content last published
	lastMarker string     // its marker
	lastSent   time.Time  // when (Config.Now)
	pending    bool       // an answer update is held back (AnswerInterval)
	flush      *time.Timer
	pubStopped bool // Stop was called: nothing is published after it

	mu            sync.Mutex // serializes event application; guards the fields below
	streamed      bool       // answer deltas arrived that no later event disowned
	terminated    bool
	continuations int
	maxIterations int
	reviewPending bool

	finished   chan struct{} // closed when the run terminated
	finishOnce sync.Once

	tickMu  sync.Mutex // guards the timer fields below
	started bool
	stop    chan struct{}
	done    chan struct{}
}

var _ agent.Sink = (*Observer)(nil)

// NewObserver returns an Observer over a new Block built from cfg.
func NewObserver(cfg Config) *Observer {
	cfg = cfg.withDefaults()
	return &Observer{cfg: cfg, block: New(cfg), finished: make(chan struct{})}
}

// Block returns the block the Observer drives.
func (o *Observer) Block() *Block { return o.block }

// Content returns the current host message.
func (o *Observer) Content() string { return o.block.Content() }

// Start runs the timer goroutine: while the block is reasoning, every tick
// re-renders the content and publishes it if the elapsed second changed.
// The goroutine ends on Stop, when ctx is done, when the run terminates or
// when an injected Ticks channel is closed. Start is effective once.
func (o *Observer) Start(ctx context.Context) {
	o.tickMu.Lock()
	defer o.tickMu.Unlock()
	if o.started {
		return
	}
	o.started = true
	ticks := o.cfg.Ticks
	var stopTicker func()
	if ticks == nil {
		t := time.NewTicker(o.cfg.Tick)
		ticks, stopTicker = t.C, t.Stop
	}
	o.stop = make(chan struct{})
	o.done = make(chan struct{})
	go o.loop(ctx, ticks, stopTicker, o.stop, o.done)
}

func (o *Observer) loop(ctx context.Context, ticks <-chan time.Time, stopTicker func(), stop, done chan struct{}) {
	defer close(done)
	if stopTicker != nil {
		defer stopTicker()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-o.finished:
			return
		case _, ok := <-ticks:
			if !ok {
				return
			}
			if o.block.Status() == StatusReasoning {
				o.publish()
			}
		}
	}
}

// Stop ends the timer goroutine and waits for it to exit, publishes an
// answer update still held back (AnswerInterval), and publishes nothing
// after it. It is safe to call more than once, and without Start.
func (o *Observer) Stop() {
	o.tickMu.Lock()
	stop, done := o.stop, o.done
	if stop != nil {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}
	o.tickMu.Unlock()
	if done != nil {
		<-done
	}
	// An answer update still held back goes out now: the last content
	// published is always the newest.
	o.pubMu.Lock()
	if o.pending {
		o.publishLocked(true)
	}
	if o.flush != nil {
		o.flush.Stop()
		o.flush = nil
	}
	o.pubStopped = true
	o.pubMu.Unlock()
}

// publish sends the content if it changed since the last publish, holding
// back a change of the answer alone within AnswerInterval of the previous
// publish (a timer sends the newest content at the end of the interval).
// Rendering happens under pubMu so a slower caller can never publish stale
// content after a newer one.
func (o *Observer) publish() {
	o.pubMu.Lock()
	defer o.pubMu.Unlock()
	o.publishLocked(false)
}

func (o *Observer) publishLocked(now bool) {
	if o.pubStopped {
		return
	}
	c, m := o.block.contentAndMarker()
	if c == o.last {
		o.pending = false
		return
	}
	if iv := o.cfg.AnswerInterval; iv > 0 && !now && o.last != "" && m == o.lastMarker {
		if wait := iv - o.cfg.Now().Sub(o.lastSent); wait > 0 {
			o.pending = true
			if o.flush == nil {
				o.flush = time.AfterFunc(wait, o.flushPending)
			}
			return
		}
	}
	o.last, o.lastMarker, o.lastSent, o.pending = c, m, o.cfg.Now(), false
	if o.flush != nil {
		o.flush.Stop()
		o.flush = nil
	}
	if o.cfg.Publish != nil {
		o.cfg.Publish(c)
	}
}

// flushPending publishes an answer update held back by publish.
func (o *Observer) flushPending() {
	o.pubMu.Lock()
	defer o.pubMu.Unlock()
	o.flush = nil
	if o.pending {
		o.publishLocked(true)
	}
}

// Emit applies one event, reports new steps to OnStep, and publishes the
// content if it changed. Events after RunTerminated are ignored.
func (o *Observer) Emit(ev agent.Event) {
	o.mu.Lock()
	steps, completed := o.apply(ev)
	o.mu.Unlock()
	if o.cfg.OnStep != nil {
		for _, s := range steps {
			o.cfg.OnStep(s)
		}
	}
	o.publish()
	if completed && o.cfg.OnComplete != nil {
		o.cfg.OnComplete(o.block.Elapsed())
	}
}

// apply updates the block for ev and returns the steps it added and whether
// the run just terminated. Called with o.mu held.
func (o *Observer) apply(ev agent.Event) (steps []string, completed bool) {
	if o.terminated {
		return nil, false
	}
	add := func(s string) {
		if s = o.block.AddStep(s); s != "" {
			steps = append(steps, s)
		}
	}
	switch ev.EventType {
	case agent.EventRunStarted:
		if p, ok := ev.Payload.(agent.RunStartedPayload); ok {
			o.maxIterations = p.MaxIterations
		}
		o.block.Start(time.Time{})

	case agent.EventTurnStarted:
		// A new turn means text streamed in the previous one was not final.
		o.discard()

	case agent.EventModelResponded:
		// Deltas stream before the model's response is known to carry tool
		// calls. When it does (or it was a reason/plan phase), the streamed
		// text was thinking-out-loud, not the final answer: drop it and go
		// back to reasoning. The authoritative answer arrives with
		// RunTerminated anyway.
		p, _ := ev.Payload.(agent.ModelRespondedPayload)
		if len(p.Response.ToolCalls) > 0 || p.Phase == "reason" || p.Phase == "plan" {
			o.discard()
		}

	case agent.EventAnswerDelta:
		p, _ := ev.Payload.(agent.TextPayload)
		if p.Text != "" {
			o.streamed = true
			o.block.AppendAnswer(p.Text)
		}

	case agent.EventToolInvoked:
		o.discard()
		p, _ := ev.Payload.(agent.ToolInvokedPayload)
		// Planner tools are orchestration, not actions: their successful
		// calls show up as [Plan] steps (from PlanAuthored/PlanUpdated).
		if planner.IsPlannerTool(p.Tool) {
			break
		}
		s := p.Summary
		if strings.TrimSpace(s) == "" {
			s = "Calling " + p.Tool
		}
		add(o.tag("Act", s))

	case agent.EventToolReturned:
		p, _ := ev.Payload.(agent.ToolReturnedPayload)
		// Failed planner calls stay visible: no [Plan] step would show them.
		if planner.IsPlannerTool(p.Tool) && p.Success {
			break
		}
		s := p.Summary
		if strings.TrimSpace(s) == "" {
			if p.Success {
				s = "Completed " + p.Tool
			} else {
				s = p.Tool + " failed: " + orDefault(p.Error, "unknown error")
			}
		}
		add(o.tag("Obs", s))

	case agent.EventPlanAuthored, agent.EventPlanUpdated:
		o.continuations = 0
		p, _ := ev.Payload.(agent.PlanPayload)
		s := p.Summary
		if strings.TrimSpace(s) == "" {
			s = planFallback(p)
		}
		add(o.tag("Plan", s))

	case agent.EventReflectionAdded:
		if !o.cfg.Planner {
			break
		}
		p, _ := ev.Payload.(agent.TextPayload)
		const tag = "[Reflect] "
		if s := FirstSentence(p.Text, o.cfg.MaxStepLen-len(tag)); s != "" {
			add(tag + s)
		}

	case agent.EventReasonEmitted:
		p, _ := ev.Payload.(agent.TextPayload)
		add(FirstSentence(controlText(p, "plan"), o.cfg.MaxStepLen))

	case agent.EventObserveEmitted:
		p, _ := ev.Payload.(agent.TextPayload)
		add(FirstSentence(controlText(p, "observation"), o.cfg.MaxStepLen))

	case agent.EventPlanContinuation:
		// The text answer was held back because the plan is unfinished.
		o.discard()
		o.continuations++
		p, _ := ev.Payload.(agent.PlanContinuationPayload)
		k, limit := p.Attempt, p.Max
		if k <= 0 {
			k = o.continuations
		}
		if limit <= 0 {
			limit = planner.DefaultMaxContinuations
		}
		add(fmt.Sprintf("Plan not finished; continuing (%d/%d)", k, limit))

	case agent.EventPlanReviewPending:
		o.reviewPending = true
		add(o.tag("Plan", "Plan ready for your review"))

	case agent.EventInputRequested:
		p, _ := ev.Payload.(agent.TextPayload)
		q := p.Text
		if q == "" {
			q, _ = p.Control["question"].(string)
		}
		add("Waiting for your input: " + orDefault(q, "(no question)"))

	case agent.EventInputReceived:
		add("Received your input")

	case agent.EventInputTimeout:
		add("No input received in time")

	case agent.EventStageStarted:
		p, _ := ev.Payload.(agent.StagePayload)
		s := "Stage: " + orDefault(p.Stage, "(unnamed)")
		if p.Attempt > 1 {
			s += fmt.Sprintf(" (attempt %d)", p.Attempt)
		}
		add(s)

	case agent.EventStageCompleted:
		p, _ := ev.Payload.(agent.StagePayload)
		if p.Outcome != "" && p.Outcome != "ok" {
			s := fmt.Sprintf("Stage %s: %s", p.Stage, p.Outcome)
			if p.Error != "" {
				s += " (" + p.Error + ")"
			}
			add(s)
		}

	case agent.EventRunTerminated:
		p, _ := ev.Payload.(agent.RunTerminatedPayload)
		if p.Answer != "" {
			// The payload's answer is authoritative over streamed text.
			o.block.SetAnswer(p.Answer)
		}
		o.block.Complete(o.endingNote(p))
		o.terminated = true
		o.finishOnce.Do(func() { close(o.finished) })
		completed = true
	}
	return steps, completed
}

// discard drops streamed answer text that turned out not to be final.
func (o *Observer) discard() {
	if o.streamed {
		o.block.DiscardAnswer()
		o.streamed = false
	}
}

// tag prefixes a step with its phase when the planner is on.
func (o *Observer) tag(phase, s string) string {
	if !o.cfg.Planner {
		return s
	}
	return "[" + phase + "] " + s
}

// endingNote says how a run that did not end with a final answer ended.
func (o *Observer) endingNote(p agent.RunTerminatedPayload) string {
	switch p.StopReason {
	case agent.StopFinalAnswer:
		return ""
	case agent.StopStopped:
		return "Stopped by user."
	case agent.StopMaxIterations:
		n := o.maxIterations
		if n <= 0 {
			n = p.Iterations
		}
		if n <= 0 {
			return "Reached the maximum number of iterations."
		}
		return fmt.Sprintf("Reached the maximum of %d iterations.", n)
	case agent.StopTimeout:
		d := time.Duration(p.ElapsedMs) * time.Millisecond
		if d <= 0 {
			d = time.Duration(o.block.Elapsed()) * time.Second
		}
		if d = d.Round(time.Second); d <= 0 {
			return "Timed out."
		}
		return fmt.Sprintf("Timed out after %s.", d)
	case agent.StopAwaitUserInput:
		if o.reviewPending {
			return "Waiting for your review of the plan."
		}
		return "Waiting for your input."
	case agent.StopError:
		return "Error: " + truncate.Runes(collapseSpace(orDefault(p.Error, "unknown error")), 1000)
	case "":
		return "Stopped."
	default:
		return "Stopped (" + p.StopReason + ")."
	}
}

func planFallback(p agent.PlanPayload) string {
	done := 0
	for _, t := range p.Todos {
		if t.Status == "completed" {
			done++
		}
	}
	s := fmt.Sprintf("Plan r%d: %d/%d done", p.Revision, done, len(p.Todos))
	for _, t := range p.Todos {
		if t.Status == "in_progress" {
			s += " · now: " + t.Content
			break
		}
	}
	return s
}

// controlText prefers a string (or list of strings) under key in the roa
// control block over the raw text, which may be the JSON block itself.
func controlText(p agent.TextPayload, key string) string {
	switch v := p.Control[key].(type) {
	case string:
		if strings.TrimSpace(v) != "" {
			return v
		}
	case []any:
		var parts []string
		for _, x := range v {
			if s, ok := x.(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "; ")
		}
	}
	return p.Text
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
