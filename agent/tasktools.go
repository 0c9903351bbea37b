package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Names of the tools over tasks, properties and daily notes.
const (
	ToolListTasks        = "listTasks"
	ToolNotesByProperty  = "listNotesByProperty"
	ToolDailyNote        = "getDailyNote"
	defaultTaskLimit     = 50
	maxTaskLimit         = 200
	defaultPropertyLimit = 30
)

// TaskIndex is what the tools over tasks, properties and daily notes need
// of the index; *search.Index satisfies it. They are offered when
// Deps.Index has it.
type TaskIndex interface {
	Tasks(ctx context.Context, q search.TaskQuery) ([]search.TaskHit, int, error)
	NotesByProperty(ctx context.Context, expr string, limit int) ([]search.PropertyNote, int, error)
	DailyNotes(from, to time.Time) (vault.DailyNotes, []search.DailyNote)
}

// ListTasksArgs are the arguments of listTasks.
type ListTasksArgs struct {
	Status    string     `json:"status,omitempty" jsonschema:"open (the default), done or all"`
	Text      string     `json:"text,omitempty" jsonschema:"words the task must contain; OR, -word and \"a phrase\" work"`
	Tag       string     `json:"tag,omitempty" jsonschema:"only tasks in notes with this tag (nested tags included)"`
	Folder    string     `json:"folder,omitempty" jsonschema:"only tasks in notes under this folder"`
	Property  string     `json:"property,omitempty" jsonschema:"only tasks in notes with this property: [project:alpha], [status:active], [area]"`
	DueBefore string     `json:"dueBefore,omitempty" jsonschema:"only tasks due on or before this day: 2026-03-20, or words such as \"next friday\""`
	DueAfter  string     `json:"dueAfter,omitempty" jsonschema:"only tasks due on or after this day"`
	TimeRange *TimeRange `json:"timeRange,omitempty" jsonschema:"only tasks due or scheduled in this range, or in notes dated in it (use getTimeRangeMs)"`
	Limit     int        `json:"limit,omitempty" jsonschema:"how many tasks to list, default 50"`
}

// ListTasksResult is the result of listTasks.
type ListTasksResult struct {
	Tasks []TaskItem `json:"tasks"`
	// Total counts every task that matches, listed or not.
	Total int `json:"total"`
}

// TaskItem is one task: its note, line and text.
type TaskItem struct {
	Path      string `json:"path"`
	Title     string `json:"title"`
	Line      int    `json:"line"`
	Text      string `json:"text"`
	Done      bool   `json:"done"`
	Due       string `json:"due,omitempty"`
	Scheduled string `json:"scheduled,omitempty"`
	Section   string `json:"section,omitempty"`
}

// NotesByPropertyArgs are the arguments of listNotesByProperty.
type NotesByPropertyArgs struct {
	Query string `json:"query" jsonschema:"properties to match, as in a search: [status:draft], [status:draft OR review], [priority:>2], [due:<2026-04-01], [aliases:null], or [area] for any value"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many notes to list, default 30"`
}

// NotesByPropertyResult is the result of listNotesByProperty.
type NotesByPropertyResult struct {
	Notes []search.PropertyNote `json:"notes"`
	Total int                   `json:"total"`
}

// DailyNoteArgs are the arguments of getDailyNote.
type DailyNoteArgs struct {
	Date string `json:"date" jsonschema:"the day: \"today\", \"yesterday\", \"2026-03-12\", \"last monday\"; a period (\"last week\") lists its days"`
}

// DailyNoteResult is the result of getDailyNote.
type DailyNoteResult struct {
	// Folder and Format are the vault's daily note settings.
	Folder string             `json:"folder"`
	Format string             `json:"format"`
	Notes  []search.DailyNote `json:"notes"`
}

