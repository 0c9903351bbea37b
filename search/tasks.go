package search

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/vault-agent/vault-agent/vault"
)

// Task statuses of TaskQuery.Status.
const (
	TasksOpen = "open"
	TasksDone = "done"
	TasksAll  = "all"
)

// TaskQuery selects tasks for Index.Tasks. Every filter given must hold.
type TaskQuery struct {
	// Status is open (the default), done or all.
	Status string
	// Text is what the task's text must match, in the query language
	// ("call", "call OR email", "\"weekly report\" -draft", "/^fix/").
	Text string
	// Tags, Folders and Property select the notes: any of the tags (nested
	// ones included), under any of the folders, matching a property query
	// ("[status:active]", "project:alpha").
	Tags     []string
	Folders  []string
	Property string
	// DueAfter and DueBefore keep the tasks due on or after, on or before
	// these days (tasks without a due date go).
	DueAfter, DueBefore time.Time
	// From and To keep the tasks due or scheduled in the range, or in a
	// note dated (or, when the vault's modification times mean anything,
	// modified) in it.
	From, To time.Time
	// Limit caps the tasks returned (all when <= 0); the total counts all.
	Limit int
}

// TaskHit is one task found by Index.Tasks.
type TaskHit struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	vault.Task
}

// maxDailyDays caps the days DailyNotes looks at.
const maxDailyDays = 31

// Tasks lists the tasks q selects, sorted by due date (tasks without one
// last), then note path and line; total counts them all.
func (ix *Index) Tasks(ctx context.Context, q TaskQuery) (tasks []TaskHit, total int, err error) {
	kind := scopeTaskTodo
	switch q.Status {
	case "", TasksOpen:
	case TasksDone:
		kind = scopeTaskDone
	case TasksAll:
		kind = scopeTask
	default:
		return nil, 0, &QueryError{Pos: 1, Msg: fmt.Sprintf("task status must be %s, %s or %s, not %q", TasksOpen, TasksDone, TasksAll, q.Status)}
	}
	if !q.DueAfter.IsZero() && !q.DueBefore.IsZero() && q.DueAfter.After(q.DueBefore) {
		return nil, 0, &QueryError{Pos: 1, Msg: "dueAfter is after dueBefore: no task can be due in between"}
	}
	// The notes: those with such a task matching the text, and the other
	// filters; the tasks of each are then picked one by one.
	expr := kind + ":"
	var text spanExpr = spanConst(true)
	if t := strings.TrimSpace(q.Text); t != "" {
		tq, err := ParseQuery(t)
		if err != nil {
			return nil, 0, fmt.Errorf("text: %w", err)
		}
		pp := &parser{}
		pp.noNested(1, "a task's text", tq.Root)
		if pp.err != nil {
			return nil, 0, pp.err
		}
		expr = kind + ":(" + t + ")"
		text = buildSpan(ix.textAn, tq.Root, false)
	}
	if p := strings.TrimSpace(q.Property); p != "" {
		if !strings.HasPrefix(p, "[") {
			p = "[" + p + "]"
		}
		expr += " " + p
	}
	if err := CheckQuerySize(expr); err != nil {
		return nil, 0, err
	}
	paths, _, err := ix.FilterPaths(ctx, Request{Query: expr, Tags: q.Tags, Folders: q.Folders})
	if err != nil {
		return nil, 0, err
	}
	if len(paths) == 0 {
		return []TaskHit{}, 0, nil
	}
	cands, err := ix.candidateHits(ctx, query.NewDocIDQuery(paths), fParts)
	if err != nil {
		return nil, 0, err
	}
	inRange := ix.taskRange(q.From, q.To)
	for _, c := range cands {
		ts, err := decodeTasks(c.stored)
		if err != nil {
			continue
		}
		m, _ := ix.Note(c.path)
		noteIn := inRange == nil || inRange(m.Date) || ix.mtimesMeaningful() && inRange(m.MTime)
		for _, t := range ts {
			if !taskKind(t, kind) || !text.eval(&unit{an: ix.textAn, text: t.Text, path: c.path}) {
				continue
			}
			if !dueIn(t.Due, q.DueAfter, q.DueBefore) {
				continue
			}
			if !noteIn && !inRange(dayOfTask(t.Due)) && !inRange(dayOfTask(t.Scheduled)) {
				continue
			}
			tasks = append(tasks, TaskHit{Path: c.path, Title: m.Title, Task: t})
		}
	}
	sort.Slice(tasks, func(i, j int) bool {
		a, b := tasks[i], tasks[j]
		if (a.Due == "") != (b.Due == "") {
			return a.Due != ""
		}
		if a.Due != b.Due {
			return a.Due < b.Due
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Line < b.Line
	})
	total = len(tasks)
	if q.Limit > 0 && len(tasks) > q.Limit {
		tasks = tasks[:q.Limit]
	}
	if tasks == nil {
		tasks = []TaskHit{}
	}
	return tasks, total, nil
}

// taskRange returns the test of a moment against [from, to] (either may
// be open), nil when both are.
func (ix *Index) taskRange(from, to time.Time) func(time.Time) bool {
	if from.IsZero() && to.IsZero() {
		return nil
	}
	return func(t time.Time) bool {
		return !t.IsZero() && (from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to))
	}
}

