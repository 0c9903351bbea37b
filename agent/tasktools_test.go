package agent

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/llm"
)

// The task, property and daily note tools are offered with an index that
// has them, and run against it.
func TestTaskTools(t *testing.T) {
	ix := agenttest.SearchIndex(t)
	model := llm.NewScripted([]llm.Turn{
		toolTurn("",
			call(ToolListTasks, map[string]any{"text": "outbox OR cron"}),
			call(ToolListTasks, map[string]any{"dueBefore": "2026-04-20", "limit": 1}),
			call(ToolListTasks, map[string]any{"property": "[status:in-progress]", "folder": "projects"}),
			call(ToolNotesByProperty, map[string]any{"query": "[status:draft OR approved]"}),
			call(ToolDailyNote, map[string]any{"date": "2026-03-12"}),
			call(ToolDailyNote, map[string]any{"date": "yesterday"}),
			call(ToolListTasks, map[string]any{"status": "pending"}),
		),
		{Content: "done"},
	})
	a, err := New(Deps{Model: model, Index: ix, Now: func() time.Time { return time.Date(2026, 3, 13, 10, 0, 0, 0, time.Local) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	_, rec := run(t, a, Config{}, "what is still open?")
	out := returned(rec)
	if len(out) != 7 {
		t.Fatalf("%d results", len(out))
	}
	var tasks ListTasksResult
	decode(t, out[0], &tasks)
	var got []string
	for _, tk := range tasks.Tasks {
		got = append(got, tk.Path+":"+strconv.Itoa(tk.Line))
	}
	want := []string{"projects/beta/Project Beta.md:32", "projects/beta/Project Beta.md:33", "projects/beta/Project Beta.md:34",
		"work/meetings/2026-03-12 Beta Kickoff.md:23", "work/meetings/2026-04-02 Incident Review.md:38"}
	if !slices.Equal(got, want) || tasks.Total != 5 {
		t.Errorf("outbox OR cron tasks %v (%d), want %v", got, tasks.Total, want)
	}
	decode(t, out[1], &tasks)
	if len(tasks.Tasks) != 0 || tasks.Total != 0 {
		t.Errorf("due before 2026-04-20 (none has a due date the plugins' way): %+v", tasks)
	}
	decode(t, out[2], &tasks)
	if tasks.Total == 0 || !allIn(tasks.Tasks, "projects/") {
		t.Errorf("tasks of in-progress projects: %+v", tasks)
	}
	var props NotesByPropertyResult
	decode(t, out[3], &props)
	var notes []string
	for _, n := range props.Notes {
		notes = append(notes, n.Path)
	}
	if want := []string{"projects/alpha/design/Architecture.md", "projects/beta/Outbox Migration Plan.md"}; !slices.Equal(notes, want) {
		t.Errorf("draft or approved: %v, want %v", notes, want)
	}
	var daily DailyNoteResult
	decode(t, out[4], &daily)
	if len(daily.Notes) != 1 || !daily.Notes[0].Exists || daily.Notes[0].Path != "journal/2026-03-12.md" || daily.Format != "YYYY-MM-DD" {
		t.Errorf("daily note of 2026-03-12: %+v", daily)
	}
	decode(t, out[5], &daily)
	if len(daily.Notes) != 1 || daily.Notes[0].Date != "2026-03-12" || !daily.Notes[0].Exists {
		t.Errorf("yesterday's daily note: %+v", daily)
	}
	if out[6].Success || out[6].Error == "" {
		t.Errorf("a bad status should be a tool error: %+v", out[6])
	}
}

// Without an index that lists tasks, the tools are not offered.
func TestTaskToolsNeedTheIndex(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "x"}})
	for _, d := range a.Tools() {
		if d.Name == ToolListTasks || d.Name == ToolNotesByProperty || d.Name == ToolDailyNote {
			t.Errorf("%s offered over a fake index", d.Name)
		}
	}
}

func decode(t *testing.T, p ToolReturnedPayload, v any) {
	t.Helper()
	if !p.Success {
		t.Fatalf("%s failed: %s", p.Tool, p.Error)
	}
	if err := json.Unmarshal(p.Output, v); err != nil {
		t.Fatalf("%s: %v", p.Tool, err)
	}
}

func allIn(tasks []TaskItem, folder string) bool {
	for _, t := range tasks {
		if len(t.Path) < len(folder) || t.Path[:len(folder)] != folder {
			return false
		}
	}
	return true
}
