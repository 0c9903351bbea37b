package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
	"github.com/vault-agent/vault-agent/service"
)

// TestApplyEdit drives an agent/run with allowEdits as a host does: the
// sidecar asks vault/applyEdit for the run's edit, the host answers, and the
// note is written only when the host approved.
func TestApplyEdit(t *testing.T) {
	const added = "- Repot the monstera."
	for _, tc := range []struct {
		name    string
		answer  func(s *rpctest.Session, id json.RawMessage) error // nil: never answer
		timeout int
		applied bool
		reason  string
	}{
		{"approved", func(s *rpctest.Session, id json.RawMessage) error {
			return s.Respond(id, protocol.ApplyEditResult{Applied: true}, nil)
		}, 0, true, ""},
		{"refused", func(s *rpctest.Session, id json.RawMessage) error {
			return s.Respond(id, protocol.ApplyEditResult{Applied: false, Reason: "not now"}, nil)
		}, 0, false, "refused by the person: not now"},
		{"error answer", func(s *rpctest.Session, id json.RawMessage) error {
			return s.Respond(id, nil, &rpctest.Error{Code: -32601, Message: "method not found"})
		}, 0, false, "asking for approval failed"},
		{"no answer", nil, 50, false, "no answer to the edit within the request-input timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			dir := fixture.Copy(t)
			model := llm.NewScripted([]llm.Turn{
				{ToolCalls: call(agent.ToolAppendToNote, map[string]any{"path": "Inbox.md", "content": added})},
				{Content: "Done."},
			})
			s := start(t, rpc.Config{Model: model, Env: &service.Env{CacheDir: t.TempDir()}})
			settings := map[string]any{"allowEdits": true}
			if tc.timeout > 0 {
				settings["requestInputTimeoutMs"] = tc.timeout
			}
			initialize(t, s, map[string]any{"vault": dir, "settings": settings})
			before, _ := os.ReadFile(filepath.Join(dir, "Inbox.md"))
			ctx := ctxT(t)
			run, err := s.Start("agent/run", map[string]any{"message": "add a task", "runId": "e1"})
			if err != nil {
				t.Fatal(err)
			}
			req, err := s.AwaitNotification(ctx, protocol.MethodApplyEdit, nil)
			if err != nil {
				t.Fatal(err)
			}
			var p protocol.ApplyEditParams
			if err := json.Unmarshal(req.Params, &p); err != nil || len(req.ID) == 0 {
				t.Fatalf("vault/applyEdit %s (id %s): %v", req.Params, req.ID, err)
			}
			if p.RunID != "e1" || p.Path != "Inbox.md" || p.Operation != "append_to_note" || p.Create ||
				!strings.Contains(p.Diff, "+"+added) || !strings.HasPrefix(p.URI, "file:///") || !strings.HasSuffix(p.NewText, added+"\n") || len(p.Hash) != 64 {
				t.Fatalf("params = %+v", p)
			}
			if tc.answer != nil {
				if err := tc.answer(s, req.ID); err != nil {
					t.Fatal(err)
				}
			} else if _, err := s.AwaitNotification(ctx, protocol.MethodCancelRequest, func(params json.RawMessage) bool {
				return strings.Contains(string(params), string(req.ID))
			}); err != nil {
				t.Fatalf("no $/cancelRequest for the unanswered vault/applyEdit: %v", err)
			}
			res, _ := waitRun(t, run)
			if res.StopReason != agent.StopFinalAnswer {
				t.Fatalf("result = %+v", res)
			}
			var out agent.EditOutcome
			for _, u := range updates(s, "e1") {
				if u.UpdateType == "tool_complete" && u.Tool == agent.ToolAppendToNote {
					b, _ := json.Marshal(u.Output)
					json.Unmarshal(b, &out)
				}
			}
			if out.Applied != tc.applied || !strings.Contains(out.Reason, tc.reason) {
				t.Fatalf("tool output = %+v, want applied %v, reason %q", out, tc.applied, tc.reason)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "Inbox.md"))
			if tc.applied != strings.HasSuffix(string(after), added+"\n") || (!tc.applied && string(after) != string(before)) {
				t.Fatalf("note after the run:\n%s", after)
			}
		})
	}
}

// TestApplyEditNotSentWhenReadOnly: without allowEdits the edit tools are
// not offered, so a model that calls one gets an unknown-tool error and
// the host is never asked.
func TestApplyEditNotSentWhenReadOnly(t *testing.T) {
	dir := fixture.Copy(t)
	model := llm.NewScripted([]llm.Turn{
		{ToolCalls: call(agent.ToolCreateNote, map[string]any{"path": "New.md", "content": "x"}),
			Expect: &llm.Expect{ToolsNotOffered: []string{agent.ToolCreateNote, agent.ToolAppendToNote, agent.ToolReplaceInNote, agent.ToolSetProperties}}},
		{Content: "Done."},
	})
	s := start(t, rpc.Config{Model: model, Env: &service.Env{CacheDir: t.TempDir()}})
	initialize(t, s, map[string]any{"vault": dir})
	res, _ := runAgent(t, s, map[string]any{"message": "write", "runId": "ro"})
	if res.StopReason != agent.StopFinalAnswer {
		t.Fatalf("result = %+v", res)
	}
	if n := s.Notifications(protocol.MethodApplyEdit); len(n) != 0 {
		t.Fatalf("vault/applyEdit sent: %+v", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "New.md")); !os.IsNotExist(err) {
		t.Fatal("a note was written in a read-only run")
	}
}

// TestApplyEditDiffShowsHiddenCharacters: a model's edit whose text holds a
// carriage return and an escape sequence reaches the host with them escaped
// in diff (what the host shows) and as they are in newText (what is
// written).
func TestApplyEditDiffShowsHiddenCharacters(t *testing.T) {
	noLeaks(t)
	dir := fixture.Copy(t)
	const content = "safe line\r\x1b[2Kinjected line"
	model := llm.NewScripted([]llm.Turn{
		{ToolCalls: call(agent.ToolCreateNote, map[string]any{"path": "Spoof.md", "content": content})},
		{Content: "Done."},
	})
	s := start(t, rpc.Config{Model: model, Env: &service.Env{CacheDir: t.TempDir()}})
	initialize(t, s, map[string]any{"vault": dir, "settings": map[string]any{"allowEdits": true}})
	run, err := s.Start("agent/run", map[string]any{"message": "write", "runId": "h1"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := s.AwaitNotification(ctxT(t), protocol.MethodApplyEdit, nil)
	if err != nil {
		t.Fatal(err)
	}
	var p protocol.ApplyEditParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(p.Diff, "\r\x1b") || !strings.Contains(p.Diff, `+safe line\r\x1b[2Kinjected line`) {
		t.Errorf("diff = %q", p.Diff)
	}
	if p.NewText != content+"\n" {
		t.Errorf("newText = %q", p.NewText)
	}
	if err := s.Respond(req.ID, protocol.ApplyEditResult{Applied: false, Reason: "spoofed"}, nil); err != nil {
		t.Fatal(err)
	}
	waitRun(t, run)
}
