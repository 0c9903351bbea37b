package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

func TestToolsAndSchemas(t *testing.T) {
	e := newEnv(t, envOptions{})
	res, err := e.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"search_notes":           {"query", "limit", "tags", "folders", "since", "until", "mode"},
		"read_note":              {"path", "chunk", "heading"},
		"list_notes":             {"folder", "tag", "since", "until", "limit"},
		"list_tags":              {},
		"links":                  {"path"},
		"notes_in_range":         {"timeExpression", "limit"},
		"ask_vault":              {"question", "mode"},
		"list_tasks":             {"status", "text", "tag", "folder", "property", "dueBefore", "dueAfter", "since", "until", "limit"},
		"list_notes_by_property": {"query", "limit"},
		"daily_note":             {"date"},
	}
	required := map[string][]string{
		"search_notes": {"query"}, "read_note": {"path"}, "links": {"path"},
		"notes_in_range": {"timeExpression"}, "ask_vault": {"question"}, "list_notes_by_property": {"query"},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		props, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for a model: %q", tool.Name, tool.Description)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: not annotated readOnlyHint", tool.Name)
		}
		in := schemaMap(t, tool.InputSchema)
		if in["type"] != "object" {
			t.Errorf("%s: input schema type %v", tool.Name, in["type"])
		}
		got := keys(in["properties"])
		slices.Sort(got)
		slices.Sort(props)
		if !slices.Equal(got, props) {
			t.Errorf("%s: input properties %v, want %v", tool.Name, got, props)
		}
		req := keysOfList(in["required"])
		slices.Sort(req)
		if wantReq := required[tool.Name]; !slices.Equal(req, wantReq) && !(len(req) == 0 && len(wantReq) == 0) {
			t.Errorf("%s: required %v, want %v", tool.Name, req, wantReq)
		}
		out := schemaMap(t, tool.OutputSchema)
		if out["type"] != "object" || len(keys(out["properties"])) == 0 {
			t.Errorf("%s: no output schema: %v", tool.Name, out)
		}
	}
	for _, tool := range res.Tools {
		if tool.Name == "ask_vault" {
			mode := schemaMap(t, tool.InputSchema)["properties"].(map[string]any)["mode"].(map[string]any)
			if enum, _ := mode["enum"].([]any); len(enum) != 4 {
				t.Errorf("ask_vault mode enum %v", mode["enum"])
			}
			if tool.Annotations.OpenWorldHint == nil || *tool.Annotations.OpenWorldHint {
				t.Errorf("ask_vault with the offline model must not be open-world")
			}
		}
		if tool.Name == "search_notes" && !strings.Contains(tool.Description, "tag:#") {
			t.Errorf("search_notes does not document the query language: %s", tool.Description)
		}
	}
	init := e.cs.InitializeResult()
	if init.Instructions == "" || init.Capabilities.Resources == nil || !init.Capabilities.Resources.Subscribe {
		t.Errorf("initialize result: instructions %q, resources %+v", init.Instructions, init.Capabilities.Resources)
	}

	e2 := newEnv(t, envOptions{noAsk: true})
	res, err = e2.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "ask_vault" {
			t.Error("ask_vault offered without an agent")
		}
	}
}

func schemaMap(t *testing.T, s any) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keysOfList(v any) []string {
	l, _ := v.([]any)
	out := []string{}
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}

