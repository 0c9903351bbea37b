package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Tool and prompt versions referenced by events (tool_version,
// prompt_version). Bump a tool's version when its arguments or result
// change shape.
const (
	toolsVersion  = "1.0.0"
	PromptVersion = "react-1.1.0"
)

// toolEnv is all a vault tool may touch: never the run's state (see Tool).
type toolEnv struct {
	index   Index
	related Relater // nil: no relatedNotes tool
	logger  *slog.Logger
	now     func() time.Time
}

// TimeRange bounds note times (modification or own date) in epoch milliseconds.
type TimeRange struct {
	StartTime int64 `json:"startTime" jsonschema:"start of the range, epoch milliseconds"`
	EndTime   int64 `json:"endTime" jsonschema:"end of the range, epoch milliseconds"`
}

// LocalSearchArgs are the arguments of localSearch.
type LocalSearchArgs struct {
	Query        string     `json:"query" jsonschema:"what to look for; supports \"phrases\", -exclusions, OR, tag:#x, path:folder/, file:name and Obsidian's operators: line:(a b), section:(a b), task-todo:word, [property:value], /regex/"`
	SalientTerms []string   `json:"salientTerms,omitempty" jsonschema:"the most important keywords of the query"`
	TimeRange    *TimeRange `json:"timeRange,omitempty" jsonschema:"only notes modified or dated in this range (use getTimeRangeMs to compute it)"`
	Mode         string     `json:"mode,omitempty" jsonschema:"lexical (words), semantic (meaning) or hybrid (both; the default when the vault has vectors)"`
}

// LocalSearchResult is the result of localSearch.
type LocalSearchResult struct {
	Query   string          `json:"query"`
	Results []search.Result `json:"results"`
	Total   int             `json:"total"`
	Fuzzy   bool            `json:"fuzzy,omitempty"`
	Partial bool            `json:"partial,omitempty"`
	Hint    string          `json:"hint,omitempty"`
	// Terms are the words searched for with their weight in the vault
	// (rare words say most about which note is meant).
	Terms []search.TermWeight `json:"terms,omitempty"`
}

// ReadNoteArgs are the arguments of readNote.
type ReadNoteArgs struct {
	NotePath   string `json:"notePath" jsonschema:"the note to read: a vault path, a title, or a [[wikilink]]"`
	ChunkIndex *int   `json:"chunkIndex,omitempty" jsonschema:"which section to read (0-based); long notes are split into chunks"`
}

// GetTimeRangeArgs are the arguments of getTimeRangeMs.
type GetTimeRangeArgs struct {
	TimeExpression string `json:"timeExpression" jsonschema:"a time expression such as \"last week\", \"yesterday\", \"2026-03\", \"last 30 days\""`
}

// NoArgs is the argument type of tools that take none.
type NoArgs struct{}

// FileTree is the result of getFileTree.
type FileTree struct {
	Total     int          `json:"total"`
	Folders   []FolderInfo `json:"folders"`
	Files     []string     `json:"files"`
	Truncated bool         `json:"truncated,omitempty"`
}

// FolderInfo is one folder and its number of notes (recursively).
type FolderInfo struct {
	Path  string `json:"path"`
	Notes int    `json:"notes"`
}

// maxTreeFiles caps getFileTree's file list so a 20,000-note vault does not
// flood the model's context.
const maxTreeFiles = 300

// maxTags caps getTagList.
const maxTags = 200

type schemaT = jsonschema.Schema

func minLen(s *jsonschema.Schema, field string, n int) {
	if p := s.Properties[field]; p != nil {
		p.MinLength = &n
	}
}

// builtinTools returns the vault tools offered in every mode.
func builtinTools() []*Tool {
	return []*Tool{
		defineTool(toolSpec[LocalSearchArgs]{
			name:    ToolLocalSearch,
			version: toolsVersion,
			description: "Search the notes of the vault. Returns the best matching notes with a snippet of the matching section. " +
				"Supports \"exact phrases\", -exclusions, OR, tag:#tag (nested tags included), path:folder/ and file:name, and Obsidian's " +
				"operators: content:word, line:(a b) (a line with both), block:(a b), section:(a b), task:word, task-todo:word (open tasks), " +
				"task-done:word, [property], [property:value], [property:>5], /regex/. Results of line:, section: and task operators list the lines that matched.",
			timeout: 15 * time.Second,
			tune: func(s *jsonschema.Schema) {
				minLen(s, "query", 1)
				if p := s.Properties["mode"]; p != nil {
					p.Enum = []any{search.ModeLexical, search.ModeSemantic, search.ModeHybrid}
				}
			},
			before: repeatedSearch,
			run:    runLocalSearch,
			after: func(r *runState, a LocalSearchArgs, out any) {
				res := out.(*LocalSearchResult)
				r.searchDone(res.Query, a.TimeRange, res)
			},
			summary: func(a LocalSearchArgs) string { return fmt.Sprintf("Searching notes for %q", a.Query) },
			outcome: func(out any) string {
				r := out.(*LocalSearchResult)
				if r.Hint != "" {
					return "Skipped a repeated search"
				}
				return fmt.Sprintf("Found %d relevant note%s", len(r.Results), plural(len(r.Results)))
			},
		}),
		defineTool(toolSpec[ReadNoteArgs]{
			name:    ToolReadNote,
			version: toolsVersion,
			description: "Read one note (or one section of a long note). Returns the text of the chunk, the number of chunks, " +
				"the note's headings, links and tags. Read further chunks with chunkIndex.",
			timeout: 10 * time.Second,
			tune:    func(s *jsonschema.Schema) { minLen(s, "notePath", 1) },
			run: func(ctx context.Context, env toolEnv, a ReadNoteArgs) (any, error) {
				chunk := 0
				if a.ChunkIndex != nil {
					chunk = *a.ChunkIndex
				}
				out, err := env.index.ReadChunk(a.NotePath, chunk)
				if err != nil {
					return nil, toolErrorf("%v%s", err, nearestNotes(ctx, env.index, a.NotePath, err))
				}
				return out, nil
			},
			after:   func(r *runState, _ ReadNoteArgs, out any) { r.noteRead(out.(*search.NoteChunk)) },
			summary: func(a ReadNoteArgs) string { return fmt.Sprintf("Reading %s", noteLabel(a.NotePath)) },
			outcome: func(out any) string {
				n := out.(*search.NoteChunk)
				if n.ChunkCount > 1 {
					return fmt.Sprintf("Read %s (part %d of %d)", n.Title, n.ChunkIndex+1, n.ChunkCount)
				}
				return fmt.Sprintf("Read %s", n.Title)
			},
		}),
		defineTool(toolSpec[NoArgs]{
			name:        ToolFileTree,
			version:     toolsVersion,
			description: "List the vault's folders with their note counts and the note paths (capped for large vaults).",
			timeout:     5 * time.Second,
			run: func(ctx context.Context, env toolEnv, _ NoArgs) (any, error) {
				return fileTree(env.index.Paths()), nil
			},
			summary: func(NoArgs) string { return "Listing the vault's folders" },
			outcome: func(out any) string {
				t := out.(*FileTree)
				return fmt.Sprintf("Listed %d notes in %d folders", t.Total, len(t.Folders))
			},
		}),
		defineTool(toolSpec[NoArgs]{
			name:        ToolTagList,
			version:     toolsVersion,
			description: "List the tags used in the vault with how many notes carry each, most used first.",
			timeout:     5 * time.Second,
			run: func(ctx context.Context, env toolEnv, _ NoArgs) (any, error) {
				tags := env.index.Tags()
				sort.SliceStable(tags, func(i, j int) bool { return tags[i].Count > tags[j].Count })
				total := len(tags)
				if len(tags) > maxTags {
					tags = tags[:maxTags]
				}
				if tags == nil {
					tags = []search.TagCount{}
				}
				return map[string]any{"tags": tags, "total": total}, nil
			},
			summary: func(NoArgs) string { return "Listing tags" },
			outcome: func(out any) string {
				return fmt.Sprintf("Found %d tags", out.(map[string]any)["total"])
			},
		}),
		defineTool(toolSpec[GetTimeRangeArgs]{
			name:        ToolTimeRange,
			version:     toolsVersion,
			description: "Turn a time expression (\"last week\", \"yesterday\", \"2026-03\", \"last 30 days\", \"in March\") into a start and end time in epoch milliseconds, for localSearch's timeRange.",
			timeout:     2 * time.Second,
			tune:        func(s *jsonschema.Schema) { minLen(s, "timeExpression", 1) },
			run: func(ctx context.Context, env toolEnv, a GetTimeRangeArgs) (any, error) {
				r, err := search.ParseTimeRange(a.TimeExpression, env.now())
				if err != nil {
					return nil, toolErrorf("%v", err)
				}
				return r, nil
			},
			summary: func(a GetTimeRangeArgs) string { return fmt.Sprintf("Working out the dates of %q", a.TimeExpression) },
			outcome: func(out any) string { return "Calculated time range: " + out.(*search.DateRange).Description },
		}),
		defineTool(toolSpec[NoArgs]{
			name:        ToolCurrentTime,
			version:     toolsVersion,
			description: "Get the current date and time.",
			timeout:     time.Second,
			run: func(ctx context.Context, env toolEnv, _ NoArgs) (any, error) {
				now := env.now()
				zone, _ := now.Zone()
				return map[string]any{
					"epochMs":  now.UnixMilli(),
					"iso":      now.Format(time.RFC3339),
					"weekday":  now.Weekday().String(),
					"timezone": zone,
				}, nil
			},
			summary: func(NoArgs) string { return "Checking the current time" },
			outcome: func(out any) string { return "Got the current time" },
		}),
	}
}

// nearestNotes suggests notes for a name that resolves to none and whose
// lookup found no close spelling: the best matches of a search for its
// words, as "; nearest notes: ...".
func nearestNotes(ctx context.Context, ix Index, name string, err error) string {
	if !errors.Is(err, vault.ErrNotFound) || strings.Contains(err.Error(), "did you mean") {
		return ""
	}
	words := strings.Join(strings.FieldsFunc(noteLabel(name), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
	if words == "" {
		return ""
	}
	res, serr := ix.Search(ctx, search.Request{Query: words, Limit: 3})
	if serr != nil || len(res.Results) == 0 {
		return ""
	}
	quoted := make([]string, len(res.Results))
	for i, r := range res.Results {
		quoted[i] = strconv.Quote(r.Path)
	}
	return "; did you mean " + strings.Join(quoted, ", ") + "?"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func noteLabel(p string) string {
	p = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p), "[["), "]]")
	if i := strings.IndexAny(p, "|#"); i >= 0 {
		p = p[:i]
	}
	return strings.TrimSuffix(path.Base(p), ".md")
}

// searchQuery is the query localSearch runs for its arguments.
func searchQuery(a LocalSearchArgs) string {
	query := strings.TrimSpace(a.Query)
	if query == "" && len(a.SalientTerms) > 0 {
		query = strings.Join(a.SalientTerms, " ")
	}
	return query
}

// repeatedSearch answers a near-duplicate of an earlier search of the run
// with a hint instead of running it again.
func repeatedSearch(r *runState, a LocalSearchArgs) (any, bool) {
	query := searchQuery(a)
	prev, dup := r.duplicateSearch(query, a.TimeRange)
	if !dup {
		return nil, false
	}
	return &LocalSearchResult{
		Query:   query,
		Results: []search.Result{},
		Hint: fmt.Sprintf("This search is nearly the same as an earlier one (%q), whose results you already have. "+
			"Read the notes it found with readNote, search for different terms, or answer.", prev),
	}, true
}

func runLocalSearch(ctx context.Context, env toolEnv, a LocalSearchArgs) (any, error) {
	query := searchQuery(a)
	req := search.Request{Query: query, Limit: 8, Mode: a.Mode}
	if a.TimeRange != nil {
		if a.TimeRange.StartTime > 0 {
			req.From = time.UnixMilli(a.TimeRange.StartTime)
		}
		if a.TimeRange.EndTime > 0 {
			req.To = time.UnixMilli(a.TimeRange.EndTime)
		}
	}
	res, err := env.index.Search(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, toolErrorf("search failed: %v", err)
	}
	out := &LocalSearchResult{Query: query, Results: make([]search.Result, 0, len(res.Results)), Total: res.Total, Fuzzy: res.Fuzzy, Partial: res.Partial, Terms: roundWeights(res.Match.Terms)}
	for _, r := range res.Results {
		r.Score = roundScore(r.Score)
		out.Results = append(out.Results, r)
	}
	if out.Partial {
		out.Hint = "No note matched all the terms; these notes match only some of them. Check they are relevant, or search again with other words."
	}
	return out, nil
}

// roundWeights rounds the terms' weights as scores are, for a shorter
// result.
func roundWeights(ts []search.TermWeight) []search.TermWeight {
	out := make([]search.TermWeight, len(ts))
	for i, t := range ts {
		t.IDF = roundTo(t.IDF, 100)
		out[i] = t
	}
	return out
}

func roundScore(f float64) float64 { return roundTo(f, 1000) }

// roundTo rounds a non-negative f to the nearest multiple of 1/scale.
func roundTo(f, scale float64) float64 {
	return float64(int64(f*scale+0.5)) / scale
}

// fileTree groups note paths by folder.
func fileTree(paths []string) *FileTree {
	counts := map[string]int{}
	for _, p := range paths {
		dir := path.Dir(p)
		for dir != "." && dir != "/" {
			counts[dir]++
			dir = path.Dir(dir)
		}
	}
	t := &FileTree{Total: len(paths), Folders: make([]FolderInfo, 0, len(counts))}
	for d, n := range counts {
		t.Folders = append(t.Folders, FolderInfo{Path: d + "/", Notes: n})
	}
	sort.Slice(t.Folders, func(i, j int) bool { return t.Folders[i].Path < t.Folders[j].Path })
	files := paths
	if len(files) > maxTreeFiles {
		files = files[:maxTreeFiles]
		t.Truncated = true
	}
	t.Files = append([]string{}, files...)
	return t
}