// dayOfTask reads a task date (YYYY-MM-DD) as the start of that day,
// local time; zero when there is none.
func dayOfTask(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.ParseInLocation(time.DateOnly, s, time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// dueIn reports whether a task due on day due (YYYY-MM-DD, "" for none)
// is due on or after after and on or before before (days; zero: open).
func dueIn(due string, after, before time.Time) bool {
	if after.IsZero() && before.IsZero() {
		return true
	}
	d := dayOfTask(due)
	if d.IsZero() {
		return false
	}
	day := func(t time.Time) time.Time {
		t = t.In(time.Local)
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
	}
	return (after.IsZero() || !d.Before(day(after))) && (before.IsZero() || !d.After(day(before)))
}

// DailyNote is the daily note of one day.
type DailyNote struct {
	// Date is the day, YYYY-MM-DD.
	Date string `json:"date"`
	// Path is where the vault's settings put that day's note.
	Path string `json:"path"`
	// Exists says whether that note is in the vault (indexed).
	Exists bool   `json:"exists"`
	Title  string `json:"title,omitempty"`
}

// DailyNotes returns the daily notes of the days from the day of from to
// the day of to (at most 31 days), named as the vault's Daily notes or
// Periodic Notes settings say (vault.DailyNotes), with whether each
// exists. A note is found whatever the case of its path, and when there is
// none at that path, as the one note of that file name elsewhere.
func (ix *Index) DailyNotes(from, to time.Time) (vault.DailyNotes, []DailyNote) {
	settings := ix.v.DailyNotes()
	start := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, from.Location())
	t := ix.pathTables()
	var out []DailyNote
	for d := start; !d.After(to) && len(out) < maxDailyDays; d = d.AddDate(0, 0, 1) {
		dn := DailyNote{Date: d.Format(time.DateOnly), Path: settings.Path(d)}
		if m, ok := ix.Note(dn.Path); ok {
			dn.Exists, dn.Title = true, m.Title
			out = append(out, dn)
			continue
		}
		// The same path in another case; else the only note of that name
		// elsewhere (daily notes kept in a folder the settings do not name).
		want, name := strings.ToLower(dn.Path), fileKey(dn.Path)
		found, named := -1, -1
		for k := range t.paths {
			if t.lowerIs(k, want) {
				found = k
				break
			}
			if t.fileKeyIs(k, name) {
				if named == -1 {
					named = k
				} else {
					named = -2 // more than one
				}
			}
		}
		if found < 0 && named >= 0 {
			found = named
		}
		if found >= 0 {
			dn.Path, dn.Exists = t.paths[found], true
			if m, ok := ix.Note(t.paths[found]); ok {
				dn.Title = m.Title
			}
		}
		out = append(out, dn)
	}
	return settings, out
}