func TestSearchNotes(t *testing.T) {
	e := newEnv(t, envOptions{})
	out, txt := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "sourdough starter"})
	if len(out.Hits) == 0 || out.Hits[0].Path != "recipes/Sourdough Starter.md" {
		t.Fatalf("hits %+v", out.Hits)
	}
	for _, h := range out.Hits {
		if strings.Contains(h.Snippet, "**") || strings.Contains(h.Snippet, "[[") || h.Snippet == "" {
			t.Errorf("snippet not clean: %q", h.Snippet)
		}
		// At most 150 bytes of text between the two ellipses.
		if n := len(strings.TrimSuffix(strings.TrimPrefix(h.Snippet, "…"), "…")); n > 150 {
			t.Errorf("snippet of %d bytes: %q", n, h.Snippet)
		}
		if h.Title == "" || h.Score <= 0 || h.Chunk < 0 {
			t.Errorf("hit %+v", h)
		}
	}
	if !strings.Contains(txt, "recipes/Sourdough Starter.md") || !strings.Contains(txt, "chunk") {
		t.Errorf("text: %s", txt)
	}

	t.Run("filters", func(t *testing.T) {
		out, _ := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "starter", "folders": []string{"journal"}})
		if len(out.Hits) == 0 {
			t.Fatal("no journal hit")
		}
		for _, h := range out.Hits {
			if !strings.HasPrefix(h.Path, "journal/") {
				t.Errorf("folder filter let %s through", h.Path)
			}
		}
		out, _ = ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "", "tags": []string{"#Recipe"}, "limit": 100})
		if out.Total < 5 || len(out.Hits) != out.Total {
			t.Errorf("tag filter: %d of %d", len(out.Hits), out.Total)
		}
		// Daily notes are dated by their file names.
		out, _ = ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "", "folders": []string{"journal/"}, "since": "2026-03-10", "until": "2026-03-12"})
		var paths []string
		for _, h := range out.Hits {
			paths = append(paths, h.Path)
		}
		slices.Sort(paths)
		if !slices.Equal(paths, []string{"journal/2026-03-10.md", "journal/2026-03-12.md"}) {
			t.Errorf("since/until: %v", paths)
		}
	})

	t.Run("limit is clamped", func(t *testing.T) {
		out, _ := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "", "folders": []string{"journal"}, "limit": 100000})
		if len(out.Hits) == 0 || len(out.Hits) > 50 {
			t.Errorf("%d hits", len(out.Hits))
		}
		out, _ = ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "starter", "limit": -3})
		if len(out.Hits) == 0 {
			t.Error("a negative limit should mean the default")
		}
	})
	t.Run("query too large", func(t *testing.T) {
		for q, want := range map[string]string{
			strings.Repeat("x", search.MaxQueryBytes+1): "at most 4096",
			strings.Repeat("word ", 65):                 "65 words, at most 64",
		} {
			if msg := e.toolError(t, "search_notes", map[string]any{"query": q}); !strings.Contains(msg, "query too large") || !strings.Contains(msg, want) {
				t.Errorf("tool error %q, want %q", msg, want)
			}
		}
	})
}

// TestSearchResultSize holds search_notes to its token budget: ten hits in
// under 2 KB of text. MCP_SIZE_VAULT names another vault to measure (its
// index goes to a temp folder), with realistic queries, or those of
// MCP_SIZE_QUERIES (a JSON list of {"q": ...}, like the eval sets); the
// figures are logged.
func TestSearchResultSize(t *testing.T) {
	e := newEnv(t, envOptions{})
	queries := []string{"project", "notes", "meeting", "sourdough", "go concurrency", "postgres index", "design"}
	measureSizes(t, e, queries, 10)
	if dir := os.Getenv("MCP_SIZE_VAULT"); dir != "" {
		queries = []string{"plugin", "dataview query", "daily notes template", "sync", "graph view", "canvas", "mobile app", "community themes"}
		if f := os.Getenv("MCP_SIZE_QUERIES"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var qs []struct{ Q string }
			if err := json.Unmarshal(b, &qs); err != nil {
				t.Fatal(err)
			}
			queries = queries[:0]
			for _, q := range qs {
				queries = append(queries, q.Q)
			}
		}
		measureSizes(t, newEnvAt(t, dir), queries, 10)
	}
}

