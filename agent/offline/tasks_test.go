package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
)

// Questions about one's tasks are answered from listTasks: the period the
// question names, and its topic, decide which tasks.
func TestFixtureTaskQuestions(t *testing.T) {
	a := fixtureAgent(t) // now: Wednesday 2026-03-18
	tests := []struct {
		q       string
		planner bool
		tools   []string // the tools called, in order
		has     []string // in the answer, in this order
		hasNot  []string
	}{
		{q: "What's still open from last week?",
			tools: []string{agent.ToolTimeRange, agent.ToolListTasks},
			has: []string{"You have 6 open tasks from last week (2026-03-09 to 2026-03-15)",
				"- [ ] Outbox table and worker behind a feature flag, target 2026-04-24 [[Project Beta]] (line 32)",
				"- [ ] Me: design doc by 2026-03-19. [[2026-03-12 Beta Kickoff]] (line 21)",
				"Sources: [[Project Beta]], [[2026-03-12 Beta Kickoff]]"},
			hasNot: []string{"Incident Review", "Onboarding"}},
		{q: "my unfinished tasks about the outbox",
			tools: []string{agent.ToolListTasks},
			has:   []string{"You have 3 open tasks about outbox:", "[[Project Beta]] (line 32)", "[[2026-03-12 Beta Kickoff]] (line 23)", "[[2026-04-02 Incident Review]] (line 38)"}},
		{q: "show my completed tasks about alerts", planner: true,
			tools: []string{"write_todos", agent.ToolListTasks, "plan_progress"},
			has:   []string{"You have 2 done tasks about alerts:", "- [x] Alert when any replication slot retains more than 20 GB of WAL"}},
		{q: "what's still open about the zeppelin?",
			tools: []string{agent.ToolListTasks, agent.ToolListTasks},
			has:   []string{"No open task mentions zeppelin; these are all the open tasks.", "[[Project Beta]] (line 32)"}},
		{q: "how do I sort tasks by due date in a query?",
			tools:  []string{agent.ToolLocalSearch},
			hasNot: []string{"open task"}},
		// A tag's notes, and notes by property, are listings too.
		{q: "which notes are tagged reading/paper?", planner: true,
			tools: []string{"write_todos", agent.ToolLocalSearch, "plan_progress"},
			has:   []string{"3 notes have the tag #reading/paper:", "[[Attention Is All You Need]]", "Sources: "}},
		{q: "which notes link to Raft Consensus?", planner: true,
			tools: []string{"write_todos", agent.ToolNoteLinks, "plan_progress"},
			has:   []string{"link to [[Raft Consensus]]:", "Sources: [[Raft Consensus]]"}},
		{q: "what notes are in the reading/papers folder?", planner: true,
			tools: []string{"write_todos", agent.ToolLocalSearch, "plan_progress"},
			has:   []string{"3 notes are in reading/papers/:", "[[Raft Consensus]]"}},
		{q: "how many notes do I have?",
			tools: []string{agent.ToolFileTree},
			has:   []string{"Your vault has ", " notes in ", "The largest:"}},
		{q: "notes whose year is 2017",
			tools: []string{agent.ToolNotesByProperty},
			has:   []string{"2 notes match [year:2017]:\n\n- [[Why We Sleep]]\n- [[Attention Is All You Need]]\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			rec := &events{}
			res, err := a.Run(context.Background(), agent.RunRequest{Message: tt.q, Config: agent.Config{Planner: tt.planner}}, rec)
			if err != nil || res.StopReason != agent.StopFinalAnswer {
				t.Fatalf("run: %v %+v", err, res)
			}
			var tools []string
			for _, e := range rec.ofType(agent.EventToolReturned) {
				if p := e.Payload.(agent.ToolReturnedPayload); p.Tool != agent.ToolReadNote {
					tools = append(tools, p.Tool)
				}
			}
			if got := strings.Join(tools, ","); !strings.HasPrefix(got, strings.Join(tt.tools, ",")) || tt.tools[0] != agent.ToolLocalSearch && got != strings.Join(tt.tools, ",") {
				t.Errorf("tools %s, want %s", got, strings.Join(tt.tools, ","))
			}
			at := -1
			for _, s := range tt.has {
				i := strings.Index(res.Answer, s)
				if i <= at {
					t.Errorf("answer lacks %q (or out of order):\n%s", s, res.Answer)
				}
				at = max(at, i)
			}
			for _, s := range tt.hasNot {
				if strings.Contains(res.Answer, s) {
					t.Errorf("answer has %q:\n%s", s, res.Answer)
				}
			}
		})
	}
}
