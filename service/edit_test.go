package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

func allow() *bool { t := true; return &t }

// editRun runs one scripted turn calling tool with args, then a final
// answer, and returns the tool message the model got back.
func editRun(t *testing.T, s *Service, model *llm.Scripted, settings Settings, approver Approver) string {
	t.Helper()
	settings.AllowEdits = allow()
	res, err := s.Run(context.Background(), RunRequest{RunID: "run-edit", Message: "edit", Settings: settings, Approver: approver}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopFinalAnswer {
		t.Fatalf("run = %+v", res)
	}
	reqs := model.Requests()
	msgs := reqs[len(reqs)-1].Messages
	return msgs[len(msgs)-1].Content
}

func scriptedEdit(tool string, args map[string]any) *llm.Scripted {
	return llm.NewScripted([]llm.Turn{
		{ToolCalls: []llm.ScriptedToolCall{{Name: tool, Arguments: args}}},
		{Content: "done"},
	})
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditApprovedIsWrittenIndexedJournaledAndUndone(t *testing.T) {
	model := scriptedEdit(agent.ToolAppendToNote, map[string]any{"path": "Inbox.md", "content": "- Water the zanzibar gem plant."})
	s, dir := openFixture(t, Options{Model: model, Agent: true})
	before := readFile(t, filepath.Join(dir, "Inbox.md"))
	var asked *EditProposal
	msg := editRun(t, s, model, Settings{}, ApproverFunc(func(_ context.Context, p *EditProposal) (Decision, error) {
		asked = p
		return Decision{Approved: true}, nil
	}))
	if asked == nil || asked.RunID != "run-edit" || asked.Path != "Inbox.md" || !strings.Contains(asked.Diff, "+- Water the zanzibar gem plant.") ||
		asked.BaseHash != vault.Hash([]byte(before)) || asked.Abs != filepath.Join(s.Vault().Root(), "Inbox.md") {
		t.Fatalf("proposal = %+v", asked)
	}
	if !strings.Contains(msg, `"applied":true`) {
		t.Fatalf("tool message = %s", msg)
	}
	if got := readFile(t, filepath.Join(dir, "Inbox.md")); !strings.HasSuffix(got, "- Water the zanzibar gem plant.\n") {
		t.Fatalf("note = %q", got)
	}
	// The index saw the change before the run went on.
	res, err := s.Index().Search(context.Background(), search.Request{Query: "zanzibar", Limit: 5})
	if err != nil || len(res.Results) != 1 || res.Results[0].Path != "Inbox.md" {
		t.Fatalf("search after the edit: %+v %v", res, err)
	}
	jp := s.JournalPath()
	if jp == "" || strings.HasPrefix(jp, s.Vault().Root()) {
		t.Fatalf("journal %q must be outside the vault", jp)
	}
	entries, err := vault.OpenJournal(jp, vault.JournalOptions{}).Entries()
	if err != nil || len(entries) != 1 || entries[0].RunID != "run-edit" || entries[0].Before != before {
		t.Fatalf("journal = %+v %v", entries, err)
	}

	undone, err := s.Undo(context.Background(), "run-edit")
	if err != nil || len(undone) != 1 {
		t.Fatalf("undo = %+v %v", undone, err)
	}
	if got := readFile(t, filepath.Join(dir, "Inbox.md")); got != before {
		t.Fatal("undo did not restore the note")
	}
	res, _ = s.Index().Search(context.Background(), search.Request{Query: "zanzibar", Limit: 5})
	if len(res.Results) != 0 {
		t.Fatalf("the index still finds the undone text: %+v", res.Results)
	}
}

func TestEditNotApplied(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings Settings
		approver func(dir string) Approver
		want     string
	}{
		{"refused", Settings{}, func(string) Approver {
			return ApproverFunc(func(context.Context, *EditProposal) (Decision, error) {
				return Decision{Reason: "not this week"}, nil
			})
		}, `refused by the person: not this week`},
		{"timeout", Settings{RequestInputTimeout: time.Millisecond}, func(string) Approver {
			return ApproverFunc(func(ctx context.Context, _ *EditProposal) (Decision, error) {
				<-ctx.Done()
				return Decision{}, ctx.Err()
			})
		}, `no answer to the edit within the request-input timeout`},
		{"conflict", Settings{}, func(dir string) Approver {
			// The person edits the note while the approval is pending.
			return ApproverFunc(func(context.Context, *EditProposal) (Decision, error) {
				if err := os.WriteFile(filepath.Join(dir, "Inbox.md"), []byte("# Inbox\n\nrewritten by hand\n"), 0o644); err != nil {
					return Decision{}, err
				}
				return Decision{Approved: true}, nil
			})
		}, `conflict: the note changed since it was read`},
		{"approval failed", Settings{}, func(string) Approver {
			return ApproverFunc(func(context.Context, *EditProposal) (Decision, error) {
				return Decision{}, errors.New("the host went away")
			})
		}, `asking for approval failed: the host went away`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := scriptedEdit(agent.ToolReplaceInNote, map[string]any{"path": "Inbox.md", "find": "# Inbox", "replace": "# Inbox (triaged)"})
			s, dir := openFixture(t, Options{Model: model, Agent: true})
			before := readFile(t, filepath.Join(dir, "Inbox.md"))
			msg := editRun(t, s, model, tc.settings, tc.approver(dir))
			if !strings.Contains(msg, `"applied":false`) || !strings.Contains(msg, tc.want) {
				t.Fatalf("tool message = %s, want %q", msg, tc.want)
			}
			if got := readFile(t, filepath.Join(dir, "Inbox.md")); strings.Contains(got, "triaged") || (tc.name != "conflict" && got != before) {
				t.Fatalf("note = %q", got)
			}
			if entries, _ := vault.OpenJournal(s.JournalPath(), vault.JournalOptions{}).Entries(); len(entries) != 0 {
				t.Fatalf("journal = %+v", entries)
			}
		})
	}
}

