package mcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
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
	`file:name (file names containing name, * and ? allowed). Example: tag:#recipe "sourdough starter" -rye`

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
	if s.cfg.Agent != nil {
		s.addAskTool()
	}
}

// ---- search_notes

// SearchInput are search_notes' arguments.
type SearchInput struct {
	Query   string   `json:"query" jsonschema:"what to look for, in the query language of the tool description; may be empty when filters are given"`
	Limit   int      `json:"limit,omitempty" jsonschema:"how many notes to return: 1 to 50, default 10"`
	Tags    []string `json:"tags,omitempty" jsonschema:"only notes with any of these tags, nested tags included, e.g. [\"project\"]"`
	Folders []string `json:"folders,omitempty" jsonschema:"only notes under any of these folders, e.g. [\"journal\"]"`
	Since   string   `json:"since,omitempty" jsonschema:"only notes modified or dated on or after this day: 2026-03-01, or words such as \"last month\""`
	Until   string   `json:"until,omitempty" jsonschema:"only notes modified or dated on or before this day: 2026-03-31, or words such as \"last month\""`
}

// SearchOutput is search_notes' result.
type SearchOutput struct {
	Query string      `json:"query"`
	Hits  []SearchHit `json:"hits"`
	// Total counts every matching note, not only these hits.
	Total int `json:"total" jsonschema:"how many notes match in all"`
	// Fuzzy and Partial say how the hits were found when exact matching
	// found nothing.
	Fuzzy   bool `json:"fuzzy,omitempty" jsonschema:"true when nothing matched exactly and these are fuzzy matches"`
	Partial bool `json:"partial,omitempty" jsonschema:"true when no note had enough of the terms and these match only some"`
}

// SearchHit is one note found.
type SearchHit struct {
	Path    string  `json:"path" jsonschema:"vault path of the note"`
	Title   string  `json:"title"`
	Heading string  `json:"heading,omitempty" jsonschema:"heading path of the best matching section"`
	Snippet string  `json:"snippet" jsonschema:"text around the matches"`
	Score   float64 `json:"score" jsonschema:"relevance; higher is better"`
	Chunk   int     `json:"chunk" jsonschema:"the chunk to pass to read_note to read this section"`
}

func (s *Server) searchNotes(ctx context.Context, req *sdk.CallToolRequest, in SearchInput) (*sdk.CallToolResult, SearchOutput, error) {
	var out SearchOutput
	sreq := search.Request{Query: strings.TrimSpace(in.Query), Limit: clamp(in.Limit, defaultSearchLimit, maxSearchLimit)}
	var err error
	if sreq.Tags, err = cleanTags(in.Tags); err != nil {
		return nil, out, err
	}
	if sreq.Folders, err = cleanFolders(in.Folders); err != nil {
		return nil, out, err
	}
	if sreq.From, sreq.To, err = s.period(in.Since, in.Until); err != nil {
		return nil, out, err
	}
	if sreq.Query == "" && len(sreq.Tags) == 0 && len(sreq.Folders) == 0 && sreq.From.IsZero() && sreq.To.IsZero() {
		return nil, out, errors.New("the query is empty: give words to look for, or at least one filter (tags, folders, since, until)")
	}
	if err := s.ready(ctx, req.Session, req.Params.GetProgressToken()); err != nil {
		return nil, out, err
	}
	res, err := s.cfg.Vault.Search(ctx, sreq)
	if err != nil {
		if errors.Is(err, search.ErrBadQuery) || errors.Is(err, search.ErrEmptyQuery) {
			return nil, out, fmt.Errorf("%v. %s", err, queryLanguage)
		}
		return nil, out, fmt.Errorf("search failed: %v", err)
	}
	out = SearchOutput{Query: sreq.Query, Hits: make([]SearchHit, 0, len(res.Results)), Total: res.Total, Fuzzy: res.Fuzzy, Partial: res.Partial}
	for _, r := range res.Results {
		out.Hits = append(out.Hits, SearchHit{
			Path: r.Path, Title: r.Title, Heading: r.Heading, Score: round2(r.Score), Chunk: r.ChunkIndex,
		})
	}
	// Snippets get the room the other lines leave within the budget.
	width := snippetBytes
	if n := len(out.Hits); n > 0 {
		fixed := len(renderSearch(out)) + n*snippetLineBytes
		width = min(width, max(minSnippetBytes, (searchBudget*n-fixed)/n))
	}
	for i, r := range res.Results {
		out.Hits[i].Snippet = cleanSnippet(r.Snippet, width)
	}
	return result(renderSearch(out)), out, nil
}

