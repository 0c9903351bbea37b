package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/vault"
)

// TestSystemPromptSaysWhatTheAgentMayDo: in every mode, a run offered the
// edit tools is told it may edit and that each edit needs the person's
// approval; a read-only run is told it cannot edit.
func TestSystemPromptSaysWhatTheAgentMayDo(t *testing.T) {
	ed := &fakeEditor{decide: func(context.Context, vault.EditRequest) (*EditOutcome, error) { return &EditOutcome{}, nil }}
	for _, mode := range []string{ModeReact, ModeROA, ModePAR, ModeStaged} {
		for _, edits := range []bool{false, true} {
			name := mode + " read-only"
			if edits {
				name = mode + " with edits"
			}
			t.Run(name, func(t *testing.T) {
				a, model := newTestAgent(t, []llm.Turn{{Content: "an answer"}})
				req := RunRequest{RunID: "r", Message: "tidy my inbox", Config: Config{Mode: mode, MaxIterations: 1}}
				if edits {
					req.Config.AllowEdits, req.Editor = true, ed
				}
				if _, err := a.Run(context.Background(), req, nil); err != nil {
					t.Fatal(err)
				}
				reqs := model.Requests()
				if len(reqs) == 0 || len(reqs[0].Messages) == 0 || reqs[0].Messages[0].Role != llm.RoleSystem {
					t.Fatalf("no system message: %+v", reqs)
				}
				system := reqs[0].Messages[0].Content
				readOnly := strings.Contains(system, "You cannot edit the vault")
				asksApproval := strings.Contains(system, "approve") && strings.Contains(system, ToolAppendToNote)
				if edits && (readOnly || !asksApproval) {
					t.Fatalf("a run offered edits is told:\n%s", system)
				}
				if !edits && (!readOnly || asksApproval) {
					t.Fatalf("a read-only run is told:\n%s", system)
				}
			})
		}
	}
}
