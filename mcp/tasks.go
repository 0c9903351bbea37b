package mcp

// list_tasks, list_notes_by_property and daily_note: tasks, properties and
// daily notes.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
)

// Limits of the task and property listings.
const (
	defaultTaskLimit = 50
	maxTaskLimit     = 500
)

// ---- list_tasks

// TasksInput are list_tasks' arguments.
type TasksInput struct {
	Status    string `json:"status,omitempty" jsonschema:"open (the default), done or all"`
	Text      string `json:"text,omitempty" jsonschema:"words the task must contain; OR, -word and \"a phrase\" work, e.g. \"call OR email\""`
	Tag       string `json:"tag,omitempty" jsonschema:"only tasks in notes with this tag, nested tags included"`
	Folder    string `json:"folder,omitempty" jsonschema:"only tasks in notes under this folder"`
	Property  string `json:"property,omitempty" jsonschema:"only tasks in notes with this property: [project:alpha], [status:active], [area]"`
	DueBefore string `json:"dueBefore,omitempty" jsonschema:"only tasks due on or before this day: 2026-03-20, or words such as \"end of next week\""`
	DueAfter  string `json:"dueAfter,omitempty" jsonschema:"only tasks due on or after this day"`
	Since     string `json:"since,omitempty" jsonschema:"only tasks due or scheduled on or after this day, or in notes dated (or modified) since: 2026-03-01, or words such as \"last week\""`
	Until     string `json:"until,omitempty" jsonschema:"the end of that period"`
	Limit     int    `json:"limit,omitempty" jsonschema:"how many tasks to return: 1 to 500, default 50"`
}

// TasksOutput is list_tasks' result.
type TasksOutput struct {
	Tasks []TaskEntry `json:"tasks"`
	Total int         `json:"total" jsonschema:"how many tasks match in all"`
}

// TaskEntry is one task.
type TaskEntry struct {
	Path      string `json:"path"`
	Title     string `json:"title"`
	Line      int    `json:"line" jsonschema:"1-based line of the task in the note"`
	Text      string `json:"text"`
	Done      bool   `json:"done"`
	Status    string `json:"status" jsonschema:"the character in the checkbox: space for open, x for done"`
	Due       string `json:"due,omitempty" jsonschema:"YYYY-MM-DD"`
	Scheduled string `json:"scheduled,omitempty" jsonschema:"YYYY-MM-DD"`
	Section   string `json:"section,omitempty" jsonschema:"the heading the task is under"`
}

func (s *Server) listTasks(ctx context.Context, req *sdk.CallToolRequest, in TasksInput) (*sdk.CallToolResult, TasksOutput, error) {
	var out TasksOutput
	q := search.TaskQuery{Status: strings.TrimSpace(in.Status), Text: in.Text, Property: in.Property, Limit: clamp(in.Limit, defaultTaskLimit, maxTaskLimit)}
	var err error
	if q.Tags, err = cleanTags([]string{in.Tag}); err != nil {
		return nil, out, err
	}
	if q.Folders, err = cleanFolders([]string{in.Folder}); err != nil {
		return nil, out, err
	}
	if q.DueAfter, q.DueBefore, err = s.period(in.DueAfter, in.DueBefore); err != nil {
		return nil, out, fmt.Errorf("due: %v", err)
	}
	if q.From, q.To, err = s.period(in.Since, in.Until); err != nil {
		return nil, out, err
	}
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, out, err
	}
	hits, total, err := ix.Tasks(ctx, q)
	if err != nil {
		return nil, out, queryFailure(ctx, err)
	}
	out = TasksOutput{Tasks: make([]TaskEntry, len(hits)), Total: total}
	for i, h := range hits {
		out.Tasks[i] = TaskEntry{Path: h.Path, Title: h.Title, Line: h.Line, Text: h.Text, Done: h.Done, Status: h.Status,
			Due: h.Due, Scheduled: h.Scheduled, Section: h.Section}
	}
	return result(renderTasks(out, q.Status)), out, nil
}

func renderTasks(o TasksOutput, status string) string {
	what := "open tasks"
	switch status {
	case search.TasksDone:
		what = "done tasks"
	case search.TasksAll:
		what = "tasks"
	}
	if o.Total == 0 {
		return "No " + what + " match."
	}
	var b strings.Builder
	writeHeader(&b, fmt.Sprintf("%d %s", o.Total, what), o.Total, len(o.Tasks))
	b.WriteString(", by due date:")
	for _, t := range o.Tasks {
		fmt.Fprintf(&b, "\n- [%s] %s — %s:%d", t.Status, t.Text, t.Path, t.Line)
	}
	return b.String()
}