// ---- read_note

// ReadInput are read_note's arguments.
type ReadInput struct {
	Path    string `json:"path" jsonschema:"the note: a vault path, a path without .md, a [[wikilink]] or a file name"`
	Chunk   *int   `json:"chunk,omitempty" jsonschema:"which chunk to read, from 0 (default 0); search_notes gives the best one"`
	Heading string `json:"heading,omitempty" jsonschema:"read the whole section under this heading instead of a chunk, e.g. \"Troubleshooting\""`
}

// ReadOutput is read_note's result.
type ReadOutput struct {
	Path       string `json:"path"`
	Title      string `json:"title"`
	Chunk      int    `json:"chunk" jsonschema:"the first chunk returned"`
	ChunkCount int    `json:"chunkCount" jsonschema:"how many chunks the note has"`
	Heading    string `json:"heading,omitempty" jsonschema:"heading path of the text returned"`
	Content    string `json:"content"`
	// NextChunk is the chunk to read next; absent at the end of the note.
	NextChunk *int     `json:"nextChunk,omitempty" jsonschema:"the chunk that follows the text returned; absent at the end of the note"`
	Headings  []string `json:"headings" jsonschema:"the note's headings, # marks giving the level"`
	Links     []string `json:"links" jsonschema:"the note's outgoing links as written (targets)"`
	Tags      []string `json:"tags"`
	Modified  string   `json:"modified" jsonschema:"modification date, YYYY-MM-DD"`
	// FrontmatterError reports a frontmatter block that failed to parse.
	FrontmatterError string `json:"frontmatterError,omitempty"`
}

func (s *Server) readNote(ctx context.Context, req *sdk.CallToolRequest, in ReadInput) (*sdk.CallToolResult, ReadOutput, error) {
	var out ReadOutput
	if in.Chunk != nil && strings.TrimSpace(in.Heading) != "" {
		return nil, out, errors.New("give either chunk or heading, not both")
	}
	n, err := s.lookupNote(ctx, req, in.Path)
	if err != nil {
		return nil, out, err
	}
	chunks := n.Chunks
	if len(chunks) == 0 {
		chunks = []vault.Chunk{{}}
	}
	first, last := 0, 0
	switch {
	case strings.TrimSpace(in.Heading) != "":
		first, last, err = sectionChunks(chunks, n.Headings, in.Heading)
		if err != nil {
			return nil, out, fmt.Errorf("%s: %v", n.Path, err)
		}
	case in.Chunk != nil:
		first = *in.Chunk
		if first < 0 || first >= len(chunks) {
			return nil, out, fmt.Errorf("chunk %d is out of range: %s has %d chunk(s), 0 to %d", first, n.Path, len(chunks), len(chunks)-1)
		}
		last = first
	}
	var content strings.Builder
	runes := 0
	end := first
	for i := first; i <= last; i++ {
		k := len([]rune(chunks[i].Text))
		if i > first && runes+k > maxSectionRunes {
			break
		}
		content.WriteString(chunks[i].Text)
		runes += k
		end = i
	}
	out = ReadOutput{
		Path: n.Path, Title: n.Title, Chunk: first, ChunkCount: len(chunks), Heading: chunks[first].Heading,
		Content: content.String(), Headings: headingList(n.Headings), Links: linkList(n.Links), Tags: nonNil(n.Tags),
		Modified: day(n.ModTime), FrontmatterError: n.FrontmatterError,
	}
	if end+1 < len(chunks) {
		next := end + 1
		out.NextChunk = &next
	}
	return result(renderNote(out)), out, nil
}

