package agent

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/vault"
)

// fakeEditor answers every edit with decide, recording the requests.
type fakeEditor struct {
	reqs   []vault.EditRequest
	decide func(ctx context.Context, req vault.EditRequest) (*EditOutcome, error)
}

func (f *fakeEditor) Edit(ctx context.Context, req vault.EditRequest) (*EditOutcome, error) {
	f.reqs = append(f.reqs, req)
	return f.decide(ctx, req)
}

var editToolNames = []string{ToolCreateNote, ToolAppendToNote, ToolReplaceInNote, ToolSetProperties}

func TestEditToolsOfferedOnlyWhenEnabled(t *testing.T) {
	ed := &fakeEditor{decide: func(context.Context, vault.EditRequest) (*EditOutcome, error) { return nil, errors.New("not called") }}
	for _, tc := range []struct {
		name   string
		allow  bool
		editor Editor
	}{
		{"default", false, nil},
		{"enabled without an editor", true, nil},
		{"editor without the setting", false, ed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newTestAgent(t, []llm.Turn{
				{Expect: &llm.Expect{ToolsNotOffered: editToolNames}, ToolCalls: []llm.ScriptedToolCall{call(ToolCreateNote, map[string]any{"path": "x.md", "content": "x"})}},
				{Content: "done"},
			})
			res, err := a.Run(context.Background(), RunRequest{RunID: "r", Message: "write", Config: Config{AllowEdits: tc.allow}, Editor: tc.editor}, nil)
			if err != nil || res.StopReason != StopFinalAnswer {
				t.Fatalf("res = %+v, err = %v", res, err)
			}
			if len(ed.reqs) != 0 {
				t.Fatal("an edit tool ran")
			}
		})
	}
}

func TestEditToolOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		decide  func(ctx context.Context, req vault.EditRequest) (*EditOutcome, error)
		timeout time.Duration
		want    string // in the tool message the model sees
	}{
		{"approved", func(_ context.Context, req vault.EditRequest) (*EditOutcome, error) {
			return &EditOutcome{Applied: true, Path: req.Path}, nil
		}, 0, `"applied":true`},
		{"refused", func(_ context.Context, req vault.EditRequest) (*EditOutcome, error) {
			return &EditOutcome{Path: req.Path, Reason: "refused by the person"}, nil
		}, 0, `"reason":"refused by the person"`},
		{"bad proposal", func(context.Context, vault.EditRequest) (*EditOutcome, error) {
			return nil, vault.ErrExists
		}, 0, `"error":"the note already exists"`},
		{"timeout", func(ctx context.Context, req vault.EditRequest) (*EditOutcome, error) {
			<-ctx.Done()
			if !errors.Is(context.Cause(ctx), ErrApprovalTimeout) {
				return nil, context.Cause(ctx)
			}
			return &EditOutcome{Path: req.Path, Reason: context.Cause(ctx).Error()}, nil
		}, time.Millisecond, `"reason":"no answer to the edit within the request-input timeout"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ed := &fakeEditor{decide: tc.decide}
			a, model := newTestAgent(t, []llm.Turn{
				{Expect: &llm.Expect{ToolsOffered: []string{ToolLocalSearch, ToolReadNote, ToolFileTree, ToolTagList, ToolTimeRange, ToolCurrentTime,
					ToolCreateNote, ToolAppendToNote, ToolReplaceInNote, ToolSetProperties}},
					ToolCalls: []llm.ScriptedToolCall{call(ToolAppendToNote, map[string]any{"path": "Notes/A.md", "content": "more", "heading": "Log"})}},
				{Content: "done"},
			})
			cfg := Config{AllowEdits: true, RequestInputTimeout: tc.timeout}
			res, err := a.Run(context.Background(), RunRequest{RunID: "r", Message: "add", Config: cfg, Editor: ed}, nil)
			if err != nil || res.StopReason != StopFinalAnswer {
				t.Fatalf("res = %+v, err = %v", res, err)
			}
			if len(ed.reqs) != 1 || !reflect.DeepEqual(ed.reqs[0], vault.EditRequest{Op: vault.EditAppend, Path: "Notes/A.md", Content: "more", Heading: "Log"}) {
				t.Fatalf("editor got %+v", ed.reqs)
			}
			reqs := model.Requests()
			last := reqs[len(reqs)-1].Messages
			if msg := last[len(last)-1]; msg.Role != llm.RoleTool || !strings.Contains(msg.Content, tc.want) {
				t.Fatalf("tool message = %q, want %s", msg.Content, tc.want)
			}
		})
	}
}

func TestEditWaitEndsOnStop(t *testing.T) {
	waiting := make(chan struct{})
	ed := &fakeEditor{decide: func(ctx context.Context, req vault.EditRequest) (*EditOutcome, error) {
		close(waiting)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	a, _ := newTestAgent(t, []llm.Turn{
		{ToolCalls: []llm.ScriptedToolCall{call(ToolCreateNote, map[string]any{"path": "x.md", "content": "x"})}},
		{Content: "done"},
	})
	go func() {
		<-waiting
		_ = a.Stop("r")
	}()
	res, err := a.Run(context.Background(), RunRequest{RunID: "r", Message: "write", Config: Config{AllowEdits: true}, Editor: ed}, nil)
	if err != nil || res.StopReason != StopStopped {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}
