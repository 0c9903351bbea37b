package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

func TestTerminalApprover(t *testing.T) {
	p := &service.EditProposal{RunID: "r", Proposal: &vault.Proposal{Op: vault.EditAppend, Path: "Inbox.md", Diff: "--- a/Inbox.md\n+++ b/Inbox.md\n@@ -1 +1,2 @@\n x\n+y\n"}}
	for _, tc := range []struct {
		name     string
		in       string
		tty, yes bool
		approved bool
	}{
		{"yes typed", "y\n", true, false, true},
		{"no typed", "n\n", true, false, false},
		{"enter", "\n", true, false, false},
		{"end of input", "", true, false, false},
		{"no terminal", "y\n", false, false, false},
		{"no terminal with --yes", "", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			a := newTerminalApprover(strings.NewReader(tc.in), &out, tc.tty, tc.yes)
			d, err := a.Approve(context.Background(), p)
			if err != nil || d.Approved != tc.approved {
				t.Fatalf("decision = %+v, %v", d, err)
			}
			if !strings.Contains(out.String(), "+y") || !strings.Contains(out.String(), "change Inbox.md") {
				t.Fatalf("the diff was not shown:\n%s", out.String())
			}
			if !d.Approved && d.Reason == "" {
				t.Fatal("a refusal without a reason")
			}
		})
	}
}

func TestTerminalApproverEndsWithContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	a := newTerminalApprover(r, io.Discard, true, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Approve(ctx, &service.EditProposal{Proposal: &vault.Proposal{Path: "x.md"}}); err == nil {
		t.Fatal("Approve returned without error after its context ended")
	}
}

// TestAskAllowEditsAndUndo: ask --allow-edits refuses without a terminal,
// applies with --yes, and undo restores the note.
func TestAskAllowEditsAndUndo(t *testing.T) {
	dir := t.TempDir()
	vaultDir := filepath.Join(dir, "vault")
	if err := os.MkdirAll(vaultDir, 0o755); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(vaultDir, "Inbox.md")
	if err := os.WriteFile(note, []byte("# Inbox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "edit.yaml")
	if err := os.WriteFile(script, []byte(`turns:
  - tool_calls:
      - name: append_to_note
        arguments: {path: Inbox.md, content: "- call the plumber"}
  - content: "Added."
`), 0o644); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index")
	ask := func(extra ...string) result {
		args := append([]string{"ask", "--vault", vaultDir, "--index", index, "--provider", "scripted", "--script", script, "--allow-edits"}, extra...)
		return runCLI(t, append(args, "add a task")...)
	}
	r := ask()
	if r.code != 0 || !strings.Contains(r.stderr, "+- call the plumber") || !strings.Contains(r.stderr, "no terminal") {
		t.Fatalf("ask without a terminal: %+v", r)
	}
	if b, _ := os.ReadFile(note); string(b) != "# Inbox\n" {
		t.Fatalf("edited without approval: %q", b)
	}
	r = ask("--yes")
	if r.code != 0 {
		t.Fatalf("ask --yes: %+v", r)
	}
	if b, _ := os.ReadFile(note); string(b) != "# Inbox\n\n- call the plumber\n" {
		t.Fatalf("after ask --yes: %q", b)
	}
	r = runCLI(t, "undo", "--vault", vaultDir, "--index", index)
	if r.code != 0 || !strings.Contains(r.stdout, "restored Inbox.md") {
		t.Fatalf("undo: %+v", r)
	}
	if b, _ := os.ReadFile(note); string(b) != "# Inbox\n" {
		t.Fatalf("after undo: %q", b)
	}
	r = runCLI(t, "undo", "--vault", vaultDir, "--index", index)
	if r.code != 1 || !strings.Contains(r.stderr, "nothing to undo") {
		t.Fatalf("second undo: %+v", r)
	}
	if r := runCLI(t, "ask", "--vault", vaultDir, "--yes", "x"); r.code != 2 {
		t.Fatalf("--yes without --allow-edits: %+v", r)
	}
}

// TestTerminalApproverShowsHiddenCharacters: an edit whose text holds a
// carriage return and an escape sequence reaches the terminal escaped, with
// a warning, so the person sees the line that would be written.
func TestTerminalApproverShowsHiddenCharacters(t *testing.T) {
	dir := t.TempDir()
	v, err := vault.Open(dir, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Propose(vault.EditRequest{Op: vault.EditCreate, Path: "Plan.md", Content: "rm -rf ~/Notes\r\x1b[2Kall good"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	a := newTerminalApprover(strings.NewReader("n\n"), &out, true, false)
	if _, err := a.Approve(context.Background(), &service.EditProposal{Proposal: p}); err != nil {
		t.Fatal(err)
	}
	shown := out.String()
	if strings.ContainsAny(shown, "\r\x1b") {
		t.Fatalf("raw control characters reached the terminal: %q", shown)
	}
	for _, want := range []string{`rm -rf ~/Notes\r\x1b[2Kall good`, "escaped"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, shown)
		}
	}
}