// sectionChunks finds the chunks of the section under heading: the chunk
// whose heading path ends with it (or equals it, or, failing both,
// contains it; case ignored) and the chunks of its subsections after it.
func sectionChunks(chunks []vault.Chunk, headings []vault.Heading, heading string) (first, last int, err error) {
	want := strings.ToLower(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(heading), "#")))
	rules := []func(hp string) bool{
		func(hp string) bool { return hp == want },
		func(hp string) bool { return hp == want || strings.HasSuffix(hp, " > "+want) },
		func(hp string) bool { return strings.Contains(hp, want) },
	}
	for _, rule := range rules {
		for i, c := range chunks {
			hp := strings.ToLower(c.Heading)
			if c.Heading == "" || !rule(hp) {
				continue
			}
			last = i
			for j := i + 1; j < len(chunks); j++ {
				if h := strings.ToLower(chunks[j].Heading); h != hp && !strings.HasPrefix(h, hp+" > ") {
					break
				}
				last = j
			}
			return i, last, nil
		}
	}
	names := headingList(headings)
	if len(names) == 0 {
		return 0, 0, fmt.Errorf("no heading %q: the note has no headings; read it by chunk", heading)
	}
	return 0, 0, fmt.Errorf("no heading %q; the note's headings are: %s", heading, strings.Join(names, " | "))
}

// ---- list_notes

// ListInput are list_notes' arguments.
type ListInput struct {
	Folder string `json:"folder,omitempty" jsonschema:"only notes under this folder, e.g. \"projects/alpha\""`
	Tag    string `json:"tag,omitempty" jsonschema:"only notes with this tag, nested tags included, e.g. \"project\""`
	Since  string `json:"since,omitempty" jsonschema:"only notes modified or dated on or after this day: 2026-03-01, or words such as \"last week\""`
	Until  string `json:"until,omitempty" jsonschema:"only notes modified or dated on or before this day: 2026-03-31, or words such as \"last week\""`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many notes to return: 1 to 500, default 50"`
}

// ListOutput is list_notes' and notes_in_range's result.
type ListOutput struct {
	Notes []NoteEntry `json:"notes"`
	// Total counts every matching note, not only those listed.
	Total int `json:"total" jsonschema:"how many notes match in all"`
	// Range is the period notes_in_range resolved.
	Range *Period `json:"range,omitempty"`
}

// NoteEntry is one listed note.
type NoteEntry struct {
	Path     string `json:"path"`
	Title    string `json:"title"`
	Modified string `json:"modified" jsonschema:"modification date, YYYY-MM-DD"`
	Date     string `json:"date,omitempty" jsonschema:"the note's own date (frontmatter date/created, or from its file name), YYYY-MM-DD"`
}

// Period is a resolved time expression.
type Period struct {
	Expression  string `json:"expression"`
	Start       string `json:"start" jsonschema:"first moment, RFC 3339"`
	End         string `json:"end" jsonschema:"last moment, RFC 3339"`
	Description string `json:"description"`
}

func (s *Server) listNotes(ctx context.Context, req *sdk.CallToolRequest, in ListInput) (*sdk.CallToolResult, ListOutput, error) {
	var out ListOutput
	folders, err := cleanFolders([]string{in.Folder})
	if err != nil {
		return nil, out, err
	}
	tags, err := cleanTags([]string{in.Tag})
	if err != nil {
		return nil, out, err
	}
	from, to, err := s.period(in.Since, in.Until)
	if err != nil {
		return nil, out, err
	}
	if err := s.ready(ctx, req.Session, req.Params.GetProgressToken()); err != nil {
		return nil, out, err
	}
	var picked []search.NoteMeta
	for _, m := range s.cfg.Vault.Notes() {
		if (len(folders) == 0 || underFolder(m.Path, folders[0])) && (len(tags) == 0 || hasTag(m.Tags, tags[0])) && inPeriod(m, from, to) {
			picked = append(picked, m)
		}
	}
	sort.SliceStable(picked, func(i, j int) bool { return when(picked[i]).After(when(picked[j])) })
	out = entries(picked, clamp(in.Limit, defaultListLimit, maxListLimit))
	return result(renderList(out, listHeader(in, out))), out, nil
}

