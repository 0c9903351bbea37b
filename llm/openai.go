package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of the OpenAI provider.
const (
	DefaultOpenAITimeout    = 120 * time.Second
	DefaultOpenAIMaxRetries = 3
	// DefaultFirstByteTimeout bounds the wait for a response to start
	// (its headers). A minute covers a local server loading a model.
	DefaultFirstByteTimeout = 60 * time.Second
	// DefaultMaxAnswerBytes caps the visible answer of one call, and
	// separately its reasoning (1 MiB, about 250,000 tokens).
	DefaultMaxAnswerBytes = 1 << 20
	// DefaultMaxToolArgumentBytes caps the arguments of one tool call
	// (256 KiB).
	DefaultMaxToolArgumentBytes = 256 << 10
	// maxToolCalls caps the tool calls of one answer.
	maxToolCalls = 64
	// maxStreamLine caps one line of the event stream: the answer caps
	// cannot act before a line is whole.
	maxStreamLine = 8 << 20
	// maxRetryAfter is the longest server-requested wait we honour; a server
	// asking for more (a spent quota) gets an error instead of a stalled run.
	maxRetryAfter = 60 * time.Second
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 20 * time.Second
)

// OpenAIConfig configures the OpenAI-compatible provider. Its String and
// LogValue methods never show the key.
type OpenAIConfig struct {
	// APIKey defaults to $OPENAI_API_KEY. It may be empty when BaseURL points
	// at a local server (Ollama, llama.cpp, vLLM, LM Studio); then no
	// Authorization header is sent.
	APIKey string
	// BaseURL defaults to $OPENAI_BASE_URL, then to the OpenAI API. For
	// Ollama: http://localhost:11434/v1.
	BaseURL string
	// Model is required, e.g. "gpt-4o-mini" or "qwen3:8b".
	Model string
	// Timeout bounds one attempt of a call, streaming included. Default 120s.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt on 429,
	// 5xx and connection errors. 0 means the default (3); negative disables
	// retries.
	MaxRetries int
	// HTTPClient defaults to a new http.Client.
	HTTPClient *http.Client
	// Logger defaults to a discarding logger.
	Logger *slog.Logger
	// Sleep waits between retries; tests inject it. Default: a timer that
	// honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// DisableStreamUsage stops asking for usage in the stream
	// (stream_options.include_usage), for old servers that reject it.
	DisableStreamUsage bool
	// FirstByteTimeout bounds the wait for the server to start answering a
	// request. A server that accepts the connection and sends nothing gets
	// a clear error, not retried. Default 60s; negative disables it.
	FirstByteTimeout time.Duration
	// MaxAnswerBytes caps the visible text (and, separately, the reasoning)
	// of one call; MaxToolArgumentBytes caps the arguments of each tool
	// call. Past a cap the stream is stopped and Response.Cut says so.
	// Defaults DefaultMaxAnswerBytes and DefaultMaxToolArgumentBytes.
	MaxAnswerBytes       int
	MaxToolArgumentBytes int
}

// String describes the config without its key.
func (c OpenAIConfig) String() string {
	return configString("OpenAIConfig", c.Model, c.BaseURL, c.APIKey)
}

// GoString keeps %#v from printing the key.
func (c OpenAIConfig) GoString() string { return c.String() }

// LogValue keeps slog from printing the key.
func (c OpenAIConfig) LogValue() slog.Value { return configLogValue(c.Model, c.BaseURL, c.APIKey) }

// OpenAI is a Model backed by any OpenAI-compatible Chat Completions
// endpoint. It streams, joins tool-call deltas by index, removes thinking
// content and retries transient failures that happen before any text was
// delivered. The API key is removed from everything the server sends back
// (text, reasoning, tool calls, errors) before anything else sees it. It is
// safe for concurrent use.
type OpenAI struct {
	caller
	client    *openai.Client
	maxAnswer int
	maxArgs   int
	usage     bool
	// noUsage is set once the server refused stream_options, so later
	// calls do not ask again.
	noUsage atomic.Bool
}