func TestEditRefusedProposals(t *testing.T) {
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"escape", agent.ToolCreateNote, map[string]any{"path": "../evil.md", "content": "x"}, "escapes the vault"},
		{"symlink", agent.ToolAppendToNote, map[string]any{"path": "escape.md", "content": "x"}, "outside the vault"},
		{"existing file", agent.ToolCreateNote, map[string]any{"path": "Inbox.md", "content": "x"}, "already exists"},
		{"not markdown", agent.ToolCreateNote, map[string]any{"path": "run.sh", "content": "x"}, "only .md notes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := scriptedEdit(tc.tool, tc.args)
			s, dir := openFixture(t, Options{Model: model, Agent: true})
			outside := filepath.Join(t.TempDir(), "outside.md")
			if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, "escape.md")); err != nil {
				t.Fatal(err)
			}
			asked := false
			msg := editRun(t, s, model, Settings{}, ApproverFunc(func(context.Context, *EditProposal) (Decision, error) {
				asked = true
				return Decision{Approved: true}, nil
			}))
			if asked || !strings.Contains(msg, `"error"`) || !strings.Contains(msg, tc.want) {
				t.Fatalf("asked = %v, tool message = %s", asked, msg)
			}
			if got := readFile(t, outside); got != "outside\n" {
				t.Fatalf("the file outside the vault changed: %q", got)
			}
		})
	}
}

// hostWriter writes approved edits itself, as an ACP client does.
type hostWriter struct{ wrote []string }

func (h *hostWriter) Approve(context.Context, *EditProposal) (Decision, error) {
	return Decision{Approved: true}, nil
}

func (h *hostWriter) WriteEdit(_ context.Context, p *EditProposal) (bool, error) {
	h.wrote = append(h.wrote, p.Abs)
	return true, os.WriteFile(p.Abs, []byte(p.After), 0o644)
}

func TestEditThroughHostWriter(t *testing.T) {
	model := scriptedEdit(agent.ToolCreateNote, map[string]any{"path": "Reviews/Week 12.md", "content": "# Week 12"})
	s, dir := openFixture(t, Options{Model: model, Agent: true})
	hw := &hostWriter{}
	if err := os.MkdirAll(filepath.Join(dir, "Reviews"), 0o755); err != nil {
		t.Fatal(err)
	}
	msg := editRun(t, s, model, Settings{}, hw)
	if !strings.Contains(msg, `"applied":true`) || len(hw.wrote) != 1 {
		t.Fatalf("tool message = %s, host writes %v", msg, hw.wrote)
	}
	if got := readFile(t, filepath.Join(dir, "Reviews", "Week 12.md")); got != "# Week 12\n" {
		t.Fatalf("note = %q", got)
	}
	if _, ok := s.Index().Note("Reviews/Week 12.md"); !ok {
		t.Fatal("the index does not know the new note")
	}
}