// ---- notes_in_range

// RangeInput are notes_in_range's arguments.
type RangeInput struct {
	TimeExpression string `json:"timeExpression" jsonschema:"the period in words or dates: \"yesterday\", \"last week\", \"2026-03\", \"last 30 days\""`
	Limit          int    `json:"limit,omitempty" jsonschema:"how many notes to return: 1 to 500, default 50"`
}

func (s *Server) notesInRange(ctx context.Context, req *sdk.CallToolRequest, in RangeInput) (*sdk.CallToolResult, ListOutput, error) {
	var out ListOutput
	expr := strings.TrimSpace(in.TimeExpression)
	if expr == "" {
		return nil, out, errors.New("timeExpression is empty: say a period such as \"last week\" or \"2026-03\"")
	}
	tr, err := s.cfg.Vault.TimeRange(expr, s.cfg.Now())
	if err != nil {
		return nil, out, err
	}
	if err := s.ready(ctx, req.Session, req.Params.GetProgressToken()); err != nil {
		return nil, out, err
	}
	var picked []search.NoteMeta
	for _, m := range s.cfg.Vault.Notes() {
		if inPeriod(m, tr.Start, tr.End) {
			picked = append(picked, m)
		}
	}
	sort.SliceStable(picked, func(i, j int) bool { return when(picked[i]).Before(when(picked[j])) })
	out = entries(picked, clamp(in.Limit, defaultListLimit, maxListLimit))
	out.Range = &Period{Expression: expr, Start: tr.Start.Format(time.RFC3339), End: tr.End.Format(time.RFC3339), Description: tr.Description}
	header := fmt.Sprintf("%s (%s): %d note(s) modified or dated in the period", expr, tr.Description, out.Total)
	return result(renderList(out, header)), out, nil
}

// ---- list_tags

// TagsInput are list_tags' arguments (none).
type TagsInput struct{}

// TagsOutput is list_tags' result.
type TagsOutput struct {
	Tags  []TagEntry `json:"tags"`
	Total int        `json:"total" jsonschema:"how many distinct tags the vault has"`
}

// TagEntry is one tag and its number of notes.
type TagEntry struct {
	Tag   string `json:"tag" jsonschema:"the tag without #"`
	Notes int    `json:"notes"`
}

func (s *Server) listTags(ctx context.Context, req *sdk.CallToolRequest, _ TagsInput) (*sdk.CallToolResult, TagsOutput, error) {
	var out TagsOutput
	if err := s.ready(ctx, req.Session, req.Params.GetProgressToken()); err != nil {
		return nil, out, err
	}
	tags := s.cfg.Vault.Tags()
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].Count > tags[j].Count })
	out = TagsOutput{Tags: make([]TagEntry, 0, min(len(tags), maxTags)), Total: len(tags)}
	for _, t := range tags[:min(len(tags), maxTags)] {
		out.Tags = append(out.Tags, TagEntry{Tag: t.Tag, Notes: t.Count})
	}
	return result(renderTags(out)), out, nil
}

// ---- links

// LinksInput are links' arguments.
type LinksInput struct {
	Path string `json:"path" jsonschema:"the note: a vault path, a path without .md, a [[wikilink]] or a file name"`
}

// LinksOutput is links' result.
type LinksOutput struct {
	Path      string    `json:"path"`
	Title     string    `json:"title"`
	Outgoing  []LinkOut `json:"outgoing" jsonschema:"what the note links to, in order, each target once (at most 100)"`
	Backlinks []LinkIn  `json:"backlinks" jsonschema:"the notes that link to this one (at most 100)"`
	// The totals count every link target and every linking note, listed
	// or not.
	OutgoingTotal int `json:"outgoingTotal"`
	BacklinkTotal int `json:"backlinkTotal"`
}

