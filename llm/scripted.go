package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Turn is one scripted model turn. In a fixture file (JSON or YAML) a script
// is either a list of turns or an object {"turns": [...]}; field names are
// the snake_case tags below.
type Turn struct {
	// Content is the visible text. It defaults to the joined Stream.
	Content string `json:"content,omitempty" yaml:"content,omitempty"`
	// Stream are explicit deltas sent to onDelta; without it Content is sent
	// as one delta. Thinking blocks in them are filtered like a real model's.
	Stream    []string           `json:"stream,omitempty" yaml:"stream,omitempty"`
	ToolCalls []ScriptedToolCall `json:"tool_calls,omitempty" yaml:"tool_calls,omitempty"`
	Reasoning string             `json:"reasoning,omitempty" yaml:"reasoning,omitempty"`
	// Error makes the call fail with this message.
	Error string `json:"error,omitempty" yaml:"error,omitempty"`
	// DelayMs waits before answering; the wait ends early with ctx.
	DelayMs int `json:"delay_ms,omitempty" yaml:"delay_ms,omitempty"`
	// Expect checks the request this turn answers.
	Expect *Expect `json:"expect,omitempty" yaml:"expect,omitempty"`
}

// ScriptedToolCall is a tool call of a scripted turn.
type ScriptedToolCall struct {
	// ID defaults to call_<turn>_<n>.
	ID   string `json:"id,omitempty" yaml:"id,omitempty"`
	Name string `json:"name" yaml:"name"`
	// Arguments is marshalled to JSON (usually an object).
	Arguments any `json:"arguments,omitempty" yaml:"arguments,omitempty"`
	// ArgumentsRaw is sent as is, for malformed-JSON tests.
	ArgumentsRaw string `json:"arguments_raw,omitempty" yaml:"arguments_raw,omitempty"`
}

// Expect states what the request answered by a turn must look like. A
// mismatch makes Chat fail with an error wrapping ErrScriptExpectation.
type Expect struct {
	// ToolsOffered is the exact set of tool names offered (order ignored).
	ToolsOffered []string `json:"tools_offered,omitempty" yaml:"tools_offered,omitempty"`
	// ToolsNotOffered are tool names that must not be offered.
	ToolsNotOffered []string `json:"tools_not_offered,omitempty" yaml:"tools_not_offered,omitempty"`
	// LastRole is the role of the last message.
	LastRole string `json:"last_role,omitempty" yaml:"last_role,omitempty"`
	// Contains must occur in the content of some message.
	Contains string `json:"contains,omitempty" yaml:"contains,omitempty"`
}

// Scripted is a Model that plays fixture turns in order, one per Chat call,
// across all callers. It is safe for concurrent use, but concurrent runs
// then share one sequence of turns: give each run its own instance (Clone).
type Scripted struct {
	name  string
	turns []Turn

	mu   sync.Mutex
	next int
	reqs []Request
}

type scriptFile struct {
	Turns []Turn `json:"turns" yaml:"turns"`
}

// LoadScript reads a fixture of turns from a .json, .yaml or .yml file.
// Unknown fields are errors, so a typo fails loudly.
func LoadScript(path string) (*Scripted, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	turns, err := parseScript(data, strings.ToLower(filepath.Ext(path)))
	if err != nil {
		return nil, fmt.Errorf("scripted model: %s: %w", path, err)
	}
	for i, t := range turns {
		if err := t.validate(); err != nil {
			return nil, fmt.Errorf("scripted model: %s: turn %d: %w", path, i+1, err)
		}
	}
	s := NewScripted(turns)
	s.name = "scripted/" + strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return s, nil
}

func parseScript(data []byte, ext string) ([]Turn, error) {
	trimmed := bytes.TrimSpace(data)
	switch ext {
	case ".json":
		if len(trimmed) > 0 && trimmed[0] == '[' {
			var turns []Turn
			return turns, strictJSON(trimmed, &turns)
		}
		var f scriptFile
		return f.Turns, strictJSON(trimmed, &f)
	case ".yaml", ".yml":
		var probe any
		if err := yaml.Unmarshal(data, &probe); err != nil {
			return nil, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if _, isList := probe.([]any); isList {
			var turns []Turn
			return turns, dec.Decode(&turns)
		}
		var f scriptFile
		return f.Turns, dec.Decode(&f)
	default:
		return nil, fmt.Errorf("unsupported fixture extension %q (want .json, .yaml or .yml)", ext)
	}
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (t Turn) validate() error {
	for i, tc := range t.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", i+1)
		}
		if tc.Arguments != nil && tc.ArgumentsRaw != "" {
			return fmt.Errorf("tool call %d (%s) sets both arguments and arguments_raw", i+1, tc.Name)
		}
		if _, err := marshalArgs(tc.Arguments); err != nil {
			return fmt.Errorf("tool call %d (%s): %w", i+1, tc.Name, err)
		}
	}
	return nil
}