func measureSizes(t *testing.T, e *env, queries []string, limit int) {
	t.Helper()
	var texts, jsons []int
	for _, q := range queries {
		res := e.call(t, "search_notes", map[string]any{"query": q, "limit": limit})
		if res.IsError {
			t.Fatalf("%q: %s", q, text(res))
		}
		sc, _ := json.Marshal(res.StructuredContent)
		var out mcp.SearchOutput
		_ = json.Unmarshal(sc, &out)
		n := len(text(res))
		t.Logf("%-40.40q %2d hits: text %4d bytes, structured JSON %4d bytes", q, len(out.Hits), n, len(sc))
		if len(out.Hits) == limit {
			texts, jsons = append(texts, n), append(jsons, len(sc))
			if n >= 2048 {
				t.Errorf("%q: %d hits in %d bytes of text, want under 2048:\n%s", q, len(out.Hits), n, text(res))
			}
		}
	}
	if len(texts) > 0 {
		slices.Sort(texts)
		slices.Sort(jsons)
		t.Logf("%d results of %d hits: text median %d, max %d bytes; structured JSON median %d, max %d bytes",
			len(texts), limit, texts[len(texts)/2], texts[len(texts)-1], jsons[len(jsons)/2], jsons[len(jsons)-1])
	}
}

// newEnvAt serves an existing vault (read-only use) with a temp index.
func newEnvAt(t *testing.T, dir string) *env {
	t.Helper()
	opening := startVault(t, service.Options{Vault: dir, Index: filepath.Join(t.TempDir(), "idx")})
	_, cs := connectInMemory(t, mcp.New(mcp.Config{Vault: opening}))
	return &env{dir: dir, cs: cs}
}

func TestReadNote(t *testing.T) {
	e := newEnv(t, envOptions{})
	first, txt := ok[mcp.ReadOutput](t, e, "read_note", map[string]any{"path": "recipes/Sourdough Starter.md"})
	if first.Chunk != 0 || first.ChunkCount < 2 || first.NextChunk == nil || *first.NextChunk != 1 {
		t.Fatalf("chunk 0: %+v", first)
	}
	if !slices.Contains(first.Headings, "## Troubleshooting") || !slices.Contains(first.Links, "Country Sourdough Loaf") || !slices.Contains(first.Tags, "recipe") {
		t.Errorf("headings %v, links %v, tags %v", first.Headings, first.Links, first.Tags)
	}
	if !strings.Contains(txt, "chunk 0 of") || !strings.Contains(txt, "next: chunk 1") {
		t.Errorf("text header: %s", txt)
	}

	for _, name := range []string{"Sourdough Starter", "[[Sourdough Starter]]", "sourdough starter.md", "recipes/Sourdough Starter"} {
		out, _ := ok[mcp.ReadOutput](t, e, "read_note", map[string]any{"path": name, "chunk": 1})
		if out.Path != "recipes/Sourdough Starter.md" || out.Chunk != 1 {
			t.Errorf("%q: %s chunk %d", name, out.Path, out.Chunk)
		}
	}

	sec, _ := ok[mcp.ReadOutput](t, e, "read_note", map[string]any{"path": "Sourdough Starter", "heading": "troubleshooting"})
	if !strings.HasPrefix(sec.Content, "## Troubleshooting") || !strings.Contains(sec.Content, "nail-polish") || strings.Contains(sec.Content, "## Keeping it") {
		t.Errorf("section: %q", sec.Content)
	}
	if sec.NextChunk != nil {
		t.Errorf("the last section has a next chunk: %d", *sec.NextChunk)
	}
	// A heading whose section holds the whole note returns it all.
	whole, _ := ok[mcp.ReadOutput](t, e, "read_note", map[string]any{"path": "Sourdough Starter", "heading": "# Sourdough Starter"})
	if !strings.Contains(whole.Content, "## What you need") || !strings.Contains(whole.Content, "## Troubleshooting") {
		t.Errorf("whole-note section: %q", whole.Content)
	}

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "../../etc/passwd"}, "outside the vault"},
		{map[string]any{"path": "/etc/passwd"}, "outside the vault"},
		{map[string]any{"path": "outside-link.md"}, "outside the vault"},
		{map[string]any{"path": "Sourdough Startr"}, "did you mean"},
		{map[string]any{"path": "no such note at all"}, "search_notes"},
		{map[string]any{"path": "Sourdough Starter", "chunk": 99}, "out of range"},
		{map[string]any{"path": "Sourdough Starter", "chunk": 1, "heading": "x"}, "not both"},
		{map[string]any{"path": "Sourdough Starter", "heading": "Nonexistent"}, "## Troubleshooting"},
		{map[string]any{"path": ""}, "empty"},
		{map[string]any{"path": "x", "chunk": "one"}, "chunk"},
		{map[string]any{"notePath": "x"}, "path (string, required)"},
	} {
		if msg := e.toolError(t, "read_note", c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q does not say %q", c.args, msg, c.want)
		}
	}
}

