package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/planner"
)

// Questions about the person's own tasks ("what's still open from last
// week?", "my unfinished tasks about the launch"): the tasks are listed
// with listTasks (in the period the question names, about its other
// words) and the answer lists them, each with its note. A question about
// tasks in general ("how do I sort tasks?") is searched as any other.

var (
	// reTaskQuestion matches a question about one's own tasks.
	reTaskQuestion = regexp.MustCompile(`(?i)\b(?:my|our)\s+(?:\w+\s+){0,2}(?:tasks?|to-?dos?|action items?)\b|` +
		`\b(?:open|unfinished|outstanding|pending|incomplete|remaining|overdue|undone|completed|finished|done|checked)\s+(?:tasks?|to-?dos?|action items?|items)\b|` +
		`\b(?:what'?s|what is|what are|anything)\s+(?:still\s+)?(?:open|left(?:\s+to\s+do)?|outstanding|pending|due|overdue|unfinished)\b|` +
		`\bstill\s+(?:open|to\s+do|pending|outstanding|unfinished)\b|` +
		`\bwhat\s+(?:do|did|should)\s+(?:i|we)\s+(?:still\s+)?(?:have|need)\s+to\s+do\b|` +
		`\btasks?\s+(?:that\s+are\s+|which\s+are\s+)?(?:still\s+)?(?:open|due|left|pending|overdue|done|completed|finished)\b`)
	// reHowTo marks a question about how to do something, which is
	// searched even when it speaks of tasks.
	reHowTo = regexp.MustCompile(`(?i)^\s*(?:how\b|is there\b|can i\b|which plugin|what plugin|why\b)`)
	// reDoneTasks asks for the tasks done rather than open.
	reDoneTasks = regexp.MustCompile(`(?i)\b(?:completed|finished|done|checked off|ticked off|closed)\b`)
	// rePreposition starts a time expression that says how it relates
	// ("from last week", "in March").
	rePreposition = regexp.MustCompile(`(?i)^(?:from|in|on|during|since|between|over|before|after|until|this|today|yesterday)\b`)
	reOpenTasks   = regexp.MustCompile(`(?i)\b(?:open|still|unfinished|outstanding|pending|left|remaining|overdue|not\s+done|undone|incomplete)\b`)
)

// taskWords are the words of a task question that say nothing of which
// tasks: what remains is the topic the tasks must mention.
var taskWords = toSet(`task tasks todo todos to-do to-dos item items action open still unfinished outstanding pending incomplete
remaining left overdue undone completed finished done checked closed ticked off due what's whats have need list show any anything
something everything`)

// maxTasksListed caps the tasks an answer lists.
const maxTasksListed = 15

// taskList is the last listTasks result.
type taskList struct {
	text  string // the text filter it was called with
	tasks []agent.TaskItem
	total int
}

// taskQuestion reports whether the goal asks about the person's tasks,
// and listTasks can answer it.
func (st *convState) taskQuestion() bool {
	return st.available(agent.ToolListTasks) && !reHowTo.MatchString(st.goal) && reTaskQuestion.MatchString(st.goal)
}

// taskStatus is the status the goal asks for.
func (st *convState) taskStatus() string {
	if reDoneTasks.MatchString(st.goal) && !reOpenTasks.MatchString(st.goal) {
		return "done"
	}
	return "open"
}

// taskTopic is the goal's topic for a task listing: its keywords that are
// not about tasks, joined by OR (a task needs one of them).
func (st *convState) taskTopic() string {
	var words []string
	for _, w := range st.terms.all() {
		if !taskWords[w] && !timeFillers[w] {
			words = append(words, w)
		}
	}
	return strings.Join(words, " OR ")
}

// taskStep is the next step of a task question: listTasks about the topic
// (in the period named, once its range is known), again without the topic
// when no task mentions it, then the plan closed and the answer; false
// when the goal is not about tasks (or its period is still to be worked
// out).
func (st *convState) taskStep() (step, bool) {
	if !st.taskQuestion() || st.timeExpr != "" && st.timeRange == nil && !st.timeCalled {
		return step{}, false
	}
	if s, ok := st.listTasksStep(); ok {
		return s, true
	}
	if st.tasks == nil {
		return step{}, false
	}
	return st.listedStep("tasks", fmt.Sprintf("Listed %s.", plural(st.tasks.total, "task"))), true
}

