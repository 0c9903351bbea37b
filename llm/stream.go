package llm

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/internal/redact"
)

// streamChunk is one chat.completion.chunk. We decode it ourselves (from
// go-openai's RecvRaw) because servers differ from the OpenAI schema: the
// reasoning text arrives as reasoning_content (DeepSeek, llama.cpp, older
// vLLM) or reasoning (Ollama, OpenRouter, newer vLLM), and some omit the
// tool-call index.
type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string     `json:"name"`
					Arguments flexString `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// flexString is a JSON string, or the raw text of any other JSON value:
// some servers send tool-call arguments as an object instead of a string
// holding one.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string // null decodes as ""
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	*f = flexString(b)
	return nil
}

type toolCallAcc struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

// streamAccumulator joins the chunks of one streamed response. Text and
// reasoning pass through a streaming redactor before anything else sees
// them; tool calls are redacted whole at the end. Past a cap it stops
// taking text and sets cut.
type streamAccumulator struct {
	deliver   func(string)
	red       *redact.Redactor
	text      *redact.Stream // the content, before the think filter
	reason    *redact.Stream // the reasoning field
	think     ThinkFilter
	content   strings.Builder
	reasoning strings.Builder
	calls     []*toolCallAcc
	finish    string
	finished  bool
	usage     Usage
	maxAnswer int
	maxArgs   int
	// cut says what was cut, when a cap was reached; reading stops then.
	cut string
}

func (o *OpenAI) newAccumulator(deliver func(string)) *streamAccumulator {
	return &streamAccumulator{deliver: deliver, red: o.red, text: o.red.NewStream(), reason: o.red.NewStream(),
		maxAnswer: o.maxAnswer, maxArgs: o.maxArgs}
}

func (a *streamAccumulator) add(c *streamChunk) {
	if c.Usage != nil {
		a.usage = Usage{PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we never ask for n > 1
		}
		d := ch.Delta
		r := d.ReasoningContent
		if r == "" {
			r = d.Reasoning
		}
		if r != "" {
			if a.reasoning.Len()+len(r) > a.maxAnswer {
				a.cutAt(fmt.Sprintf("reasoning: cut at %d bytes; the model was still thinking", a.maxAnswer))
				return
			}
			a.reasoning.WriteString(a.reason.Write(r))
		}
		if d.Content != "" {
			a.addText(d.Content)
		}
		for _, tc := range d.ToolCalls {
			acc := a.slot(tc.Index, tc.ID, tc.Function.Name)
			if acc == nil {
				a.cutAt(fmt.Sprintf("tool calls: the model asked for more than %d in one answer; the rest were dropped", maxToolCalls))
				return
			}
			if acc.id == "" {
				acc.id = tc.ID
			}
			if acc.name == "" {
				acc.name = tc.Function.Name
			}
			args := string(tc.Function.Arguments)
			if acc.args.Len()+len(args) > a.maxArgs {
				acc.args.WriteString(args[:a.maxArgs-acc.args.Len()])
				a.cutAt(fmt.Sprintf("tool call %s: its arguments were cut at %d bytes", acc.name, a.maxArgs))
				return
			}
			acc.args.WriteString(args)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
			a.finished = true
		}
	}
}

// addText takes a content delta: redacted, thinking removed, capped.
func (a *streamAccumulator) addText(delta string) { a.addRedacted(a.text.Write(delta)) }

// flushText takes what the redactor held back at the end of the text.
func (a *streamAccumulator) flushText() { a.addRedacted(a.text.Flush()) }

func (a *streamAccumulator) addRedacted(text string) {
	if a.cut != "" {
		return
	}
	vis := a.think.Write(text)
	if room := a.maxAnswer - a.content.Len(); len(vis) > room {
		vis = cutUTF8(vis, room)
		a.content.WriteString(vis)
		a.deliver(vis)
		a.cutAt(fmt.Sprintf("answer: cut at %d bytes; the model was still writing", a.maxAnswer))
		return
	}
	a.content.WriteString(vis)
	a.deliver(vis)
}

// cutAt stops the answer: the reason goes to Response.Cut and, as a last
// line, to the visible text, so whoever reads the answer knows.
func (a *streamAccumulator) cutAt(reason string) {
	if a.cut != "" {
		return
	}
	a.cut = reason
	a.finish, a.finished = "length", true
	note := "\n\n[vault-agent: the model's output was cut (" + reason + ")]"
	a.content.WriteString(note)
	a.deliver(note)
}

// cutUTF8 is the longest start of s of at most n bytes that ends on a
// character boundary.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// slot finds the accumulator a tool-call delta belongs to: by index when the
// server sends one, otherwise by id, otherwise by order (a named delta after
// a complete call starts a new call; anything else continues the last one).
// It returns nil for a new call past maxToolCalls.
func (a *streamAccumulator) slot(index *int, id, name string) *toolCallAcc {
	if index != nil {
		for _, c := range a.calls {
			if c.index == *index {
				return c
			}
		}
		return a.newSlot(*index)
	}
	if id != "" {
		for _, c := range a.calls {
			if c.id == id {
				return c
			}
		}
		return a.newSlot(a.nextIndex())
	}
	if len(a.calls) == 0 {
		return a.newSlot(0)
	}
	last := a.calls[len(a.calls)-1]
	if name != "" && last.name != "" && json.Valid([]byte(last.args.String())) {
		return a.newSlot(a.nextIndex())
	}
	return last
}

func (a *streamAccumulator) nextIndex() int {
	n := 0
	for _, c := range a.calls {
		if c.index >= n {
			n = c.index + 1
		}
	}
	return n
}

// newSlot starts a tool call, or returns nil past maxToolCalls.
func (a *streamAccumulator) newSlot(index int) *toolCallAcc {
	if len(a.calls) >= maxToolCalls {
		return nil
	}
	c := &toolCallAcc{index: index}
	a.calls = append(a.calls, c)
	return c
}

func (a *streamAccumulator) response() *Response {
	if a.cut == "" {
		a.flushText()
		tail := a.think.Flush()
		a.content.WriteString(tail)
		a.deliver(tail)
	}
	a.reasoning.WriteString(a.reason.Flush())
	reasoning := strings.TrimSpace(a.reasoning.String())
	if r := a.think.Reasoning(); r != "" {
		if reasoning != "" {
			reasoning += "\n"
		}
		reasoning += r
	}
	resp := &Response{
		Content:      a.content.String(),
		Reasoning:    a.red.String(reasoning),
		FinishReason: a.finish,
		Usage:        a.usage,
		Cut:          a.cut,
	}
	calls := append([]*toolCallAcc(nil), a.calls...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	for _, c := range calls {
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		id := c.id
		if id == "" {
			id = "call_" + strconv.Itoa(c.index)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: a.red.String(id), Name: a.red.String(c.name), Arguments: a.red.String(args)})
	}
	return resp
}
