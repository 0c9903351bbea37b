package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"

	"github.com/vault-agent/vault-agent/agent/agenttest"
	"github.com/vault-agent/vault-agent/agent/offline"
	"github.com/vault-agent/vault-agent/llm"
)

// recordTrace runs one run with a TraceWriter and returns the trace path.
func recordTrace(t *testing.T, model llm.Model, cfg agent.Config, extra func(a *agent.Agent) agent.Sink) (string, *agent.Result) {
	t.Helper()
	a, err := agent.New(agent.Deps{Model: model, Index: agenttest.NewFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	tw, err := agent.OpenTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	var sink agent.Sink = tw
	if extra != nil {
		sink = agent.Tee(tw, extra(a))
	}
	res, err := a.Run(context.Background(), agent.RunRequest{RunID: "rec-1", SessionID: "s1", Message: agenttest.Goal, Config: cfg,
		History: []llm.Message{{Role: llm.RoleUser, Content: "earlier question"}, {Role: llm.RoleAssistant, Content: "earlier answer"}}}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return path, res
}

func replayFile(t *testing.T, path string) *Report {
	t.Helper()
	events, err := ReadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := Run(ctx, events, agenttest.NewFakeIndex(t))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReplayIsIdentical(t *testing.T) {
	for _, mode := range []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged} {
		for _, kind := range []string{"scripted", "offline"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				var model llm.Model = offline.New()
				if kind == "scripted" {
					model = llm.NewScripted(agenttest.ScriptedTurns(mode))
				}
				cfg := agent.Config{Mode: mode, Planner: mode == agent.ModeReact && kind == "offline"}
				path, res := recordTrace(t, model, cfg, nil)
				if res.StopReason != agent.StopFinalAnswer {
					t.Fatalf("recorded run: %+v", res)
				}
				rep := replayFile(t, path)
				if !rep.Identical {
					t.Fatalf("replay diverged: %s", rep.Divergence)
				}
				if rep.Events < 5 || rep.Result.Answer != res.Answer || rep.Result.RunID != "rec-1" {
					t.Fatalf("report = %+v, result %+v", rep, rep.Result)
				}
			})
		}
	}
}

func TestReplayHostActions(t *testing.T) {
	tests := []struct {
		name  string
		turns []llm.Turn
		cfg   agent.Config
		sink  func(a *agent.Agent) agent.Sink
		stop  string
	}{
		{name: "stopped", stop: agent.StopStopped,
			turns: []llm.Turn{{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{{Name: "localSearch", Arguments: map[string]any{"query": "starter"}}}}},
			sink: func(a *agent.Agent) agent.Sink {
				return agent.SinkFunc(func(e agent.Event) {
					if e.EventType == agent.EventToolReturned {
						_ = a.Stop("rec-1")
					}
				})
			}},
		{name: "timeout", stop: agent.StopTimeout, cfg: agent.Config{Timeout: 300 * time.Millisecond},
			turns: []llm.Turn{{Content: "never", DelayMs: 60000}}},
		{name: "model error", stop: agent.StopError, turns: []llm.Turn{{Error: "rate limited"}}},
		{name: "request input", stop: agent.StopFinalAnswer, cfg: agent.Config{RequestInput: true},
			turns: []llm.Turn{
				{Content: "Asking.", ToolCalls: []llm.ScriptedToolCall{{Name: "request_input", Arguments: map[string]any{"question": "Which starter?"}}}},
				{Content: "The rye one. [[Sourdough Starter]]"},
			},
			sink: func(a *agent.Agent) agent.Sink {
				return agent.SinkFunc(func(e agent.Event) {
					if e.EventType == agent.EventInputRequested {
						_ = a.Input("rec-1", "the rye one")
					}
				})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, res := recordTrace(t, llm.NewScripted(tt.turns), tt.cfg, tt.sink)
			if res.StopReason != tt.stop {
				t.Fatalf("recorded run: %+v", res)
			}
			rep := replayFile(t, path)
			if !rep.Identical {
				t.Fatalf("replay diverged: %s", rep.Divergence)
			}
			if rep.Result.StopReason != tt.stop {
				t.Fatalf("replayed stop reason %s", rep.Result.StopReason)
			}
		})
	}
}

// rewriteTrace applies edit to the trace's lines and writes a new file.
func rewriteTrace(t *testing.T, path string, edit func(lines []string) []string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	out := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(out, []byte(strings.Join(edit(lines), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// lineOf finds the first line with all the substrings.
func lineOf(t *testing.T, lines []string, subs ...string) int {
	t.Helper()
	for i, l := range lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return i
		}
	}
	t.Fatalf("no line with %q", subs)
	return -1
}

func TestReplayDivergence(t *testing.T) {
	path, _ := recordTrace(t, llm.NewScripted(agenttest.ScriptedTurns(agent.ModeReact)), agent.Config{}, nil)
	var lines []string
	rewriteTrace(t, path, func(l []string) []string { lines = l; return l })
	search := lineOf(t, lines, `"ModelResponded"`, `"name":"localSearch"`)
	final := lineOf(t, lines, `"ModelResponded"`, `"content":"Feed it daily. [[Sourdough Starter]]"`)

	tests := []struct {
		name      string
		edit      func(l []string) []string
		index     int
		field     string
		want, got string
	}{
		{name: "changed tool arguments", index: search + 1, field: "payload.arguments.query",
			want: `"sourdough starter"`, got: `"rye bread"`,
			edit: func(l []string) []string {
				l[search] = strings.Replace(l[search], `sourdough starter`, `rye bread`, 1)
				return l
			}},
		{name: "changed answer", index: final + 1, field: "payload.answer",
			want: `"Feed it daily. [[Sourdough Starter]]"`, got: `"Starve it. [[Sourdough Starter]]"`,
			edit: func(l []string) []string {
				l[final] = strings.Replace(l[final], `"content":"Feed it daily.`, `"content":"Starve it.`, 1)
				return l
			}},
		{name: "asked beyond the recording", index: final, field: "event", want: "(the trace ended)", got: agent.EventModelResponded,
			edit: func(l []string) []string { return l[:final] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := replayFile(t, rewriteTrace(t, path, func(l []string) []string { return tt.edit(append([]string(nil), l...)) }))
			d := rep.Divergence
			if rep.Identical || d == nil {
				t.Fatal("replay of an edited trace was identical")
			}
			if d.Index != tt.index || d.Field != tt.field || d.Want != tt.want || d.Got != tt.got {
				t.Fatalf("divergence = %+v\nwant index %d field %s want %s got %s", d, tt.index, tt.field, tt.want, tt.got)
			}
			if d.EventID != fmt.Sprintf("rec-1-%04d", tt.index+1) {
				t.Fatalf("event id = %s", d.EventID)
			}
		})
	}
	t.Run("beyond the recording is a model error", func(t *testing.T) {
		rep := replayFile(t, rewriteTrace(t, path, func(l []string) []string { return append([]string(nil), l[:final]...) }))
		if rep.Result.StopReason != agent.StopError || !strings.Contains(rep.Result.Error, "trace does not have") {
			t.Fatalf("result = %+v", rep.Result)
		}
	})
}

func TestReplayNeedsConfig(t *testing.T) {
	ev := agent.Event{EventID: "x-0001", EventType: agent.EventRunStarted, RunID: "x", Seq: 1, Payload: agent.RunStartedPayload{Goal: "g", Mode: "react"}}
	if _, err := Run(context.Background(), []agent.Event{ev}, agenttest.NewFakeIndex(t)); !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), "no run config") {
		t.Fatalf("err = %v", err)
	}
}

func TestWriteTimeline(t *testing.T) {
	path, _ := recordTrace(t, llm.NewScripted(agenttest.ScriptedTurns(agent.ModePAR)), agent.Config{Mode: agent.ModePAR}, nil)
	events, err := ReadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTimeline(&b, events); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n != len(events) {
		t.Fatalf("%d lines for %d events:\n%s", n, len(events), out)
	}
	for _, want := range []string{
		`it 0   RunStarted        mode par, model scripted, max 10 iterations: "how do I keep my sourdough starter alive?"`,
		"PlanAuthored      Plan v1: Search the vault → Read the best note → Answer",
		`ToolInvoked       Searching notes for "sourdough starter" [s1]`,
		"ModelResponded    act: 1 tool call(s): readNote [s1b]",
		"RunTerminated     final_answer: Feed it daily. [[Sourdough Starter]]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, out)
		}
	}
}
