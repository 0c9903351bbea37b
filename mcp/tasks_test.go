package mcp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/mcp"
)

func TestTasksPropertiesAndDailyNotes(t *testing.T) {
	e := newEnv(t, envOptions{now: func() time.Time { return time.Date(2026, 3, 13, 9, 0, 0, 0, time.Local) }})
	tasks, txt := ok[mcp.TasksOutput](t, e, "list_tasks", map[string]any{"text": "outbox", "folder": "projects"})
	if tasks.Total != 1 || tasks.Tasks[0].Path != "projects/beta/Project Beta.md" || tasks.Tasks[0].Line != 32 || tasks.Tasks[0].Status != " " {
		t.Errorf("open outbox tasks in projects: %+v", tasks)
	}
	if !strings.Contains(txt, "- [ ] Outbox table and worker behind a feature flag, target 2026-04-24 — projects/beta/Project Beta.md:32") {
		t.Errorf("text: %s", txt)
	}
	all, _ := ok[mcp.TasksOutput](t, e, "list_tasks", map[string]any{"status": "all", "limit": 3})
	if all.Total <= 3 || len(all.Tasks) != 3 {
		t.Errorf("all tasks, 3 shown: %d of %d", len(all.Tasks), all.Total)
	}
	done, _ := ok[mcp.TasksOutput](t, e, "list_tasks", map[string]any{"status": "done"})
	for _, tk := range done.Tasks {
		if !tk.Done {
			t.Errorf("an open task listed as done: %+v", tk)
		}
	}
	props, txt := ok[mcp.PropertyOutput](t, e, "list_notes_by_property", map[string]any{"query": "[status:draft OR approved]"})
	if props.Total != 2 || !strings.Contains(txt, "projects/alpha/design/Architecture.md") || !strings.Contains(txt, "status: draft") {
		t.Errorf("draft or approved: %+v\n%s", props, txt)
	}
	daily, txt := ok[mcp.DailyOutput](t, e, "daily_note", map[string]any{"date": "yesterday"})
	if len(daily.Notes) != 1 || daily.Notes[0].Path != "journal/2026-03-12.md" || !daily.Notes[0].Exists || daily.Content == "" {
		t.Errorf("yesterday: %+v\n%s", daily, txt)
	}
	daily, txt = ok[mcp.DailyOutput](t, e, "daily_note", map[string]any{"date": "2026-03-13"})
	if len(daily.Notes) != 1 || daily.Notes[0].Exists || !strings.Contains(txt, "no note (it would be 2026-03-13.md)") {
		t.Errorf("a day without a note: %+v\n%s", daily, txt)
	}
	for tool, args := range map[string]map[string]any{
		"list_tasks":             {"status": "pending"},
		"list_notes_by_property": {"query": "[x:<y]"},
		"daily_note":             {"date": "blorp"},
	} {
		if res := e.call(t, tool, args); !res.IsError {
			t.Errorf("%s(%v) should fail: %s", tool, args, text(res))
		}
	}
	// search_notes says where line: and task operators matched.
	found, txt := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "task-todo:outbox"})
	if len(found.Hits) == 0 || len(found.Hits[0].Matches) == 0 || !strings.Contains(txt, "   L") {
		t.Errorf("task-todo:outbox: %+v\n%s", found, txt)
	}
}