// NewScripted returns a Model playing turns.
func NewScripted(turns []Turn) *Scripted {
	return &Scripted{name: "scripted", turns: turns}
}

// Clone returns a fresh Scripted with the same turns, starting at the first.
func (s *Scripted) Clone() *Scripted {
	return &Scripted{name: s.name, turns: s.turns}
}

// Name returns "scripted" or "scripted/<fixture name>".
func (s *Scripted) Name() string { return s.name }

// Requests returns copies of the requests received so far.
func (s *Scripted) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Remaining returns how many turns have not been played.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns) - s.next
}

// Chat plays the next turn.
func (s *Scripted) Chat(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	s.mu.Lock()
	n := s.next
	s.reqs = append(s.reqs, copyRequest(req))
	if n >= len(s.turns) {
		s.mu.Unlock()
		return nil, &exhaustedError{asked: n + 1, have: len(s.turns)}
	}
	s.next++
	turn := s.turns[n]
	s.mu.Unlock()

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	if turn.Expect != nil {
		if err := turn.Expect.check(req); err != nil {
			return nil, fmt.Errorf("%w: turn %d: %v", ErrScriptExpectation, n+1, err)
		}
	}
	if turn.DelayMs > 0 {
		if err := sleepCtx(ctx, time.Duration(turn.DelayMs)*time.Millisecond); err != nil {
			return nil, fmt.Errorf("scripted model: %w", err)
		}
	}
	if turn.Error != "" {
		return nil, fmt.Errorf("scripted model: turn %d: %s", n+1, turn.Error)
	}
	if err := turn.validate(); err != nil {
		return nil, fmt.Errorf("scripted model: turn %d: %w", n+1, err)
	}

	deltas := turn.Stream
	if len(deltas) == 0 && turn.Content != "" {
		deltas = []string{turn.Content}
	}
	var f ThinkFilter
	var visible strings.Builder
	emit := func(v string) {
		if v == "" {
			return
		}
		visible.WriteString(v)
		if onDelta != nil {
			onDelta(v)
		}
	}
	for _, d := range deltas {
		emit(f.Write(d))
	}
	emit(f.Flush())
	content := visible.String()
	if turn.Content != "" && len(turn.Stream) > 0 {
		content, _ = StripThinking(turn.Content)
	}
	reasoning := strings.TrimSpace(strings.Join(nonEmpty(turn.Reasoning, f.Reasoning()), "\n"))

	resp := &Response{Content: content, Reasoning: reasoning, FinishReason: "stop"}
	for i, tc := range turn.ToolCalls {
		args := tc.ArgumentsRaw
		if args == "" {
			b, _ := marshalArgs(tc.Arguments)
			args = string(b)
		}
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", n+1, i)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: tc.Name, Arguments: args})
	}
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	return resp, nil
}

func marshalArgs(v any) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("arguments do not marshal to JSON: %w", err)
	}
	return b, nil
}

func (e *Expect) check(req Request) error {
	offered := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		offered = append(offered, t.Name)
	}
	slices.Sort(offered)
	if e.ToolsOffered != nil {
		want := slices.Clone(e.ToolsOffered)
		slices.Sort(want)
		if !slices.Equal(want, offered) {
			return fmt.Errorf("expected tools %v to be offered, got %v", want, offered)
		}
	}
	for _, name := range e.ToolsNotOffered {
		if slices.Contains(offered, name) {
			return fmt.Errorf("expected tool %s not to be offered, got %v", name, offered)
		}
	}
	if e.LastRole != "" {
		last := ""
		if len(req.Messages) > 0 {
			last = req.Messages[len(req.Messages)-1].Role
		}
		if last != e.LastRole {
			return fmt.Errorf("expected the last message role %q, got %q", e.LastRole, last)
		}
	}
	if e.Contains != "" {
		found := false
		for _, m := range req.Messages {
			if strings.Contains(m.Content, e.Contains) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("expected a message containing %q", e.Contains)
		}
	}
	return nil
}

// exhaustedError reports a run that asked for more turns than scripted.
type exhaustedError struct{ asked, have int }

func (e *exhaustedError) Error() string {
	return fmt.Sprintf("scripted model: the run asked for turn %d but the fixture has only %d turns", e.asked, e.have)
}

func (e *exhaustedError) Is(target error) bool { return target == ErrScriptExhausted }

func copyRequest(r Request) Request {
	c := r
	c.Messages = make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		m.ToolCalls = slices.Clone(m.ToolCalls)
		c.Messages[i] = m
	}
	c.Tools = slices.Clone(r.Tools)
	if r.Temperature != nil {
		t := *r.Temperature
		c.Temperature = &t
	}
	return c
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
