package llm

import (
	"context"
	"encoding/json"
)

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are set on assistant messages that call tools.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID and Name are set on tool result messages.
	ToolCallID string `json:"toolCallId,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw JSON text the model produced; it may be malformed.
	Arguments string `json:"arguments"`
}

// ToolDef describes a tool offered to the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call. A call with no Tools is a plain call.
type Request struct {
	Messages []Message `json:"messages"`
	Tools    []ToolDef `json:"tools,omitempty"`
	// Temperature is optional; nil leaves the provider default.
	Temperature *float32 `json:"temperature,omitempty"`
	// MaxTokens is optional; 0 leaves the provider default.
	MaxTokens int `json:"maxTokens,omitempty"`
}

// Response is what a model call returned once it finished.
type Response struct {
	// Content is the visible text, with thinking content removed.
	Content string `json:"content"`
	// Reasoning is thinking content (<think>...</think> or a separate field);
	// it never reaches the answer or the reasoning steps.
	Reasoning    string     `json:"reasoning,omitempty"`
	ToolCalls    []ToolCall `json:"toolCalls,omitempty"`
	FinishReason string     `json:"finishReason,omitempty"`
	Usage        Usage      `json:"usage"`
	// Cut is set when the provider stopped reading an answer that went
	// past its size limits, and says what was cut; FinishReason is then
	// "length" and Content ends with a line saying so.
	Cut string `json:"cut,omitempty"`
}

// Usage counts tokens where the provider reports them.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// Model is a chat model. Chat streams visible text deltas to onDelta (which
// may be nil) as they arrive and returns the whole response at the end.
// Implementations must be safe for concurrent use by several runs.
type Model interface {
	Chat(ctx context.Context, req Request, onDelta func(text string)) (*Response, error)
	// Name identifies the provider and model, e.g. "openai/gpt-4o-mini".
	Name() string
}
