package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestExplainCommand(t *testing.T) {
	r := runCLI(t, "explain", "launch", "task-todo:", "[status:active]")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "(AND launch task-todo: [status:active])\n\nFind the notes with the word \"launch\"") ||
		!strings.Contains(r.stdout, "  - have an open task\n") || !strings.Contains(r.stdout, `have the property "status" with a value that matches the word "active"`) {
		t.Fatalf("explain: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "explain", "a line:(task:x)")
	if r.code != 2 || !strings.Contains(r.stderr, "column 3") || !strings.Contains(r.stderr, "\n  a line:(task:x)\n    ^") {
		t.Fatalf("explain of a bad query: exit %d\n%s", r.code, r.stderr)
	}
}

// search --json carries the lines that line: and the task operators
// matched; the plain output lists them under each note.
func TestSearchMatchLines(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	r := runCLI(t, "search", "--vault", fixture, "--index", idx, "--json", "task-todo:(outbox OR cron)")
	var res struct {
		Results []struct {
			Path    string `json:"path"`
			Matches []struct {
				Line int    `json:"line"`
				Text string `json:"text"`
				Kind string `json:"kind"`
			} `json:"matches"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Results) == 0 {
		t.Fatalf("search --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	found := false
	for _, h := range res.Results {
		for _, m := range h.Matches {
			if h.Path == "projects/beta/Project Beta.md" && m.Line == 33 && m.Kind == "task-todo" && strings.HasPrefix(m.Text, "- [ ] Shadow mode") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no match line 33 of Project Beta: %s", r.stdout)
	}
	r = runCLI(t, "search", "--vault", fixture, "--index", idx, "line:(outbox worker)")
	if r.code != 0 || !strings.Contains(r.stdout, "   L11: - The outbox worker is feature-complete") {
		t.Errorf("search: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