// NewOpenAI returns the provider for cfg. It reads no environment and
// makes no request: cfg.Model is required (FirstModel asks a server that
// serves one model for its name).
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	cfg.Model = strings.TrimSpace(cfg.Model)
	if cfg.Model == "" {
		return nil, errModelRequired
	}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, fmt.Errorf("openai provider: %w: set OPENAI_API_KEY, or set a base URL (OPENAI_BASE_URL, --base-url) for a local server such as http://localhost:11434/v1", ErrNoAPIKey)
	}
	oc, c, err := newCaller("openai provider", "llm.openai", cfg.APIKey, cfg.BaseURL, cfg.Model,
		cfg.Timeout, DefaultOpenAITimeout, cfg.MaxRetries, DefaultOpenAIMaxRetries, cfg.Logger, cfg.Sleep)
	if err != nil {
		return nil, err
	}
	firstByte := cfg.FirstByteTimeout
	if firstByte == 0 {
		firstByte = DefaultFirstByteTimeout
	}
	oc.HTTPClient = captureDoer{c: httpClient(cfg.HTTPClient), firstByte: firstByte, baseURL: c.red.String(oc.BaseURL)}
	// go-openai fails a stream after 300 non-data lines in a row; servers
	// that send SSE keep-alive comments while a model thinks can exceed it.
	oc.EmptyMessagesLimit = 100000
	o := &OpenAI{
		caller:    c,
		client:    openai.NewClientWithConfig(oc),
		maxAnswer: cfg.MaxAnswerBytes,
		maxArgs:   cfg.MaxToolArgumentBytes,
		usage:     !cfg.DisableStreamUsage,
	}
	if o.maxAnswer <= 0 {
		o.maxAnswer = DefaultMaxAnswerBytes
	}
	if o.maxArgs <= 0 {
		o.maxArgs = DefaultMaxToolArgumentBytes
	}
	return o, nil
}

// Name returns "openai/<model>".
func (o *OpenAI) Name() string { return "openai/" + o.model }

// Chat streams one chat completion. Visible text goes to onDelta as it
// arrives; thinking content goes to Response.Reasoning only. Failures before
// any visible text was delivered are retried (429, 5xx, connection errors,
// cut streams) with exponential backoff and jitter, honouring Retry-After;
// after text was delivered a failure is returned as is. Malformed tool-call
// arguments are returned raw in ToolCall.Arguments, not as an error.
func (o *OpenAI) Chat(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	creq := o.buildRequest(req)
	delivered := false
	deliver := func(s string) {
		if s == "" {
			return
		}
		delivered = true
		if onDelta != nil {
			onDelta(s)
		}
	}
	for attempt := 0; ; attempt++ {
		start := time.Now()
		resp, err := o.attempt(ctx, creq, deliver)
		if err == nil {
			o.log.Debug("chat completed", "model", o.model, "attempt", attempt+1,
				"finishReason", resp.FinishReason, "toolCalls", len(resp.ToolCalls),
				"promptTokens", resp.Usage.PromptTokens, "completionTokens", resp.Usage.CompletionTokens,
				"elapsedMs", time.Since(start).Milliseconds())
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("openai chat: %w", ctx.Err())
		}
		if !delivered && creq.StreamOptions != nil && refusedStreamOptions(err) {
			// Older and stricter servers refuse the stream_options field:
			// ask again at once without it, and never again after that.
			creq.StreamOptions = nil
			o.noUsage.Store(true)
			o.log.Info("the server refused stream_options; not asking for usage any more", "model", o.model)
			continue
		}
		if delivered || !retryable(err) {
			return nil, fmt.Errorf("openai chat: %w", err)
		}
		wait, ok := o.backoff(attempt, err)
		if !ok {
			return nil, fmt.Errorf("openai chat: %w", err)
		}
		if perr := o.pause(ctx, "openai chat", "chat failed, retrying", attempt, wait, err); perr != nil {
			return nil, perr
		}
	}
}

