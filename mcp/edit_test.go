package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/service"
)

var editTools = []string{"create_note", "append_to_note", "replace_in_note", "set_properties"}

func listTools(t *testing.T, e *env) map[string]*sdk.Tool {
	t.Helper()
	res, err := e.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

func TestEditToolsOnlyWhenAllowed(t *testing.T) {
	tools := listTools(t, newEnv(t, envOptions{noAsk: true}))
	for _, name := range editTools {
		if _, ok := tools[name]; ok {
			t.Errorf("%s is offered without AllowEdits", name)
		}
	}
	e := newEnv(t, envOptions{noAsk: true, allowEdits: true, journal: filepath.Join(t.TempDir(), "edits.jsonl")})
	tools = listTools(t, e)
	for _, name := range editTools {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("%s is not offered with AllowEdits", name)
		}
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("%s annotations = %+v, want destructiveHint", name, a)
		}
	}
	if !strings.Contains(e.cs.InitializeResult().Instructions, "create_note") {
		t.Errorf("the instructions do not mention the edit tools: %q", e.cs.InitializeResult().Instructions)
	}
}

func TestEditTools(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "edits.jsonl")
	e := newEnv(t, envOptions{noAsk: true, allowEdits: true, journal: journal})

	out, _ := ok[mcp.EditOutput](t, e, "create_note", map[string]any{"path": "Reviews/Week 14.md", "content": "---\n# kept\nstatus: draft\n---\n# Week 14\n"})
	if !out.Applied || out.Path != "Reviews/Week 14.md" || !strings.Contains(out.Diff, "+# Week 14") || out.EditID == "" {
		t.Fatalf("create_note = %+v", out)
	}
	out, _ = ok[mcp.EditOutput](t, e, "set_properties", map[string]any{"path": "Reviews/Week 14.md", "properties": map[string]any{"status": "done", "tags": []string{"review"}}})
	got, err := os.ReadFile(filepath.Join(e.dir, "Reviews", "Week 14.md"))
	if err != nil || !out.Applied || string(got) != "---\n# kept\nstatus: done\ntags:\n  - review\n---\n# Week 14\n" {
		t.Fatalf("set_properties = %+v, note %q (%v)", out, got, err)
	}
	// The index has the note at once: search finds it.
	found, _ := ok[mcp.SearchOutput](t, e, "search_notes", map[string]any{"query": "Week 14"})
	if len(found.Hits) == 0 || found.Hits[0].Path != "Reviews/Week 14.md" {
		t.Fatalf("search after the edit: %+v", found)
	}

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"existing file", "create_note", map[string]any{"path": "Inbox.md", "content": "x"}, "already exists"},
		{"escape", "create_note", map[string]any{"path": "../x.md", "content": "x"}, "escapes the vault"},
		{"not found", "replace_in_note", map[string]any{"path": "Inbox.md", "find": "no such text here", "replace": "x"}, "does not occur"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.call(t, tc.tool, tc.args)
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Fatalf("%s = %s (isError %v)", tc.tool, text(res), res.IsError)
			}
		})
	}

	// The journal undoes the edits, newest first, one call at a time.
	done, _, err := service.Undo(context.Background(), service.Options{Vault: e.dir, Journal: journal}, out.EditID)
	if err != nil || len(done) != 1 {
		t.Fatalf("undo = %+v, %v", done, err)
	}
	got, _ = os.ReadFile(filepath.Join(e.dir, "Reviews", "Week 14.md"))
	if string(got) != "---\n# kept\nstatus: draft\n---\n# Week 14\n" {
		t.Fatalf("after undo: %q", got)
	}
}
