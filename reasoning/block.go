package reasoning

import (
	"strings"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/internal/truncate"
)

// Defaults of Config.
const (
	DefaultWindow     = 2
	DefaultTick       = 100 * time.Millisecond
	DefaultMaxStepLen = 160
)

// Config configures a Block and the Observer that drives it. Zero values
// take the defaults.
type Config struct {
	// Window is how many of the latest steps the marker shows while
	// reasoning (default 2). Collapsed and complete blocks show all steps.
	Window int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Tick is the Observer's timer period while reasoning (default 100ms).
	Tick time.Duration
	// Planner turns on the phase tags [Plan] [Act] [Obs] [Reflect].
	Planner bool
	// MaxStepLen caps a step in runes (default 160); longer steps end in "…".
	MaxStepLen int

	// Publish receives the whole host message (marker + answer so far)
	// whenever it changed since the previous call. Calls never overlap; they
	// come from Emit (the run's goroutine) or the timer goroutine, so
	// Publish must not block for long.
	Publish func(content string)
	// OnStep receives every new step as it is added (the CLI prints it).
	OnStep func(step string)
	// OnComplete is called once when the run terminates, with the final
	// elapsed seconds.
	OnComplete func(elapsedSeconds int)
	// Ticks, when set, replaces the Observer's time.Ticker (for tests and
	// for hosts that already own a timer).
	Ticks <-chan time.Time
	// AnswerInterval, when positive, coalesces the Observer's answer
	// updates: a change of the answer alone (the marker unchanged) is
	// published at most once per interval, the newest content at the end of
	// it; a change of the marker (a step, the status, the elapsed second)
	// and the run's end are published at once, with the answer so far. Zero
	// publishes every change.
	AnswerInterval time.Duration
}

func (c Config) withDefaults() Config {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.MaxStepLen <= 0 {
		c.MaxStepLen = DefaultMaxStepLen
	}
	return c
}

// Block is the reasoning block state machine:
// idle -> reasoning -> collapsed -> complete.
//
// Elapsed seconds count from Start while reasoning, freeze when the block
// collapses (the "Thought for N s" figure) or completes, and never decrease,
// even if the clock steps back. A Block is safe for concurrent use.
type Block struct {
	window  int
	maxStep int
	now     func() time.Time

	mu      sync.Mutex
	status  Status
	start   time.Time
	elapsed int
	steps   []string
	answer  strings.Builder
	note    string
}

// New returns an idle Block.
func New(cfg Config) *Block {
	cfg = cfg.withDefaults()
	return &Block{window: cfg.Window, maxStep: cfg.MaxStepLen, now: cfg.Now, status: StatusIdle}
}

// Start moves an idle block to reasoning with its timer starting at now (the
// zero time means the configured clock's now). It does nothing otherwise.
func (b *Block) Start(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.startLocked(now)
}

func (b *Block) startLocked(now time.Time) {
	if b.status != StatusIdle {
		return
	}
	if now.IsZero() {
		now = b.now()
	}
	b.start = now
	b.status = StatusReasoning
}

// AddStep appends a step to the history, starting an idle block. The step is
// collapsed to one line, loses control characters (so terminal escapes in
// tool or model text cannot reach the CLI) and is capped at MaxStepLen runes; the stored text is
// returned, or "" when the step was empty and nothing was added.
func (b *Block) AddStep(s string) string {
	s = truncate.Runes(cleanStep(s), b.maxStep)
	if s == "" {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.startLocked(time.Time{})
	b.steps = append(b.steps, s)
	return s
}

// Collapse marks the start of the final answer: reasoning (or idle) becomes
// collapsed and elapsed freezes. Collapsed and complete blocks are unchanged.
func (b *Block) Collapse() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.collapseLocked()
}

func (b *Block) collapseLocked() {
	switch b.status {
	case StatusIdle:
		b.startLocked(time.Time{})
		fallthrough
	case StatusReasoning:
		b.elapsedLocked()
		b.status = StatusCollapsed
	}
}

// AppendAnswer appends streamed answer text, collapsing the block first if
// it is still idle or reasoning.
func (b *Block) AppendAnswer(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.collapseLocked()
	b.answer.WriteString(text)
}

// SetAnswer replaces the answer text, collapsing the block first if it is
// still idle or reasoning.
func (b *Block) SetAnswer(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.collapseLocked()
	b.answer.Reset()
	b.answer.WriteString(text)
}

// DiscardAnswer drops answer text that turned out not to be the final answer
// (the model went on to call tools) and returns a collapsed block to
// reasoning; the timer resumes from the original start. A complete block is
// unchanged.
func (b *Block) DiscardAnswer() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == StatusComplete {
		return
	}
	b.answer.Reset()
	if b.status == StatusCollapsed {
		b.status = StatusReasoning
	}
}

// Complete ends the block. note, if not empty, says how the run ended when
// that was not a normal final answer ("Stopped by user."); it follows the
// answer in Content. Completing twice keeps the first note unless the new
// one is not empty.
func (b *Block) Complete(note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == StatusIdle {
		b.startLocked(time.Time{})
	}
	if b.status == StatusReasoning {
		b.elapsedLocked()
	}
	b.status = StatusComplete
	if note = strings.TrimSpace(note); note != "" {
		b.note = note
	}
}

// Status returns the current state.
func (b *Block) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// Elapsed returns the whole seconds shown by the timer.
func (b *Block) Elapsed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.elapsedLocked()
}

// elapsedLocked refreshes the elapsed seconds while reasoning (never
// decreasing) and returns them.
func (b *Block) elapsedLocked() int {
	if b.status == StatusReasoning {
		if e := int(b.now().Sub(b.start) / time.Second); e > b.elapsed {
			b.elapsed = e
		}
	}
	return b.elapsed
}

// Steps returns a copy of the full step history.
func (b *Block) Steps() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.steps...)
}

// Answer returns the answer text so far.
func (b *Block) Answer() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.answer.String()
}

// Marker returns the marker alone ("" while idle): the last Window steps
// while reasoning, the full history once collapsed or complete.
func (b *Block) Marker() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.markerLocked()
}

func (b *Block) markerLocked() string {
	steps := b.steps
	if b.status == StatusReasoning && len(steps) > b.window {
		steps = steps[len(steps)-b.window:]
	}
	return Serialize(b.status, b.elapsedLocked(), steps)
}

// Content returns the whole host message: the marker, then "\n\n" and the
// answer so far and/or the ending note when there is any. An idle block's
// content is "".
func (b *Block) Content() string {
	c, _ := b.contentAndMarker()
	return c
}

// contentAndMarker returns Content and Marker as of the same moment.
func (b *Block) contentAndMarker() (content, marker string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == StatusIdle {
		return "", ""
	}
	var parts []string
	// Leading newlines of the model's answer would only widen the gap
	// after the marker.
	if a := strings.TrimLeft(b.answer.String(), "\r\n"); strings.TrimSpace(a) != "" {
		parts = append(parts, a)
	}
	if b.note != "" {
		parts = append(parts, b.note)
	}
	m := b.markerLocked()
	if len(parts) == 0 {
		return m, m
	}
	return m + "\n\n" + strings.Join(parts, "\n\n"), m
}
