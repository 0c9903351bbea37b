package mcp

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search/shared"
	"github.com/vault-agent/vault-agent/vault"
)

// Limits of the tools. A larger limit asked for is clamped, not refused.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
	defaultListLimit   = 50
	maxListLimit       = 500
	maxTags            = 1000
	maxNoteHeadings    = 100
	maxNoteLinks       = 100
	maxLinkList        = 100
	// maxSectionRunes caps the text read_note returns for a heading's
	// section; the rest is read with nextChunk.
	maxSectionRunes = 6000
)

// queryLanguage is the search syntax, for tool descriptions.
const queryLanguage = `Query language: free terms are ranked (BM25 over titles, aliases, headings, tags, paths and text; ` +
	`accents folded, English stemmed; terms of 4+ letters fall back to fuzzy matching when nothing matches exactly); ` +
	`"exact phrase"; -term or -"phrase" excludes; a OR b; tag:#project (nested tags included); path:folder/ (notes under a folder); ` +
	`file:name (file names containing name, * and ? allowed); and Obsidian's operators, every word of their value required: ` +
	`content:word (text only), match-case:Word, line:(a b) (a line with both), block:(a b), section:(a b), task:word, ` +
	`task-todo:word (open tasks; task-todo: alone for any), task-done:word, [property], [property:value], [property:null], ` +
	`[property:>5] or [due:<2026-04-01], /regex/. Example: tag:#recipe "sourdough starter" -rye`

// Annotations: every tool reads only the vault.
func readOnly(title string, openWorld bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &openWorld}
}

// addTool registers a typed tool whose handler panics are recovered into
// tool errors: a bug in one call must not end the session.
func addTool[In, Out any](s *Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	if t.InputSchema == nil {
		t.InputSchema = schemaFor[In]()
	}
	if t.OutputSchema == nil {
		t.OutputSchema = schemaFor[Out]()
	}
	name := t.Name
	s.argHints[name] = argumentHint(t.InputSchema.(*jsonschema.Schema))
	sdk.AddTool(s.srv, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("tool panicked", "tool", name, "panic", r, "stack", string(debug.Stack()))
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error in %s (the server keeps running): %v", name, r)
			}
		}()
		return h(ctx, req, in)
	})
}

// schemaFor infers the JSON schema of T and drops the "null" that the
// inference adds to pointer, slice and map types: clients and models read
// plain types more reliably, and absent fields are already optional.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err))
	}
	simplifySchema(s)
	return s
}

// argumentHint describes a tool's arguments in one line, for the error of
// a call whose arguments do not fit the schema.
func argumentHint(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return "no arguments"
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := slices.Contains(s.Required, names[i]), slices.Contains(s.Required, names[j])
		if ri != rj {
			return ri
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		p := s.Properties[n]
		typ := p.Type
		if typ == "array" && p.Items != nil {
			typ = "array of " + p.Items.Type + "s"
		}
		if len(p.Enum) > 0 {
			var vals []string
			for _, v := range p.Enum {
				vals = append(vals, fmt.Sprint(v))
			}
			typ = strings.Join(vals, "|")
		}
		parts[i] = n + " (" + typ
		if slices.Contains(s.Required, n) {
			parts[i] += ", required"
		}
		parts[i] += ")"
	}
	return strings.Join(parts, ", ")
}

// hintArguments is a receiving middleware: when the SDK refuses a tool
// call's arguments (the result is an error saying `validating
// "arguments"`), it adds what the tool takes, so a model can correct the
// call at once.
func (s *Server) hintArguments(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		r, ok := res.(*sdk.CallToolResult)
		if !ok || !r.IsError || len(r.Content) != 1 {
			return res, err
		}
		tc, ok := r.Content[0].(*sdk.TextContent)
		p, ok2 := req.GetParams().(*sdk.CallToolParamsRaw)
		if !ok || !ok2 || !strings.HasPrefix(tc.Text, `validating "arguments"`) {
			return res, err
		}
		if hint, ok := s.argHints[p.Name]; ok {
			tc.Text = fmt.Sprintf("invalid arguments for %s: %s. %s takes: %s.", p.Name,
				strings.TrimPrefix(tc.Text, `validating "arguments": `), p.Name, hint)
		}
		return res, err
	}
}

func simplifySchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		simplifySchema(p)
	}
	simplifySchema(s.Items)
}