// taskTools are the tools over tasks, properties and daily notes.
func taskTools() []*Tool {
	return []*Tool{
		defineTool(toolSpec[ListTasksArgs]{
			name:    ToolListTasks,
			version: toolsVersion,
			description: "List the tasks (- [ ] checkbox items) of the vault: open ones by default, done or all, sorted by due date then note. " +
				"Filters combine: words of the task, the note's tag, folder or property, due dates (the Tasks plugin's 📅 and Dataview's [due:: ]), " +
				"and a time range. Each task comes with its note, line and text.",
			timeout: 15 * time.Second,
			tune: func(s *schemaT) {
				if p := s.Properties["status"]; p != nil {
					p.Enum = []any{search.TasksOpen, search.TasksDone, search.TasksAll}
				}
			},
			run:     runListTasks,
			summary: func(a ListTasksArgs) string { return "Listing " + taskWhat(a) },
			outcome: func(out any) string {
				r := out.(*ListTasksResult)
				return fmt.Sprintf("Found %d task%s", r.Total, plural(r.Total))
			},
		}),
		defineTool(toolSpec[NotesByPropertyArgs]{
			name:    ToolNotesByProperty,
			version: toolsVersion,
			description: "List the notes whose frontmatter properties match, with those properties' values. Written as in a search: " +
				"[status:draft], [status:draft OR review], [priority:>2], [due:<2026-04-01] (numbers and dates compare), [aliases:null] (empty), [area] (any value).",
			timeout: 15 * time.Second,
			tune:    func(s *schemaT) { minLen(s, "query", 1) },
			run: func(ctx context.Context, env toolEnv, a NotesByPropertyArgs) (any, error) {
				ti, err := taskIndex(env)
				if err != nil {
					return nil, err
				}
				notes, total, err := ti.NotesByProperty(ctx, a.Query, clampLimit(a.Limit, defaultPropertyLimit, maxTaskLimit))
				if err != nil {
					return nil, toolFailure(ctx, err)
				}
				return &NotesByPropertyResult{Notes: notes, Total: total}, nil
			},
			summary: func(a NotesByPropertyArgs) string { return fmt.Sprintf("Listing notes with %s", a.Query) },
			outcome: func(out any) string {
				r := out.(*NotesByPropertyResult)
				return fmt.Sprintf("Found %d note%s", r.Total, plural(r.Total))
			},
		}),
		defineTool(toolSpec[DailyNoteArgs]{
			name:    ToolDailyNote,
			version: toolsVersion,
			description: "Find the daily note of a day (\"today\", \"yesterday\", \"2026-03-12\"), or of each day of a period, where the vault's " +
				"Daily notes (or Periodic Notes) settings put it, and whether it exists. Read it with readNote.",
			timeout: 5 * time.Second,
			tune:    func(s *schemaT) { minLen(s, "date", 1) },
			run: func(ctx context.Context, env toolEnv, a DailyNoteArgs) (any, error) {
				ti, err := taskIndex(env)
				if err != nil {
					return nil, err
				}
				r, err := search.ParseTimeRange(a.Date, env.now())
				if err != nil {
					return nil, toolErrorf("%v", err)
				}
				settings, notes := ti.DailyNotes(time.UnixMilli(r.StartTime), time.UnixMilli(r.EndTime))
				return &DailyNoteResult{Folder: settings.Folder, Format: settings.Format, Notes: notes}, nil
			},
			summary: func(a DailyNoteArgs) string { return fmt.Sprintf("Finding the daily note of %s", a.Date) },
			outcome: func(out any) string {
				r := out.(*DailyNoteResult)
				n := 0
				for _, d := range r.Notes {
					if d.Exists {
						n++
					}
				}
				if len(r.Notes) == 1 {
					if n == 1 {
						return "Found the daily note " + r.Notes[0].Path
					}
					return "No daily note for " + r.Notes[0].Date
				}
				return fmt.Sprintf("Found %d daily note%s in %d days", n, plural(n), len(r.Notes))
			},
		}),
	}
}

func runListTasks(ctx context.Context, env toolEnv, a ListTasksArgs) (any, error) {
	ti, err := taskIndex(env)
	if err != nil {
		return nil, err
	}
	q := search.TaskQuery{Status: a.Status, Text: a.Text, Property: a.Property, Limit: clampLimit(a.Limit, defaultTaskLimit, maxTaskLimit)}
	if t := strings.TrimSpace(a.Tag); t != "" {
		q.Tags = []string{t}
	}
	if f := strings.TrimSpace(a.Folder); f != "" {
		q.Folders = []string{f}
	}
	if q.DueBefore, err = dayBound(a.DueBefore, env.now(), true); err != nil {
		return nil, toolErrorf("dueBefore: %v", err)
	}
	if q.DueAfter, err = dayBound(a.DueAfter, env.now(), false); err != nil {
		return nil, toolErrorf("dueAfter: %v", err)
	}
	if tr := a.TimeRange; tr != nil {
		if tr.StartTime > 0 {
			q.From = time.UnixMilli(tr.StartTime)
		}
		if tr.EndTime > 0 {
			q.To = time.UnixMilli(tr.EndTime)
		}
	}
	hits, total, err := ti.Tasks(ctx, q)
	if err != nil {
		return nil, toolFailure(ctx, err)
	}
	out := &ListTasksResult{Tasks: make([]TaskItem, len(hits)), Total: total}
	for i, h := range hits {
		out.Tasks[i] = TaskItem{Path: h.Path, Title: h.Title, Line: h.Line, Text: h.Text, Done: h.Done, Due: h.Due, Scheduled: h.Scheduled, Section: h.Section}
	}
	return out, nil
}

// taskWhat says which tasks a call lists, for its step.
func taskWhat(a ListTasksArgs) string {
	what := "open tasks"
	switch a.Status {
	case search.TasksDone:
		what = "done tasks"
	case search.TasksAll:
		what = "tasks"
	}
	if a.Text != "" {
		what += fmt.Sprintf(" about %q", a.Text)
	}
	if a.Tag != "" {
		what += " tagged #" + strings.TrimPrefix(a.Tag, "#")
	}
	if a.Folder != "" {
		what += " in " + a.Folder
	}
	if a.Property != "" {
		what += " in notes with " + a.Property
	}
	if a.DueBefore != "" {
		what += " due by " + a.DueBefore
	}
	if a.DueAfter != "" {
		what += " due from " + a.DueAfter
	}
	return what
}

// taskIndex is the index as a TaskIndex.
func taskIndex(env toolEnv) (TaskIndex, error) {
	ti, ok := env.index.(TaskIndex)
	if !ok {
		return nil, toolErrorf("this vault's index cannot list tasks or properties")
	}
	return ti, nil
}

// toolFailure turns an error of the index into a tool error, unless the
// run is over.
func toolFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, search.ErrBadQuery) {
		return toolErrorf("%v", err)
	}
	return toolErrorf("failed: %v", err)
}

// dayBound reads a day given as YYYY-MM-DD or as a time expression: the
// end of its range when end is set, else its start; zero for "".
func dayBound(s string, now time.Time, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	r, err := search.ParseTimeRange(s, now)
	if err != nil {
		return time.Time{}, err
	}
	if end {
		return time.UnixMilli(r.EndTime), nil
	}
	return time.UnixMilli(r.StartTime), nil
}

func clampLimit(n, def, most int) int {
	if n <= 0 {
		return def
	}
	return min(n, most)
}
