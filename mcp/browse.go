package mcp

// list_notes, notes_in_range, list_tags and links: browsing the vault.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/shared"
)

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
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, out, err
	}
	picked := pickNotes(ix, true, func(m search.NoteMeta) bool {
		return (len(folders) == 0 || underFolder(m.Path, folders[0])) && (len(tags) == 0 || hasTag(m.Tags, tags[0])) && inPeriod(m, from, to)
	})
	out = entries(picked, clamp(in.Limit, defaultListLimit, maxListLimit))
	return result(renderList(out, listHeader(in, out))), out, nil
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

// pickNotes returns the indexed notes keep accepts, ordered by when: the
// newest or the oldest first.
func pickNotes(ix *shared.Index, newestFirst bool, keep func(search.NoteMeta) bool) []search.NoteMeta {
	var picked []search.NoteMeta
	for _, m := range ix.Notes() {
		if keep(m) {
			picked = append(picked, m)
		}
	}
	sort.SliceStable(picked, func(i, j int) bool {
		if newestFirst {
			return when(picked[i]).After(when(picked[j]))
		}
		return when(picked[i]).Before(when(picked[j]))
	})
	return picked
}

// when is the time a note is about: its own date, else its modification.
func when(m search.NoteMeta) time.Time {
	if !m.Date.IsZero() {
		return m.Date
	}
	return m.MTime
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
	tr, err := s.timeRange(expr)
	if err != nil {
		return nil, out, err
	}
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, out, err
	}
	picked := pickNotes(ix, false, func(m search.NoteMeta) bool { return inPeriod(m, tr.Start, tr.End) })
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
	ix, err := s.index(ctx, req)
	if err != nil {
		return nil, out, err
	}
	tags := ix.Tags()
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
	ix, n, err := s.lookupNote(ctx, req, in.Path)
	if err != nil {
		return nil, out, err
	}
	links, err := search.LinksOf(ctx, ix, n, maxLinkList)
	if err != nil {
		if ctx.Err() != nil {
			return nil, out, ctx.Err()
		}
		return nil, out, fmt.Errorf("backlinks of %s: %v", n.Path, err)
	}
	out = LinksOutput{Path: n.Path, Title: n.Title, Outgoing: []LinkOut{}, Backlinks: []LinkIn{},
		OutgoingTotal: links.OutgoingTotal, BacklinkTotal: links.BacklinkTotal}
	for _, l := range links.Outgoing {
		out.Outgoing = append(out.Outgoing, LinkOut{Target: l.Target, Heading: l.Heading, Embed: l.Embed, Path: l.Path})
	}
	for _, b := range links.Backlinks {
		out.Backlinks = append(out.Backlinks, LinkIn{Path: b.Path, Title: b.Title, Count: b.Count})
	}
	return result(renderLinks(out)), out, nil
}