// result is a tool result with text for the model; the structured output
// goes beside it.
func result(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

func (s *Server) addTools() {
	addTool(s, &sdk.Tool{
		Name:        "search_notes",
		Annotations: readOnly("Search notes", false),
		Description: "Search the notes of the vault, ranked by relevance. Returns for each note its path, title, the heading of the " +
			"best matching section, a short snippet, a score and the chunk index to pass to read_note to read that section. " +
			"Filters (tags, folders, since, until) combine with the query; with only filters, notes are listed newest first. " +
			queryLanguage + ".",
	}, s.searchNotes)
	addTool(s, &sdk.Tool{
		Name:        "read_note",
		Annotations: readOnly("Read a note", false),
		Description: "Read one chunk (a heading-delimited section, at most ~1500 characters) of a note, or the whole section under a " +
			"heading. Returns the text with the note's chunk count, headings, tags and outgoing links; nextChunk says what to read " +
			"next. path accepts a vault path (\"projects/Alpha.md\"), a path without .md, a [[wikilink]], or a file name in any case. " +
			"Start with the chunk search_notes returned; read chunk 0 for a note's beginning.",
	}, s.readNote)
	addTool(s, &sdk.Tool{
		Name:        "list_notes",
		Annotations: readOnly("List notes", false),
		Description: "List notes, newest first (by the note's own date - frontmatter date/created or a date in the file name - else " +
			"its modification time), optionally only under a folder, with a tag, or modified or dated in a period. " +
			"Returns paths, titles and dates, and how many notes match in all.",
	}, s.listNotes)
	addTool(s, &sdk.Tool{
		Name:        "list_tags",
		Annotations: readOnly("List tags", false),
		Description: "List the tags used in the vault with how many notes carry each, most used first. Parent tags of nested tags " +
			"(project for project/alpha) are listed too and count their children's notes.",
	}, s.listTags)
	addTool(s, &sdk.Tool{
		Name:        "links",
		Annotations: readOnly("Links and backlinks", false),
		Description: "Show the links of a note: the notes it links to (wikilinks, embeds, markdown links; unresolved ones flagged) and " +
			"the notes that link to it (backlinks). path is looked up like read_note's.",
	}, s.linksTool)
	addTool(s, &sdk.Tool{
		Name:        "notes_in_range",
		Annotations: readOnly("Notes in a period", false),
		Description: "List the notes modified or dated in a period given in words, oldest first: \"today\", \"yesterday\", \"last week\", " +
			"\"this month\", \"last 30 days\", \"2026-03\", \"2026-03-14\", \"March\". Returns the resolved dates and the notes.",
	}, s.notesInRange)
	addTool(s, &sdk.Tool{
		Name:        "list_tasks",
		Annotations: readOnly("List tasks", false),
		Description: "List the tasks (- [ ] checkbox items) of the vault: open ones by default, done or all, sorted by due date (the Tasks " +
			"plugin's 📅 date or Dataview's [due:: date]) then note. Filters combine: words of the task, the note's tag, folder or " +
			"property, due before/after, and a period (tasks due or scheduled in it, or in notes dated in it). Each task comes with its " +
			"note's path, its line and its text.",
	}, s.listTasks)
	addTool(s, &sdk.Tool{
		Name:        "list_notes_by_property",
		Annotations: readOnly("Notes by property", false),
		Description: "List the notes whose frontmatter properties match, with those properties' values and types, sorted by path. " +
			"Written as in search: [status:draft], [status:draft OR review], [priority:>2], [due:<2026-04-01] (numbers and dates " +
			"compare), [aliases:null] (empty), [area] (any value); several in one query must all hold.",
	}, s.notesByProperty)
	addTool(s, &sdk.Tool{
		Name:        "daily_note",
		Annotations: readOnly("Daily note", false),
		Description: "Find the daily note of a day (today, yesterday, 2026-03-12, last monday) where the vault's Daily notes or " +
			"Periodic Notes settings put it, with its text when it exists; a period (last week) lists the note of each day.",
	}, s.dailyNote)
	if s.cfg.Semantic {
		addTool(s, &sdk.Tool{
			Name:        "related_notes",
			Annotations: readOnly("Related notes", false),
			Description: "List the notes closest in meaning to a note (similar notes), even when they share no words with it, best " +
				"first, each with the heading and start of its closest section and the chunk to pass to read_note. path is looked up " +
				"like read_note's.",
		}, s.relatedNotes)
	}
	if s.cfg.Ask {
		s.addAskTool()
	}
	if s.cfg.AllowEdits {
		s.addEditTools()
	}
}

// ---- shared helpers

// lookupNote waits for the index and reads the note name stands for.
func (s *Server) lookupNote(ctx context.Context, req *sdk.CallToolRequest, name string) (*shared.Index, *vault.Note, error) {
	if strings.TrimSpace(name) == "" {
		return nil, nil, errors.New("path is empty: give a note's vault path, e.g. \"projects/Alpha.md\" (search_notes finds them)")
	}
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	n, err := ix.ReadNote(name)
	if err != nil {
		return nil, nil, noteError(name, err)
	}
	return ix, n, nil
}

// noteError turns a lookup failure into a message a model can act on.
func noteError(name string, err error) error {
	switch {
	case errors.Is(err, vault.ErrUnsafePath):
		return fmt.Errorf("%q is outside the vault and cannot be read: give a path relative to the vault folder, e.g. \"projects/Alpha.md\"", name)
	case errors.Is(err, vault.ErrAmbiguous):
		return fmt.Errorf("%v; give the full path of the one you mean", err)
	case errors.Is(err, vault.ErrNotFound):
		return fmt.Errorf("%v; search_notes finds notes by content, list_notes lists them by folder", err)
	case errors.Is(err, vault.ErrNotMarkdown):
		return fmt.Errorf("%v; only markdown notes can be read", err)
	}
	return fmt.Errorf("read %q: %v", name, err)
}

// clamp returns def for n <= 0 and at most max.
func clamp(n, def, max int) int {
	if n <= 0 {
		return def
	}
	return min(n, max)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
