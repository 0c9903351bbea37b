package reasoning

import (
	"fmt"
	"io"
	"sync"
)

// LinePrinter is the terminal view of a run for the CLI: each new step as
// one line "  • step" as it happens, then "Thought for Ns". Wire it through
// Config.OnStep and Config.OnComplete:
//
//	lp := reasoning.NewLinePrinter(os.Stderr)
//	obs := reasoning.NewObserver(reasoning.Config{OnStep: lp.Step, OnComplete: lp.Done})
//
// Steps arrive already single-line and free of control characters (see
// Block.AddStep). Write errors are ignored: the terminal is best effort.
// LinePrinter is safe for concurrent use.
type LinePrinter struct {
	mu sync.Mutex // serializes writes to w
	w  io.Writer
}

// NewLinePrinter returns a LinePrinter writing to w (the CLI's stderr).
func NewLinePrinter(w io.Writer) *LinePrinter { return &LinePrinter{w: w} }

// Step prints one step line.
func (p *LinePrinter) Step(step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "  • %s\n", cleanStep(step))
}

// Done prints the closing "Thought for Ns" line.
func (p *LinePrinter) Done(elapsedSeconds int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "Thought for %s\n", FormatElapsed(elapsedSeconds))
}

// FormatElapsed renders seconds the way the host's block does: "9s",
// "1m 5s".
func FormatElapsed(seconds int) string {
	if seconds < 0 {
		seconds = 0
	}
	if seconds < 60 {
		return fmt.Sprintf("%ds", seconds)
	}
	return fmt.Sprintf("%dm %ds", seconds/60, seconds%60)
}
