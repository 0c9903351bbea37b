package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
)

const replayGoal = "how do I keep my sourdough starter alive?"

// recordTrace runs one run with a TraceWriter and returns the trace path.
func recordTrace(t *testing.T, model llm.Model, cfg Config, extra func(a *Agent) Sink) (string, *Result) {
	t.Helper()
	a, err := New(Deps{Model: model, Index: newFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	tw, err := CreateTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	var sink Sink = tw
	if extra != nil {
		sink = Tee(tw, extra(a))
	}
	res, err := a.Run(context.Background(), RunRequest{RunID: "rec-1", SessionID: "s1", Message: replayGoal, Config: cfg,
		History: []llm.Message{{Role: llm.RoleUser, Content: "earlier question"}, {Role: llm.RoleAssistant, Content: "earlier answer"}}}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return path, res
}

func replayFile(t *testing.T, path string) *ReplayReport {
	t.Helper()
	events, err := ReadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep, err := Replay(ctx, events, newFakeIndex(t))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func fenced(v any) string {
	b, _ := json.Marshal(v)
	return "```json\n" + string(b) + "\n```"
}

// scriptedTurns are fixture runs of each mode. The react one uses the
// clock tools, so replay must pin the clock.
func scriptedTurns(mode string) []llm.Turn {
	starter := "recipes/Sourdough Starter.md"
	search := llm.ScriptedToolCall{Name: "localSearch", Arguments: map[string]any{"query": "sourdough starter"}}
	read := llm.ScriptedToolCall{Name: "readNote", Arguments: map[string]any{"notePath": starter}}
	switch mode {
	case ModeReact:
		return []llm.Turn{
			{Content: "Checking the date.", ToolCalls: []llm.ScriptedToolCall{{Name: "getCurrentTime"}, {Name: "getTimeRangeMs", Arguments: map[string]any{"timeExpression": "last week"}}}},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{read}},
			{Content: "Feed it daily. [[Sourdough Starter]]"},
		}
	case ModeROA:
		return []llm.Turn{
			{Content: "Search first.\n\n" + fenced(map[string]any{"plan": "search", "tools_to_consider": []string{"localSearch"}, "finish": false})},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Found it.\n\n" + fenced(map[string]any{"observation": "found", "should_continue": false, "final_answer": "Feed it daily. [[Sourdough Starter]]"})},
		}
	case ModePAR:
		return []llm.Turn{
			{Content: planSearchReadAnswer},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Found.\n" + fenced(map[string]any{"satisfied": true})},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{read}},
			{Content: "Read.\n" + fenced(map[string]any{"satisfied": true, "done": true})},
			{Content: "Feed it daily. [[Sourdough Starter]]"},
		}
	case ModeStaged:
		return []llm.Turn{
			{Content: `{"goal": "keep the starter alive", "constraints": []}`},
			{Content: `{"subtasks": ["search", "read"]}`},
			{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{search}},
			{Content: "Reading.", ToolCalls: []llm.ScriptedToolCall{read}},
			{Content: `{"summary": "feed it daily", "sources": ["[[Sourdough Starter]]"]}`},
			{Content: `{"answer": "Feed it daily. [[Sourdough Starter]]", "citations": ["[[Sourdough Starter]]"]}`},
		}
	}
	return nil
}

func TestReplayIsIdentical(t *testing.T) {
	for _, mode := range []string{ModeReact, ModeROA, ModePAR, ModeStaged} {
		for _, kind := range []string{"scripted", "offline"} {
			t.Run(mode+"/"+kind, func(t *testing.T) {
				var model llm.Model = llm.NewOffline()
				if kind == "scripted" {
					model = llm.NewScripted(scriptedTurns(mode))
				}
				cfg := Config{Mode: mode, Planner: mode == ModeReact && kind == "offline"}
				path, res := recordTrace(t, model, cfg, nil)
				if res.StopReason != StopFinalAnswer {
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
		cfg   Config
		sink  func(a *Agent) Sink
		stop  string
	}{
		{name: "stopped", stop: StopStopped,
			turns: []llm.Turn{{Content: "Searching.", ToolCalls: []llm.ScriptedToolCall{{Name: "localSearch", Arguments: map[string]any{"query": "starter"}}}}},
			sink: func(a *Agent) Sink {
				return SinkFunc(func(e Event) {
					if e.EventType == EventToolReturned {
						_ = a.Stop("rec-1")
					}
				})
			}},
		{name: "timeout", stop: StopTimeout, cfg: Config{Timeout: 300 * time.Millisecond},
			turns: []llm.Turn{{Content: "never", DelayMs: 60000}}},
		{name: "model error", stop: StopError, turns: []llm.Turn{{Error: "rate limited"}}},
		{name: "request input", stop: StopFinalAnswer, cfg: Config{RequestInput: true},
			turns: []llm.Turn{
				{Content: "Asking.", ToolCalls: []llm.ScriptedToolCall{{Name: "request_input", Arguments: map[string]any{"question": "Which starter?"}}}},
				{Content: "The rye one. [[Sourdough Starter]]"},
			},
			sink: func(a *Agent) Sink {
				return SinkFunc(func(e Event) {
					if e.EventType == EventInputRequested {
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
	path, _ := recordTrace(t, llm.NewScripted(scriptedTurns(ModeReact)), Config{}, nil)
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
		{name: "asked beyond the recording", index: final, field: "event", want: "(the trace ended)", got: EventModelResponded,
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
		if rep.Result.StopReason != StopError || !strings.Contains(rep.Result.Error, "trace does not have") {
			t.Fatalf("result = %+v", rep.Result)
		}
	})
}

func TestReadTraceErrors(t *testing.T) {
	path, _ := recordTrace(t, llm.NewScripted([]llm.Turn{{Content: "Answer."}}), Config{}, nil)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("trace has %d lines", len(lines))
	}
	set := func(i int, key string, v any) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatal(err)
		}
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	with := func(i int, line string) string {
		l := append([]string(nil), lines...)
		l[i] = line
		return strings.Join(l, "\n") + "\n"
	}
	tests := []struct{ name, data, want string }{
		{"truncated last line", strings.Join(lines[:len(lines)-1], "\n") + "\n" + lines[len(lines)-1][:40],
			"line 4: truncated event: the file ends in the middle of this line"},
		{"invalid JSON", with(1, `{"event_id": "x",`), "line 2: invalid JSON"},
		{"missing fields", with(1, set(1, "event_type", nil)), "line 2: missing event_type"},
		{"seq out of order", with(2, set(2, "seq", 7)), "line 3: seq 7 out of order: want 3"},
		{"first seq", with(0, set(0, "seq", 2)), "line 1: seq 2 out of order: a trace starts with its run's first event"},
		{"mixed run ids", with(1, set(1, "run_id", "other")), `line 2: run id "other" differs from "rec-1" on line 1`},
		{"empty", "", "the file holds no events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTrace(strings.NewReader(tt.data), "run.jsonl")
			if err == nil || !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), "run.jsonl: "+strings.SplitN(tt.want, ":", 2)[0]) ||
				!strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
	if evs, err := ParseTrace(bytes.NewReader(good), "run.jsonl"); err != nil || len(evs) != len(lines) {
		t.Fatalf("good trace: %d events, %v", len(evs), err)
	}
}

func TestReplayNeedsConfig(t *testing.T) {
	ev := Event{EventID: "x-0001", EventType: EventRunStarted, RunID: "x", Seq: 1, Payload: RunStartedPayload{Goal: "g", Mode: "react"}}
	if _, err := Replay(context.Background(), []Event{ev}, newFakeIndex(t)); !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), "no run config") {
		t.Fatalf("err = %v", err)
	}
}

func TestWriteTimeline(t *testing.T) {
	path, _ := recordTrace(t, llm.NewScripted(scriptedTurns(ModePAR)), Config{Mode: ModePAR}, nil)
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