// ---- list_notes_by_property

// PropertyInput are list_notes_by_property's arguments.
type PropertyInput struct {
	Query string `json:"query" jsonschema:"properties to match, as in a search: [status:draft], [status:draft OR review], [priority:>2], [due:<2026-04-01], [aliases:null] (empty), [area] (any value)"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many notes to return: 1 to 500, default 50"`
}

// PropertyOutput is list_notes_by_property's result.
type PropertyOutput struct {
	Notes []search.PropertyNote `json:"notes"`
	Total int                   `json:"total" jsonschema:"how many notes match in all"`
}

func (s *Server) notesByProperty(ctx context.Context, req *sdk.CallToolRequest, in PropertyInput) (*sdk.CallToolResult, PropertyOutput, error) {
	var out PropertyOutput
	if strings.TrimSpace(in.Query) == "" {
		return nil, out, errors.New("query is empty: name a property, e.g. [status:draft] or [priority:>2]")
	}
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, out, err
	}
	notes, total, err := ix.NotesByProperty(ctx, in.Query, clamp(in.Limit, defaultListLimit, maxListLimit))
	if err != nil {
		return nil, out, queryFailure(ctx, err)
	}
	out = PropertyOutput{Notes: notes, Total: total}
	return result(renderProperties(out, in.Query)), out, nil
}

func renderProperties(o PropertyOutput, query string) string {
	if o.Total == 0 {
		return fmt.Sprintf("No notes match %s.", query)
	}
	var b strings.Builder
	writeHeader(&b, fmt.Sprintf("%d note(s) match %s", o.Total, query), o.Total, len(o.Notes))
	b.WriteString(":")
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "\n%s", label(n.Path, n.Title))
		for i, p := range n.Properties {
			sep := " — "
			if i > 0 {
				sep = "; "
			}
			fmt.Fprintf(&b, "%s%s: %s", sep, p.Name, search.PropertyText(p.Value))
		}
	}
	return b.String()
}

// ---- daily_note

// DailyInput are daily_note's arguments.
type DailyInput struct {
	Date string `json:"date,omitempty" jsonschema:"the day: today (the default), yesterday, 2026-03-12, last monday; a period such as last week lists each of its days"`
}

// DailyOutput is daily_note's result.
type DailyOutput struct {
	Folder string `json:"folder" jsonschema:"the daily notes' folder from the vault's settings"`
	Format string `json:"format" jsonschema:"their file name format (moment.js)"`
	// Notes are the days asked for, with the note of each.
	Notes []search.DailyNote `json:"notes"`
	// Content is the text of the note when one day was asked for and its
	// note exists, cut at maxSectionRunes.
	Content string `json:"content,omitempty"`
}

func (s *Server) dailyNote(ctx context.Context, req *sdk.CallToolRequest, in DailyInput) (*sdk.CallToolResult, DailyOutput, error) {
	var out DailyOutput
	expr := strings.TrimSpace(in.Date)
	if expr == "" {
		expr = "today"
	}
	tr, err := s.timeRange(expr)
	if err != nil {
		return nil, out, err
	}
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, out, err
	}
	settings, notes := ix.DailyNotes(tr.Start, tr.End)
	out = DailyOutput{Folder: settings.Folder, Format: settings.Format, Notes: notes}
	if len(notes) == 1 && notes[0].Exists {
		if n, err := ix.ReadNote(notes[0].Path); err == nil {
			out.Content = truncRunes(n.Body, maxSectionRunes)
		}
	}
	return result(renderDaily(out)), out, nil
}

func renderDaily(o DailyOutput) string {
	var b strings.Builder
	where := "the vault's root"
	if o.Folder != "" {
		where = o.Folder + "/"
	}
	fmt.Fprintf(&b, "Daily notes are named %s in %s.", o.Format, where)
	for _, n := range o.Notes {
		if n.Exists {
			fmt.Fprintf(&b, "\n%s: %s", n.Date, n.Path)
		} else {
			fmt.Fprintf(&b, "\n%s: no note (it would be %s)", n.Date, n.Path)
		}
	}
	if o.Content != "" {
		b.WriteString("\n\n" + o.Content)
	}
	return b.String()
}

// queryFailure turns an error of the index into a tool error.
func queryFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, search.ErrBadQuery) {
		return fmt.Errorf("%v. %s", err, queryLanguage)
	}
	return err
}

// truncRunes cuts s at n runes, saying so.
func truncRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("\n… (cut at %d characters; read the rest with read_note)", n)
}