func TestListsLinksAndRanges(t *testing.T) {
	e := newEnv(t, envOptions{})
	notes, txt := ok[mcp.ListOutput](t, e, "list_notes", map[string]any{"folder": "recipes"})
	if notes.Total != 7 || len(notes.Notes) != 7 {
		t.Errorf("recipes: %d of %d: %s", len(notes.Notes), notes.Total, txt)
	}
	notes, _ = ok[mcp.ListOutput](t, e, "list_notes", map[string]any{"tag": "project", "limit": 2})
	if notes.Total < 3 || len(notes.Notes) != 2 {
		t.Errorf("tag project limit 2: %d of %d", len(notes.Notes), notes.Total)
	}
	notes, _ = ok[mcp.ListOutput](t, e, "list_notes", map[string]any{"folder": "journal", "since": "2026-04-01"})
	for _, n := range notes.Notes {
		if n.Date < "2026-04-01" && n.Modified < "2026-04-01" {
			t.Errorf("since let %+v through", n)
		}
	}
	when := func(n mcp.NoteEntry) string {
		if n.Date != "" {
			return n.Date
		}
		return n.Modified
	}
	if notes.Total == 0 {
		t.Error("no journal notes since April")
	}
	for i := 1; i < len(notes.Notes); i++ {
		if when(notes.Notes[i]) > when(notes.Notes[i-1]) {
			t.Errorf("not newest first: %+v", notes.Notes)
		}
	}
	for _, args := range []map[string]any{{"folder": "../x"}, {"since": "blorp"}, {"since": "2026-04-02", "until": "2026-04-01"}} {
		e.toolError(t, "list_notes", args)
	}

	tags, txt := ok[mcp.TagsOutput](t, e, "list_tags", map[string]any{})
	if tags.Total == 0 || !strings.Contains(txt, "#recipe") {
		t.Fatalf("tags: %s", txt)
	}
	for i := 1; i < len(tags.Tags); i++ {
		if tags.Tags[i].Notes > tags.Tags[i-1].Notes {
			t.Fatalf("tags not most used first: %v", tags.Tags)
		}
	}

	links, txt := ok[mcp.LinksOutput](t, e, "links", map[string]any{"path": "Sourdough Starter"})
	var out []string
	for _, l := range links.Outgoing {
		out = append(out, l.Path)
	}
	if !slices.Contains(out, "recipes/Country Sourdough Loaf.md") || !slices.Contains(out, "recipes/Crêpes Bretonnes.md") {
		t.Errorf("outgoing %v", out)
	}
	var back []string
	for _, l := range links.Backlinks {
		back = append(back, l.Path)
	}
	if !slices.Contains(back, "recipes/Country Sourdough Loaf.md") || !slices.Contains(back, "journal/2026-03-25.md") {
		t.Errorf("backlinks %v\n%s", back, txt)
	}
	e.toolError(t, "links", map[string]any{"path": "../x.md"})

	r, txt := ok[mcp.ListOutput](t, e, "notes_in_range", map[string]any{"timeExpression": "2026-03"})
	if r.Range == nil || !strings.HasPrefix(r.Range.Start, "2026-03-01") || r.Total < 5 {
		t.Fatalf("2026-03: %s", txt)
	}
	for i, n := range r.Notes {
		if !strings.HasPrefix(n.Date, "2026-03") && !strings.HasPrefix(n.Modified, "2026-03") {
			t.Errorf("%+v is not of March", n)
		}
		if i > 0 && n.Date != "" && r.Notes[i-1].Date > n.Date {
			t.Errorf("not oldest first: %v", r.Notes)
		}
	}
	// "last week" is relative to the server's clock (2026-04-22 here).
	r, _ = ok[mcp.ListOutput](t, e, "notes_in_range", map[string]any{"timeExpression": "last week"})
	if r.Range.Description != "2026-04-13 to 2026-04-19" || !containsPath(r.Notes, "journal/2026-04-14.md") {
		t.Errorf("last week: %+v", r)
	}
	e.toolError(t, "notes_in_range", map[string]any{"timeExpression": "when pigs fly"})
	e.toolError(t, "notes_in_range", map[string]any{})
}

