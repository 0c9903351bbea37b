package llm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const yamlScript = `
turns:
  - content: "Searching the vault."
    expect:
      tools_not_offered: [write_todos]
      last_role: user
    tool_calls:
      - name: localSearch
        arguments: {query: sourdough, salientTerms: [starter]}
  - stream: ["<think>hmm</th", "ink>Bad ", "args."]
    tool_calls:
      - id: c9
        name: readNote
        arguments_raw: '{"notePath": '
  - content: "Final answer."
    reasoning: "thought"
`

const jsonScript = `[
  {"content": "Hello", "stream": ["Hel", "lo"]},
  {"error": "upstream exploded"}
]`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScriptedYAML(t *testing.T) {
	s, err := LoadScript(writeFile(t, "demo.yaml", yamlScript))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "scripted/demo" {
		t.Errorf("name = %q", s.Name())
	}
	ctx := context.Background()
	req := Request{Messages: []Message{{Role: RoleUser, Content: "sourdough?"}},
		Tools: []ToolDef{{Name: "localSearch"}, {Name: "readNote"}}}

	r1, err := s.Chat(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Content != "Searching the vault." || len(r1.ToolCalls) != 1 || r1.FinishReason != "tool_calls" {
		t.Fatalf("turn 1 = %+v", r1)
	}
	if tc := r1.ToolCalls[0]; tc.ID != "call_1_0" || tc.Name != "localSearch" ||
		tc.Arguments != `{"query":"sourdough","salientTerms":["starter"]}` {
		t.Errorf("tool call = %+v", tc)
	}

	var deltas []string
	r2, err := s.Chat(ctx, req, func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if r2.Content != "Bad args." || r2.Reasoning != "hmm" || strings.Join(deltas, "") != "Bad args." {
		t.Errorf("turn 2 = %+v deltas %q", r2, deltas)
	}
	if tc := r2.ToolCalls[0]; tc.ID != "c9" || tc.Arguments != `{"notePath": ` {
		t.Errorf("raw args = %+v", tc)
	}

	r3, err := s.Chat(ctx, req, nil)
	if err != nil || r3.Content != "Final answer." || r3.Reasoning != "thought" || r3.FinishReason != "stop" {
		t.Errorf("turn 3 = %+v %v", r3, err)
	}

	_, err = s.Chat(ctx, req, nil)
	if !errors.Is(err, ErrScriptExhausted) ||
		err.Error() != "scripted model: the run asked for turn 4 but the fixture has only 3 turns" {
		t.Errorf("exhausted err = %v", err)
	}
	if len(s.Requests()) != 4 {
		t.Errorf("requests = %d", len(s.Requests()))
	}
}

func TestScriptedJSON(t *testing.T) {
	s, err := LoadScript(writeFile(t, "x.json", jsonScript))
	if err != nil {
		t.Fatal(err)
	}
	var deltas []string
	r, err := s.Chat(context.Background(), Request{}, func(d string) { deltas = append(deltas, d) })
	if err != nil || r.Content != "Hello" || strings.Join(deltas, "|") != "Hel|lo" {
		t.Errorf("resp %+v deltas %q err %v", r, deltas, err)
	}
	if _, err := s.Chat(context.Background(), Request{}, nil); err == nil || !strings.Contains(err.Error(), "upstream exploded") {
		t.Errorf("error turn: %v", err)
	}
	c := s.Clone()
	if c.Remaining() != 2 || s.Remaining() != 0 {
		t.Errorf("clone remaining %d, original %d", c.Remaining(), s.Remaining())
	}
}

func TestScriptedLoadErrors(t *testing.T) {
	tests := map[string]struct{ name, body, want string }{
		"unknown field yaml": {"a.yaml", "- contnet: x\n", "contnet"},
		"unknown field json": {"a.json", `[{"contnet":"x"}]`, "contnet"},
		"no tool name":       {"a.yaml", "- tool_calls: [{arguments: {}}]\n", "no name"},
		"both arguments":     {"a.yaml", "- tool_calls: [{name: x, arguments: {}, arguments_raw: '{'}]\n", "both"},
		"extension":          {"a.txt", "[]", "extension"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := LoadScript(writeFile(t, tt.name, tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestScriptedExpect(t *testing.T) {
	tests := []struct {
		name   string
		expect Expect
		req    Request
		ok     bool
	}{
		{"exact tools ok", Expect{ToolsOffered: []string{"b", "a"}}, Request{Tools: []ToolDef{{Name: "a"}, {Name: "b"}}}, true},
		{"exact tools mismatch", Expect{ToolsOffered: []string{"a"}}, Request{Tools: []ToolDef{{Name: "a"}, {Name: "write_todos"}}}, false},
		{"not offered violated", Expect{ToolsNotOffered: []string{"write_todos"}}, Request{Tools: []ToolDef{{Name: "write_todos"}}}, false},
		{"last role", Expect{LastRole: "tool"}, Request{Messages: []Message{{Role: RoleUser}}}, false},
		{"contains", Expect{Contains: "starter"}, Request{Messages: []Message{{Role: RoleUser, Content: "my starter"}}}, true},
		{"contains missing", Expect{Contains: "starter"}, Request{Messages: []Message{{Role: RoleUser, Content: "bread"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.expect
			s := NewScripted([]Turn{{Content: "x", Expect: &e}})
			_, err := s.Chat(context.Background(), tt.req, nil)
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrScriptExpectation)) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func TestScriptedDelayHonoursContext(t *testing.T) {
	s := NewScripted([]Turn{{Content: "late", DelayMs: 60_000}})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Chat(ctx, Request{}, nil)
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("delay ignored cancellation")
	}
}

func TestScriptedConcurrent(t *testing.T) {
	turns := make([]Turn, 50)
	for i := range turns {
		turns[i] = Turn{Content: "t"}
	}
	s := NewScripted(turns)
	var wg sync.WaitGroup
	var mu sync.Mutex
	fails := 0
	for range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Chat(context.Background(), Request{}, nil); err != nil {
				mu.Lock()
				fails++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if fails != 10 {
		t.Errorf("fails = %d, want 10", fails)
	}
}