// LinkOut is one outgoing link.
type LinkOut struct {
	Target string `json:"target" jsonschema:"the link target as written"`
	// Path is the note the target resolves to; absent when it resolves to
	// none (an unresolved link, or a link to an attachment).
	Path    string `json:"path,omitempty" jsonschema:"the note it resolves to; absent when unresolved"`
	Heading string `json:"heading,omitempty"`
	Embed   bool   `json:"embed,omitempty"`
}

// LinkIn is one backlink.
type LinkIn struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	// Count is how many times that note links here.
	Count int `json:"count"`
}

func (s *Server) linksTool(ctx context.Context, req *sdk.CallToolRequest, in LinksInput) (*sdk.CallToolResult, LinksOutput, error) {
	var out LinksOutput
	n, err := s.lookupNote(ctx, req, in.Path)
	if err != nil {
		return nil, out, err
	}
	notes := s.cfg.Vault.Notes()
	paths, titles := pathsAndTitles(notes)
	out = LinksOutput{Path: n.Path, Title: n.Title, Outgoing: []LinkOut{}, Backlinks: []LinkIn{}}
	seen := map[string]bool{}
	for _, l := range n.Links {
		key := l.Target + "#" + l.Heading
		if seen[key] || l.Target == "" {
			continue
		}
		seen[key] = true
		out.OutgoingTotal++
		if len(out.Outgoing) < maxLinkList {
			out.Outgoing = append(out.Outgoing, LinkOut{Target: l.Target, Heading: l.Heading, Embed: l.Embed, Path: resolveLink(l, n.Path, paths)})
		}
	}
	back, err := s.links.backlinks(ctx, n.Path, notes, paths)
	if err != nil {
		if ctx.Err() != nil {
			return nil, out, ctx.Err()
		}
		return nil, out, fmt.Errorf("backlinks of %s: %v", n.Path, err)
	}
	out.BacklinkTotal = len(back)
	for _, b := range back[:min(len(back), maxLinkList)] {
		out.Backlinks = append(out.Backlinks, LinkIn{Path: b.path, Title: titles[b.path], Count: b.count})
	}
	return result(renderLinks(out)), out, nil
}

// ---- shared helpers

// lookupNote waits for the index and finds the note name stands for.
func (s *Server) lookupNote(ctx context.Context, req *sdk.CallToolRequest, name string) (*vault.Note, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("path is empty: give a note's vault path, e.g. \"projects/Alpha.md\" (search_notes finds them)")
	}
	if err := s.ready(ctx, req.Session, req.Params.GetProgressToken()); err != nil {
		return nil, err
	}
	n, err := s.cfg.Vault.Note(ctx, name)
	if err != nil {
		return nil, noteError(name, err)
	}
	return n, nil
}

