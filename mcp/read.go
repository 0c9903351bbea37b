package mcp

// search_notes and read_note: finding notes and reading them by chunk or
// section.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// ---- search_notes

// SearchInput are search_notes' arguments.
type SearchInput struct {
	Query   string   `json:"query" jsonschema:"what to look for, in the query language of the tool description; may be empty when filters are given; at most 4096 bytes and 64 words"`
	Limit   int      `json:"limit,omitempty" jsonschema:"how many notes to return: 1 to 50, default 10"`
	Tags    []string `json:"tags,omitempty" jsonschema:"only notes with any of these tags, nested tags included, e.g. [\"project\"]"`
	Folders []string `json:"folders,omitempty" jsonschema:"only notes under any of these folders, e.g. [\"journal\"]"`
	Since   string   `json:"since,omitempty" jsonschema:"only notes modified or dated on or after this day: 2026-03-01, or words such as \"last month\""`
	Until   string   `json:"until,omitempty" jsonschema:"only notes modified or dated on or before this day: 2026-03-31, or words such as \"last month\""`
	Mode    string   `json:"mode,omitempty" jsonschema:"lexical (words), semantic (meaning, for notes that use other words) or hybrid (both; the default when the vault has an embedding model)"`
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
	// Matches are the lines where line:, block:, section: and the task
	// operators of the query matched.
	Matches []MatchLine `json:"matches,omitempty" jsonschema:"the lines where the query's line:, block:, section: or task operators matched"`
}

// MatchLine is a line of a note where an operator of the query matched.
type MatchLine struct {
	Line int    `json:"line" jsonschema:"1-based line in the file"`
	Text string `json:"text"`
	Kind string `json:"kind" jsonschema:"the operator: line, block, section, task, task-todo or task-done"`
}

func (s *Server) searchNotes(ctx context.Context, req *sdk.CallToolRequest, in SearchInput) (*sdk.CallToolResult, SearchOutput, error) {
	var out SearchOutput
	sreq := search.Request{Query: strings.TrimSpace(in.Query), Limit: clamp(in.Limit, defaultSearchLimit, maxSearchLimit), Mode: in.Mode}
	switch in.Mode {
	case "", search.ModeLexical, search.ModeSemantic, search.ModeHybrid:
	default:
		return nil, out, fmt.Errorf("mode must be lexical, semantic or hybrid, got %q", in.Mode)
	}
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
	svc, err := s.vault(ctx, req.Session, req.Params.GetProgressToken())
	if err != nil {
		return nil, out, err
	}
	res, err := svc.Search(ctx, sreq)
	if err != nil {
		if errors.Is(err, service.ErrNoEmbedder) {
			return nil, out, err
		}
		if errors.Is(err, search.ErrBadQuery) || errors.Is(err, search.ErrEmptyQuery) {
			return nil, out, fmt.Errorf("%v. %s", err, queryLanguage)
		}
		return nil, out, fmt.Errorf("search failed: %v", err)
	}
	out = SearchOutput{Query: sreq.Query, Hits: make([]SearchHit, 0, len(res.Results)), Total: res.Total, Fuzzy: res.Fuzzy, Partial: res.Partial}
	for _, r := range res.Results {
		h := SearchHit{Path: r.Path, Title: r.Title, Heading: r.Heading, Score: round2(r.Score), Chunk: r.ChunkIndex}
		for _, m := range r.Matches {
			h.Matches = append(h.Matches, MatchLine{Line: m.Line, Text: m.Text, Kind: m.Kind})
		}
		out.Hits = append(out.Hits, h)
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
	_, n, err := s.lookupNote(ctx, req, in.Path)
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

// ---- related_notes

// RelatedInput are related_notes' arguments.
type RelatedInput struct {
	Path  string `json:"path" jsonschema:"the note: a vault path, a path without .md, a [[wikilink]] or a file name"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many notes to return: 1 to 50, default 10"`
}

func (s *Server) relatedNotes(ctx context.Context, req *sdk.CallToolRequest, in RelatedInput) (*sdk.CallToolResult, SearchOutput, error) {
	var out SearchOutput
	if strings.TrimSpace(in.Path) == "" {
		return nil, out, errors.New("path is empty: give a note's vault path, e.g. \"projects/Alpha.md\" (search_notes finds them)")
	}
	svc, err := s.vault(ctx, req.Session, req.Params.GetProgressToken())
	if err != nil {
		return nil, out, err
	}
	res, err := svc.Related(ctx, in.Path, clamp(in.Limit, defaultSearchLimit, maxSearchLimit))
	if err != nil {
		return nil, out, err
	}
	out = SearchOutput{Query: "related to " + in.Path, Hits: make([]SearchHit, 0, len(res.Results)), Total: len(res.Results)}
	for _, r := range res.Results {
		out.Hits = append(out.Hits, SearchHit{Path: r.Path, Title: r.Title, Heading: r.Heading, Score: round2(r.Score), Chunk: r.ChunkIndex,
			Snippet: cleanSnippet(r.Snippet, snippetBytes)})
	}
	return result(renderSearch(out)), out, nil
}