// attempt runs one streamed request. Errors it returns are already redacted.
func (o *OpenAI) attempt(ctx context.Context, creq openai.ChatCompletionRequest, deliver func(string)) (*Response, error) {
	actx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	capt := &respCapture{}
	actx = context.WithValue(actx, captureKey{}, capt)

	stream, err := o.client.CreateChatCompletionStream(actx, creq)
	if err != nil {
		return nil, o.classify(ctx, actx, err, capt)
	}
	defer stream.Close()

	acc := o.newAccumulator(deliver)
	received := 0
	for acc.cut == "" {
		raw, rerr := stream.RecvRaw()
		if errors.Is(rerr, io.EOF) {
			break
		}
		var long *lineTooLongError
		if errors.As(rerr, &long) {
			return nil, long
		}
		if rerr != nil {
			// What the redactor held back was text the server sent.
			acc.flushText()
			cause := o.classify(ctx, actx, rerr, capt)
			return nil, &interruptedError{bytes: received, cause: cause}
		}
		received += len(raw)
		var c streamChunk
		if err := json.Unmarshal(raw, &c); err != nil {
			o.log.Warn("skipping undecodable stream chunk", "bytes", len(raw))
			continue
		}
		acc.add(&c)
	}
	if acc.cut != "" {
		// Stopped reading: the deferred Close drops the connection.
		o.log.Warn("model output cut", "model", o.model, "cut", acc.cut)
		return acc.response(), nil
	}
	if !acc.finished && !capt.done.Load() {
		acc.flushText()
		return nil, &interruptedError{bytes: received, cause: errors.New("the stream ended without a finish reason or [DONE]")}
	}
	if !acc.finished {
		// Some servers end with [DONE] but never send a finish reason.
		o.log.Debug("stream ended with [DONE] but no finish reason", "model", o.model)
	}
	return acc.response(), nil
}

// maxErrorMessage is how much of a server's error message an error keeps.
const maxErrorMessage = 300

// reasoningModel reports models that reject max_tokens and temperature.
func reasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func (o *OpenAI) buildRequest(req Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{
		Model:    o.model,
		Messages: toOpenAIMessages(req.Messages),
		Stream:   true,
	}
	if o.usage && !o.noUsage.Load() {
		creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 || !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		creq.Tools = append(creq.Tools, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        t.Name,
				Description: t.Description,
				Parameters:  params,
			},
		})
	}
	reasoning := reasoningModel(o.model)
	if req.Temperature != nil && !reasoning {
		t := *req.Temperature
		if t == 0 {
			// go-openai drops temperature 0 (omitempty); the smallest
			// positive float32 is greedy decoding in practice.
			t = math.SmallestNonzeroFloat32
		}
		creq.Temperature = t
	}
	if req.MaxTokens > 0 {
		if reasoning {
			creq.MaxCompletionTokens = req.MaxTokens
		} else {
			creq.MaxTokens = req.MaxTokens
		}
	}
	return creq
}

func toOpenAIMessages(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
					ID:   tc.ID,
					Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{
						Name:      tc.Name,
						Arguments: sendableArguments(tc.Arguments),
					},
				})
			}
		case RoleTool:
			om.ToolCallID = m.ToolCallID
			if om.Content == "" {
				// go-openai omits empty content, and servers require it on
				// tool messages.
				om.Content = "(no output)"
			}
		}
		out = append(out, om)
	}
	return out
}

// sendableArguments keeps malformed arguments from an earlier turn from
// breaking the next request: servers such as Ollama parse them and answer 400.
// The raw text stays visible to the model inside a valid object.
func sendableArguments(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	if json.Valid([]byte(args)) {
		return args
	}
	b, _ := json.Marshal(map[string]string{"invalid_arguments": args})
	return string(b)
}
