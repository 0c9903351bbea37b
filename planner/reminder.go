package planner

import "strings"

// reminderOpen starts every reminder; its presence marks a message as
// already reminded.
const reminderOpen = "<" + TagReminder + ">"

// ReminderDue reports whether the loop iteration with this index (as the
// loop counts them; index 0 never gets one) gets the goal+plan reminder: iteration > 0 and a multiple of
// interval (interval <= 0 means DefaultReminderInterval).
func ReminderDue(iteration, interval int) bool {
	if interval <= 0 {
		interval = DefaultReminderInterval
	}
	return iteration > 0 && iteration%interval == 0
}

// Reminder builds the goal+plan reminder text.
func Reminder(goal, plan string) string {
	return reminderOpen + "\nReminder of your goal and plan. Stay on it: execute the next unfinished step.\n\nGoal:\n" +
		strings.TrimSpace(goal) + "\n\nPlan:\n" + strings.TrimSpace(plan) + "\n</" + TagReminder + ">"
}

// AppendReminder adds the goal and plan reminder. contents point at the
// contents of the tool result messages of one iteration's batch, in order.
// When ReminderDue(iteration, interval) and both goal and plan (the rendered
// plan, e.g. Plan.Render) are non-blank, it appends the reminder once, to the
// LAST message only, separated by a blank line (or as the whole content when
// that message is blank). It never appends twice to the same message. It
// reports whether it appended.
//
// The agent calls it after executing an iteration's tools, before adding the
// tool messages to the conversation:
//
//	ptrs := make([]*string, len(toolMsgs))
//	for i := range toolMsgs { ptrs[i] = &toolMsgs[i].Content }
//	planner.AppendReminder(ptrs, goal, state.Render(), iteration, interval)
//
// Text-only iterations have no tool messages; the Continuation guard covers
// them.
func AppendReminder(contents []*string, goal, plan string, iteration, interval int) bool {
	if len(contents) == 0 || !ReminderDue(iteration, interval) {
		return false
	}
	if strings.TrimSpace(goal) == "" || strings.TrimSpace(plan) == "" {
		return false
	}
	last := contents[len(contents)-1]
	if last == nil || strings.Contains(*last, reminderOpen) {
		return false
	}
	r := Reminder(goal, plan)
	if body := strings.TrimSpace(*last); body == "" {
		*last = r
	} else {
		*last = body + "\n\n" + r
	}
	return true
}
