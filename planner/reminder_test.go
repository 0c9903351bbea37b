package planner

import (
	"strings"
	"testing"
)

func batch(contents ...string) []*string {
	out := make([]*string, len(contents))
	for i := range contents {
		c := contents[i]
		out[i] = &c
	}
	return out
}

func TestReminderInterval(t *testing.T) {
	for it := 0; it <= 10; it++ {
		msgs := batch(`{"results":[]}`)
		got := AppendReminder(msgs, "goal", "plan", it, 3)
		want := it == 3 || it == 6 || it == 9
		if got != want {
			t.Errorf("iteration %d: appended = %v, want %v", it, got, want)
		}
		if strings.Contains(*msgs[0], "<goal_plan_reminder>") != want {
			t.Errorf("iteration %d: content = %q", it, *msgs[0])
		}
	}
	// interval 0 means the default 3; a custom interval works.
	if !ReminderDue(3, 0) || ReminderDue(2, 0) || !ReminderDue(4, 2) || ReminderDue(0, 1) {
		t.Error("ReminderDue wrong")
	}
}

func TestReminderLastMessageOnly(t *testing.T) {
	msgs := batch("first result", "second result", "third result")
	if !AppendReminder(msgs, "Find notes about X", "- [ ] Search (id: s)", 6, 3) {
		t.Fatal("not appended")
	}
	if *msgs[0] != "first result" || *msgs[1] != "second result" {
		t.Fatalf("earlier messages changed: %q, %q", *msgs[0], *msgs[1])
	}
	want := "third result\n\n" + Reminder("Find notes about X", "- [ ] Search (id: s)")
	if *msgs[2] != want {
		t.Fatalf("last = %q, want %q", *msgs[2], want)
	}
	for _, w := range []string{"Find notes about X", "- [ ] Search (id: s)"} {
		if !strings.Contains(*msgs[2], w) {
			t.Errorf("reminder lacks %q", w)
		}
	}
	// Never twice into the same message.
	if AppendReminder(msgs, "Find notes about X", "- [ ] Search (id: s)", 6, 3) {
		t.Fatal("appended twice")
	}
	if n := strings.Count(*msgs[2], "<goal_plan_reminder>"); n != 1 {
		t.Fatalf("reminder count = %d", n)
	}
	// A blank last message becomes the reminder.
	msgs = batch("a", "  ")
	AppendReminder(msgs, "g", "p", 3, 3)
	if !strings.HasPrefix(*msgs[1], "<goal_plan_reminder>") {
		t.Fatalf("blank last = %q", *msgs[1])
	}
}

func TestReminderNeedsGoalAndPlan(t *testing.T) {
	tests := []struct{ goal, plan string }{{"", "plan"}, {"goal", ""}, {" \n", "plan"}, {"goal", "\t"}}
	for _, tc := range tests {
		msgs := batch("x")
		if AppendReminder(msgs, tc.goal, tc.plan, 3, 3) || *msgs[0] != "x" {
			t.Errorf("goal %q plan %q: reminder injected", tc.goal, tc.plan)
		}
	}
	if AppendReminder(nil, "g", "p", 3, 3) {
		t.Error("appended to an empty batch")
	}
	if AppendReminder([]*string{nil}, "g", "p", 3, 3) {
		t.Error("appended to a nil message")
	}
}