func containsPath(ns []mcp.NoteEntry, p string) bool {
	for _, n := range ns {
		if n.Path == p {
			return true
		}
	}
	return false
}

func TestBadInputIsAToolError(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"search_notes", map[string]any{"query": ""}, "empty"},
		{"search_notes", map[string]any{"query": "tag:"}, "Query language"},
		{"search_notes", map[string]any{"query": "x", "limit": "ten"}, "limit"},
		{"search_notes", map[string]any{"query": "x", "folders": []string{"../.."}}, "outside the vault"},
		{"search_notes", map[string]any{"query": "x", "since": "the day after the big storm"}, "since"},
		{"search_notes", map[string]any{"query": "x", "bogus": true}, "bogus"},
		{"search_notes", map[string]any{"query": "x", "tags": []string{"two words"}}, "tag"},
		{"ask_vault", map[string]any{"question": "x", "mode": "fastest"}, "mode"},
		{"ask_vault", map[string]any{"question": "   "}, "empty"},
	} {
		if msg := e.toolError(t, c.tool, c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: %q does not mention %q", c.tool, c.args, msg, c.want)
		}
	}
	// An unknown tool is the one protocol error.
	if _, err := e.cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "write_note", Arguments: map[string]any{}}); err == nil {
		t.Error("unknown tool: no error")
	}
	// The server is still there.
	ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "starter"})
}

func TestToolPanicIsAToolError(t *testing.T) {
	// The clock of time expressions panics, as a bug would.
	e := newEnv(t, envOptions{now: func() time.Time { panic("boom") }})
	if msg := e.toolError(t, "search_notes", map[string]any{"query": "x", "since": "last week"}); !strings.Contains(msg, "internal error") {
		t.Errorf("panic: %q", msg)
	}
	ok[mcp.ReadOutput](t, e, "read_note", map[string]any{"path": "Home"})
}

func TestAskVault(t *testing.T) {
	e := newEnv(t, envOptions{})
	res, err := e.cs.CallTool(ctxT(t), &sdk.CallToolParams{
		Name: "ask_vault", Arguments: map[string]any{"question": "how do I keep my sourdough starter alive?"},
		Meta: sdk.Meta{"progressToken": "ask-1"},
	})
	if err != nil || res.IsError {
		t.Fatalf("ask_vault: %v %s", err, text(res))
	}
	var out mcp.AskOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.StopReason != "final_answer" || out.Model != "offline" || !strings.Contains(out.Answer, "[[Sourdough Starter]]") {
		t.Fatalf("answer: %+v", out)
	}
	var cited []string
	for _, c := range out.Citations {
		cited = append(cited, c.Path)
	}
	if !slices.Contains(cited, "recipes/Sourdough Starter.md") {
		t.Errorf("citations %v", cited)
	}
	// The progress notifications reported the run's steps.
	seen := func(steps []string) bool {
		return slices.ContainsFunc(steps, func(s string) bool { return strings.HasPrefix(s, "Searching notes for") }) &&
			slices.ContainsFunc(steps, func(s string) bool { return strings.HasPrefix(s, "Read") })
	}
	if steps := e.awaitProgress(ctxT(t), seen); !seen(steps) {
		t.Errorf("progress steps %q", steps)
	}
}