func TestEditsNeedAnApprover(t *testing.T) {
	s, _ := openFixture(t, Options{Model: llm.NewScripted([]llm.Turn{{Content: "x"}}), Agent: true})
	_, err := s.Run(context.Background(), RunRequest{Message: "edit", Settings: Settings{AllowEdits: allow()}}, nil)
	var se *SettingError
	if !errors.As(err, &se) || se.Key != "allowEdits" {
		t.Fatalf("err = %v", err)
	}
}

func TestUndoWithoutIndex(t *testing.T) {
	model := scriptedEdit(agent.ToolCreateNote, map[string]any{"path": "New.md", "content": "new"})
	env := &Env{CacheDir: t.TempDir()}
	s, dir := openFixture(t, Options{Model: model, Agent: true, Env: env})
	editRun(t, s, model, Settings{}, Approved)
	s.Close()
	done, jp, err := Undo(context.Background(), Options{Vault: dir, InMemoryIndex: true, Env: env}, "")
	if err != nil || len(done) != 1 || !done[0].Removed || jp != s.JournalPath() {
		t.Fatalf("undo = %+v %q %v", done, jp, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "New.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the created note is still there")
	}
}

// TestEditNotJournaledIsNotApplied: when the journal cannot be written,
// the edit is not written either (it could not be undone), and the model
// is told so.
func TestEditNotJournaledIsNotApplied(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := scriptedEdit(agent.ToolAppendToNote, map[string]any{"path": "Inbox.md", "content": "- lost if applied"})
	s, dir := openFixture(t, Options{Model: model, Agent: true, Journal: filepath.Join(blocker, "edits.jsonl")})
	before := readFile(t, filepath.Join(dir, "Inbox.md"))
	msg := editRun(t, s, model, Settings{}, Approved)
	if !strings.Contains(msg, `"applied":false`) || !strings.Contains(msg, "could not be journaled") {
		t.Fatalf("tool message = %s", msg)
	}
	if got := readFile(t, filepath.Join(dir, "Inbox.md")); got != before {
		t.Fatalf("the edit was written without a journal record: %q", got)
	}
}

// failingWriter lets the service write the first edit and fails to write
// the others, as an editor whose fs/write_text_file errs.
type failingWriter struct{ calls int }

func (f *failingWriter) Approve(context.Context, *EditProposal) (Decision, error) {
	return Decision{Approved: true}, nil
}

func (f *failingWriter) WriteEdit(context.Context, *EditProposal) (bool, error) {
	f.calls++
	if f.calls == 1 {
		return false, nil
	}
	return false, errors.New("the editor could not save the file")
}

// TestEditVoidedWhenNotWritten: an edit journaled before its write that
// then fails is voided in the journal, so undoing its run is not refused
// for it.
func TestEditVoidedWhenNotWritten(t *testing.T) {
	model := llm.NewScripted([]llm.Turn{
		{ToolCalls: []llm.ScriptedToolCall{{Name: agent.ToolAppendToNote, Arguments: map[string]any{"path": "Inbox.md", "content": "- one"}}}},
		{ToolCalls: []llm.ScriptedToolCall{{Name: agent.ToolCreateNote, Arguments: map[string]any{"path": "Made.md", "content": "made"}}}},
		{Content: "done"},
	})
	s, dir := openFixture(t, Options{Model: model, Agent: true})
	inbox := filepath.Join(dir, "Inbox.md")
	before := readFile(t, inbox)
	msg := editRun(t, s, model, Settings{}, &failingWriter{})
	if !strings.Contains(msg, "could not save") {
		t.Fatalf("tool message = %s", msg)
	}
	entries, err := vault.OpenJournal(s.JournalPath(), vault.JournalOptions{}).Entries()
	if err != nil || len(entries) != 3 || entries[2].Op != vault.OpVoid || entries[2].Amends != entries[1].Seq {
		t.Fatalf("journal = %+v, %v", entries, err)
	}
	done, err := s.Undo(context.Background(), "run-edit")
	if err != nil || len(done) != 1 || done[0].Path != "Inbox.md" {
		t.Fatalf("undo = %+v, %v", done, err)
	}
	if got := readFile(t, inbox); got != before {
		t.Fatalf("Inbox.md after undo = %q", got)
	}
}