// pathsAndTitles returns the paths of notes and their titles by path.
func pathsAndTitles(notes []search.NoteMeta) ([]string, map[string]string) {
	paths := make([]string, len(notes))
	titles := make(map[string]string, len(notes))
	for i, m := range notes {
		paths[i] = m.Path
		titles[m.Path] = m.Title
	}
	return paths, titles
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

// cleanTags normalizes tag filters: "#Project" -> "project". Blank entries
// are dropped.
func cleanTags(in []string) ([]string, error) {
	var out []string
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "#")))
		if t == "" {
			continue
		}
		if strings.ContainsAny(t, " \t\n,") {
			return nil, fmt.Errorf("tag %q: a tag has no spaces or commas; give each tag as its own entry", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// cleanFolders normalizes folder filters to "a/b/" and refuses any that
// would leave the vault. Blank entries (and "/" or ".") are dropped.
func cleanFolders(in []string) ([]string, error) {
	var out []string
	for _, f := range in {
		raw := f
		f = strings.TrimSpace(strings.ReplaceAll(f, `\`, "/"))
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, "/") || strings.ContainsRune(f, 0) || (len(f) > 1 && f[1] == ':') {
			return nil, fmt.Errorf("folder %q is not inside the vault: give a folder relative to the vault, e.g. \"projects/alpha\"", raw)
		}
		c := path.Clean(f)
		if c == ".." || strings.HasPrefix(c, "../") {
			return nil, fmt.Errorf("folder %q is outside the vault: give a folder relative to the vault, e.g. \"projects/alpha\"", raw)
		}
		if c == "." {
			continue
		}
		out = append(out, c+"/")
	}
	return out, nil
}

func underFolder(p, folder string) bool {
	return len(p) > len(folder) && strings.EqualFold(p[:len(folder)], folder)
}

func hasTag(tags []string, want string) bool {
	for _, t := range tags {
		if t == want || strings.HasPrefix(t, want+"/") {
			return true
		}
	}
	return false
}

// period parses since and until: a day (2026-03-01), a moment (RFC 3339)
// or a time expression, whose start (for since) or end (for until) is
// taken.
func (s *Server) period(since, until string) (from, to time.Time, err error) {
	if from, err = s.bound("since", since, false); err != nil {
		return
	}
	if to, err = s.bound("until", until, true); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		err = fmt.Errorf("since (%s) is after until (%s)", from.Format("2006-01-02"), to.Format("2006-01-02"))
	}
	return
}

func (s *Server) bound(field, v string, end bool) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Millisecond)
		}
		return t, nil
	}
	tr, err := s.cfg.Vault.TimeRange(v, s.cfg.Now())
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %v", field, err)
	}
	if end {
		return tr.End, nil
	}
	return tr.Start, nil
}

// inPeriod tells whether a note was modified or is dated within [from, to]
// (either bound may be open), as search's time filter does.
func inPeriod(m search.NoteMeta, from, to time.Time) bool {
	in := func(t time.Time) bool {
		return !t.IsZero() && (from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to))
	}
	if from.IsZero() && to.IsZero() {
		return true
	}
	return in(m.MTime) || in(m.Date)
}

// when is the time a note is about: its own date, else its modification.
func when(m search.NoteMeta) time.Time {
	if !m.Date.IsZero() {
		return m.Date
	}
	return m.MTime
}

func entries(notes []search.NoteMeta, limit int) ListOutput {
	out := ListOutput{Notes: make([]NoteEntry, 0, min(len(notes), limit)), Total: len(notes)}
	for _, m := range notes[:min(len(notes), limit)] {
		e := NoteEntry{Path: m.Path, Title: m.Title, Modified: day(m.MTime)}
		if !m.Date.IsZero() {
			e.Date = day(m.Date)
		}
		out.Notes = append(out.Notes, e)
	}
	return out
}

func listHeader(in ListInput, out ListOutput) string {
	var filters []string
	if f := strings.TrimSpace(in.Folder); f != "" {
		filters = append(filters, "under "+f)
	}
	if t := strings.TrimSpace(in.Tag); t != "" {
		filters = append(filters, "tagged #"+strings.TrimPrefix(t, "#"))
	}
	if in.Since != "" {
		filters = append(filters, "since "+in.Since)
	}
	if in.Until != "" {
		filters = append(filters, "until "+in.Until)
	}
	h := fmt.Sprintf("%d note(s)", out.Total)
	if len(filters) > 0 {
		h += " " + strings.Join(filters, ", ")
	}
	return h + ", newest first"
}

func headingList(hs []vault.Heading) []string {
	out := make([]string, 0, min(len(hs), maxNoteHeadings))
	for _, h := range hs[:min(len(hs), maxNoteHeadings)] {
		out = append(out, strings.Repeat("#", max(h.Level, 1))+" "+h.Text)
	}
	return out
}

func linkList(ls []vault.Link) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range ls {
		t := l.Target
		if l.Heading != "" {
			t += "#" + l.Heading
		}
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if len(out) == maxNoteLinks {
			break
		}
		out = append(out, t)
	}
	return out
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