// TestAskVaultCancel cancels a run while its model call is in flight: the
// model endpoint holds the call open until the client goes away, so the
// run is slow without a sleep, and seeing the endpoint's request end
// proves the cancellation reached it.
func TestAskVaultCancel(t *testing.T) {
	arrived := make(chan struct{}, 4)
	gone := make(chan struct{}, 4)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		arrived <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	defer endpoint.Close()
	model, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: endpoint.URL + "/v1", APIKey: "test-key", Model: "held", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{model: model})

	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := e.cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_vault", Arguments: map[string]any{"question": "what is in my vault?"}})
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the model was never called")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	select {
	case <-gone:
	case <-time.After(20 * time.Second):
		t.Fatal("the model call was not cancelled")
	}
	// The server goes on.
	out, _ := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "starter"})
	if len(out.Hits) == 0 {
		t.Error("no hits after the cancel")
	}
}

func TestResources(t *testing.T) {
	e := newEnv(t, envOptions{noAsk: true})
	ctx := ctxT(t)
	starter := mcp.NoteURI("recipes/Sourdough Starter.md")
	if starter != "vault:///recipes/Sourdough%20Starter.md" {
		t.Fatalf("uri %s", starter)
	}
	// The notes are registered once the index is ready. A list taken
	// before that (or while it happens) is followed by list_changed.
	var uris []string
	for {
		uris = uris[:0]
		for r, err := range e.cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			uris = append(uris, r.URI)
		}
		if slices.Contains(uris, starter) {
			break
		}
		select {
		case <-e.listChanged:
		case <-time.After(20 * time.Second):
			t.Fatalf("no note resources and no list_changed: %v", uris)
		}
	}
	if !slices.Contains(uris, starter) || !slices.Contains(uris, mcp.NoteURI("recipes/Café de Olla.md")) {
		t.Fatalf("resources %v", uris)
	}
	tmpls, err := e.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "vault:///{+path}" {
		t.Fatalf("templates %v %v", tmpls, err)
	}

	rr, err := e.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: starter})
	if err != nil || len(rr.Contents) != 1 || !strings.HasPrefix(rr.Contents[0].Text, "---\ntitle: Sourdough Starter") || rr.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read %v %v", rr, err)
	}
	// Through the template, leniently.
	rr, err = e.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "vault:///Sourdough%20Starter"})
	if err != nil || rr.Contents[0].URI != starter {
		t.Fatalf("lenient read %v %v", rr, err)
	}
	for _, bad := range []string{"vault:///../../etc/passwd", "vault:///outside-link.md", "vault:///nope.md"} {
		if _, err := e.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("%s: read", bad)
		}
	}

	// Edit a note on disk: subscribers hear of it and search sees it.
	if err := e.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: starter}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(e.dir, "recipes", "Sourdough Starter.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, "\nThe starter loves zanzibarine flour.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.updated, starter, "resources/updated")
	out, _ := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "zanzibarine"})
	if len(out.Hits) != 1 || out.Hits[0].Path != "recipes/Sourdough Starter.md" {
		t.Fatalf("edited note not found: %+v", out)
	}

	// A new note joins the list; its URI is announced to subscribers of it.
	fresh := mcp.NoteURI("recipes/Focaccia.md")
	if err := e.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: fresh}); err != nil {
		t.Fatal(err)
	}
	drain(e.listChanged)
	if err := os.WriteFile(filepath.Join(e.dir, "recipes", "Focaccia.md"), []byte("# Focaccia\nOlive oil and rosemary.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.updated, fresh, "resources/updated")
	select {
	case <-e.listChanged:
	case <-time.After(20 * time.Second):
		t.Fatal("no resources/list_changed after a note was added")
	}
	if _, err := e.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: fresh}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.dir, "recipes", "Focaccia.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.updated, fresh, "resources/updated")
	if _, err := e.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: fresh}); err == nil {
		t.Error("a deleted note is still readable")
	}
}

