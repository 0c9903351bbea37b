package planner

import (
	"fmt"
	"strings"
)

// Defaults of the guards (the settings maxPlanContinuations and
// planReminderInterval change the last two).
const (
	DefaultMaxPlannerOnly   = 2
	DefaultMaxContinuations = 5
	DefaultReminderInterval = 3
)

// IsPlannerTool reports whether name is write_todos or plan_progress.
func IsPlannerTool(name string) bool {
	return name == ToolWriteTodos || name == ToolPlanProgress
}

// plannerOnly reports whether an iteration made at least one call and only
// planner calls.
func plannerOnly(names []string) bool {
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !IsPlannerTool(n) {
			return false
		}
	}
	return true
}

// OveruseGuard caps consecutive planner-only iterations: an
// iteration whose tool calls are all write_todos/plan_progress is
// planner-only. At most Max (default 2) such iterations in a row run; from the
// next one on, until the model makes a non-planner call, its planner calls are
// not executed and each gets the tool error ErrOveruse.
//
// The loop calls Step once per iteration, with the names of the iteration's
// tool calls, before executing them:
//
//	if guard.Step(names) { /* answer every planner call with ErrOveruse */ }
//
// An iteration with a non-planner call resets the count (its planner calls
// run normally). An iteration without tool calls (a text answer) neither
// counts nor resets. Blocked iterations still count, so the guard stays shut
// until the model acts.
//
// One guard per run, used from the run's goroutine; not safe for concurrent
// use.
type OveruseGuard struct {
	// Max is the number of consecutive planner-only iterations allowed;
	// 0 means DefaultMaxPlannerOnly.
	Max int

	consecutive int
}

func (g *OveruseGuard) max() int {
	if g.Max <= 0 {
		return DefaultMaxPlannerOnly
	}
	return g.Max
}

// Check reports, without recording anything, whether an iteration with these
// tool calls would be blocked.
func (g *OveruseGuard) Check(names []string) (blocked bool) {
	return plannerOnly(names) && g.consecutive >= g.max()
}

// Observe records an iteration's tool calls.
func (g *OveruseGuard) Observe(names []string) {
	switch {
	case len(names) == 0:
	case plannerOnly(names):
		g.consecutive++
	default:
		g.consecutive = 0
	}
}

// Step is Check followed by Observe: the one call per iteration.
func (g *OveruseGuard) Step(names []string) (blocked bool) {
	blocked = g.Check(names)
	g.Observe(names)
	return blocked
}

// Consecutive returns the current count of consecutive planner-only
// iterations.
func (g *OveruseGuard) Consecutive() int { return g.consecutive }

// Continuation is the plan-aware termination guard.
// When the model answers with text and no tool calls, the loop asks
// ShouldContinue; if true, it records the text as a progress report, injects
// the message from Next as one user message, emits a PlanContinuation event
// with the returned attempt, and runs another iteration instead of
// finalizing.
//
// At most Max continuations are made per plan revision; the count resets
// when a new revision arrives (write_todos changed the plan). plan_progress
// does not make revisions, so it does not reset the count.
//
// One per run, used from the run's goroutine; not safe for concurrent use.
type Continuation struct {
	// Max is the number of continuations per plan revision; 0 means
	// DefaultMaxContinuations, negative disables the guard.
	Max int

	revision int
	attempts int
}

func (c *Continuation) max() int {
	if c.Max == 0 {
		return DefaultMaxContinuations
	}
	return c.Max
}

// sync resets the attempt count when the plan has a new revision.
func (c *Continuation) sync(plan Plan) {
	if plan.Revision != c.revision {
		c.revision = plan.Revision
		c.attempts = 0
	}
}

// ShouldContinue reports whether a text-only answer must not end the run:
// the plan has 2 or more todos, not all completed, is not marked completed,
// and fewer than Max continuations were made for its revision. A simple plan
// (one todo) or no plan never continues.
func (c *Continuation) ShouldContinue(plan Plan) bool {
	c.sync(plan)
	return len(plan.Todos) >= 2 && !plan.AllDone() && c.attempts < c.max()
}

// Attempts returns the continuations made for the current revision.
func (c *Continuation) Attempts() int { return c.attempts }

// Next counts one continuation and returns its message and the attempt
// number (1-based, per revision). Call it after ShouldContinue returned true.
// goal is the user's request; an empty goal is left out.
func (c *Continuation) Next(plan Plan, goal string) (message string, attempt int) {
	c.sync(plan)
	c.attempts++
	return ContinuationMessage(plan, goal), c.attempts
}

// ContinuationMessage builds the continuation message:
//
//	<plan-continuation>
//	You stopped before finishing your plan. Your last message was kept as a progress report.
//
//	Goal:
//	...
//
//	Your plan:
//	...rendered plan...
//
//	Continue with the next unfinished step: ... (id: ...). If every step is
//	done, call plan_progress with plan_status="completed", then give the final answer.
//	</plan-continuation>
func ContinuationMessage(plan Plan, goal string) string {
	var b strings.Builder
	b.WriteString("<" + TagContinuation + ">\n")
	b.WriteString("You stopped before finishing your plan. Your last message was kept as a progress report.\n\n")
	if g := strings.TrimSpace(goal); g != "" {
		b.WriteString("Goal:\n" + g + "\n\n")
	}
	b.WriteString("Your plan:\n" + plan.Render() + "\n\n")
	if u := plan.Unfinished(); len(u) > 0 {
		fmt.Fprintf(&b, "Continue with the next unfinished step: %s (id: %s). ", u[0].Content, u[0].ID)
	} else {
		b.WriteString("Continue with the next unfinished step. ")
	}
	b.WriteString(`If every step is done, call plan_progress with plan_status="completed", then give the final answer.` + "\n")
	b.WriteString("</" + TagContinuation + ">")
	return b.String()
}