// listedStep is the step after a listing (of what) that answers the goal:
// an open plan closed with summary, then the answer.
func (st *convState) listedStep(what, summary string) step {
	if st.planActive && st.available(planner.ToolPlanProgress) && !st.planDone {
		return callStep("The "+what+" are listed; closing the plan before answering.", planner.ToolPlanProgress, map[string]any{
			"step_id": "search", "step_summary": summary, "plan_status": "completed"})
	}
	return step{final: true, text: "Answering from the " + what + " listed."}
}

// listTasksStep is the listTasks call still to make, if any.
func (st *convState) listTasksStep() (step, bool) {
	args := map[string]any{"status": st.taskStatus()}
	if st.timeRange != nil {
		args["timeRange"] = map[string]any{"startTime": st.timeRange.StartTime, "endTime": st.timeRange.EndTime}
	}
	topic := st.taskTopic()
	switch {
	case st.tasks == nil && topic != "":
		args["text"] = topic
	case st.tasks == nil:
	case st.tasks.total == 0 && st.tasks.text != "":
		// No task mentions the topic: the tasks of the period, or all.
	default:
		return step{}, false
	}
	what := args["status"].(string) + " tasks"
	if t, ok := args["text"].(string); ok {
		what += " about " + strings.ReplaceAll(t, " OR ", " or ")
	}
	if st.timeExpr != "" {
		what += " " + st.timeExpr
		if !rePreposition.MatchString(st.timeExpr) {
			what = strings.TrimSuffix(what, st.timeExpr) + "from " + st.timeExpr
		}
	}
	return callStep("Listing the "+what+".", agent.ToolListTasks, args), true
}

// noteTasks records a listTasks result.
func (st *convState) noteTasks(args, content string, failed bool) {
	var a struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	rec := &taskList{text: a.Text}
	var r agent.ListTasksResult
	if !failed && json.Unmarshal([]byte(content), &r) == nil {
		rec.tasks, rec.total = r.Tasks, max(r.Total, len(r.Tasks))
	}
	st.tasks = rec
}

// taskAnswer lists the tasks found, each with its note; false when the
// goal was not answered by a task listing.
func (st *convState) taskAnswer() (string, bool) {
	if st.tasks == nil || !st.taskQuestion() {
		return "", false
	}
	status := st.taskStatus()
	period := ""
	if st.timeExpr != "" {
		period = " " + st.timeExpr
		if !rePreposition.MatchString(st.timeExpr) {
			period = " from " + st.timeExpr
		}
		if st.timeRange != nil && st.timeRange.Description != "" && !strings.ContainsAny(st.timeExpr, "0123456789") {
			period += " (" + st.timeRange.Description + ")"
		}
	}
	topic := st.taskTopic()
	var b strings.Builder
	if st.tasks.total == 0 {
		fmt.Fprintf(&b, "I found no %s tasks%s in your notes", status, period)
		if topic != "" {
			fmt.Fprintf(&b, " about %s", joinOr(strings.Split(topic, " OR ")))
		}
		b.WriteString(".")
		return b.String(), true
	}
	if topic != "" && st.tasks.text == "" {
		fmt.Fprintf(&b, "No %s task mentions %s; these are all the %s tasks%s.\n\n", status, joinOr(strings.Split(topic, " OR ")), status, period)
	} else {
		about := ""
		if st.tasks.text != "" {
			about = " about " + joinOr(strings.Split(st.tasks.text, " OR "))
		}
		fmt.Fprintf(&b, "You have %s%s%s:\n\n", plural(st.tasks.total, status+" task"), about, period)
	}
	var cited []string
	seen := map[string]bool{}
	for i, t := range st.tasks.tasks {
		if i == maxTasksListed {
			break
		}
		box := " "
		if t.Done {
			box = "x"
		}
		c := "[[" + noteName(t.Path) + "]]"
		fmt.Fprintf(&b, "- [%s] %s %s (line %d", box, t.Text, c, t.Line)
		if t.Due != "" {
			fmt.Fprintf(&b, ", due %s", t.Due)
		}
		b.WriteString(")\n")
		if !seen[c] {
			seen[c] = true
			cited = append(cited, c)
		}
	}
	if more := st.tasks.total - min(len(st.tasks.tasks), maxTasksListed); more > 0 {
		fmt.Fprintf(&b, "- and %s more\n", plural(more, "task"))
	}
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	return b.String(), true
}