func drain[T any](ch <-chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestPrompts(t *testing.T) {
	e := newEnv(t, envOptions{noAsk: true})
	ctx := ctxT(t)
	res, err := e.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "summarize_notes", Arguments: map[string]string{"topic": "sourdough"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.Contains(msg, "recipes/Sourdough Starter.md") || !strings.Contains(msg, "read_note") {
		t.Errorf("summarize: %s", msg)
	}
	res, err = e.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "weekly_review", Arguments: map[string]string{"period": "2026-03"}})
	if err != nil {
		t.Fatal(err)
	}
	msg = res.Messages[0].Content.(*sdk.TextContent).Text
	if !strings.Contains(msg, "journal/2026-03-12.md") || !strings.Contains(msg, "2026-03-01 to 2026-03-31") {
		t.Errorf("weekly: %s", msg)
	}
	if _, err := e.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "summarize_notes", Arguments: map[string]string{}}); err == nil {
		t.Error("summarize without a topic")
	}
}

func TestStreamableHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	srv := mcp.New(mcp.Config{Vault: startVault(t, service.Options{Vault: fixture.CopyWithLinks(t)}), Ask: true, Model: offline})
	ln, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeHTTP(ctx, ln) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_notes", Arguments: map[string]any{"query": "sourdough"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "Sourdough Starter") {
		t.Fatalf("search over HTTP: %v %s", err, text(res))
	}
	cs.Close()

	// A web page's request is refused: a browser cannot read the vault
	// through the local server.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ln.Addr().String()+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin request: status %d, want 403", resp.StatusCode)
	}

	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeHTTP: %v", err)
	}
}

// slowIndex reports indexing progress before it is ready, as a first
// index of a large vault does.
type slowIndex struct{ mcp.Opening }

func (v slowIndex) Wait(ctx context.Context, progress search.ProgressFunc) (*service.Service, error) {
	if progress != nil {
		progress(3, 10)
	}
	return v.Opening.Wait(ctx, progress)
}

func TestIndexProgressWhileWaiting(t *testing.T) {
	e := newEnv(t, envOptions{noAsk: true, wrap: func(v mcp.Opening) mcp.Opening { return slowIndex{v} }})
	res, err := e.cs.CallTool(ctxT(t), &sdk.CallToolParams{
		Name: "search_notes", Arguments: map[string]any{"query": "starter"}, Meta: sdk.Meta{"progressToken": 7},
	})
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.Contains(e.progress, "indexing the vault: 3 of 10 notes") {
		t.Errorf("progress %q", e.progress)
	}
}

func TestCheckListenAddr(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8765", false, true},
		{"localhost:0", false, true},
		{"[::1]:8765", false, true},
		{"127.1.2.3:80", false, true},
		{"0.0.0.0:8765", false, false},
		{":8765", false, false},
		{"192.168.1.10:8765", false, false},
		{"example.com:8765", false, false},
		{"0.0.0.0:8765", true, true},
		{"127.0.0.1", false, false},
	} {
		err := mcp.CheckListenAddr(c.addr, c.remote)
		if (err == nil) != c.ok {
			t.Errorf("%s (remote %v): %v", c.addr, c.remote, err)
		}
		if err != nil && c.addr == "0.0.0.0:8765" && !errors.Is(err, mcp.ErrNotLoopback) {
			t.Errorf("%s: %v is not ErrNotLoopback", c.addr, err)
		}
	}
}

// TestNoGoroutineLeak: a session that used every kind of call leaves no
// goroutine behind once the client and the server are closed.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("session", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "starter"})
		ok[mcp.LinksOutput](t, e, "links", map[string]any{"path": "Home"})
		ok[mcp.AskOutput](t, e, "ask_vault", map[string]any{"question": "what is in my kitchen renovation plan?"})
		if _, err := e.cs.ReadResource(ctxT(t), &sdk.ReadResourceParams{URI: mcp.NoteURI("Home.md")}); err != nil {
			t.Fatal(err)
		}
		e.toolError(t, "read_note", map[string]any{"path": "../x"})
	})
	rpctest.CheckGoroutines(t, before)
}
