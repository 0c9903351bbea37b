package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/vault-agent/vault-agent/internal/redact"
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

var errModelRequired = fmt.Errorf("openai provider: %w: set --model (or the model setting, or OPENAI_MODEL), e.g. gpt-4o-mini, or qwen3:8b for Ollama", ErrNoModel)

// FirstModel returns the first model the server at cfg.BaseURL lists, for
// a configuration without a model: a local server (llama.cpp, LM Studio,
// vLLM) usually serves one.
func FirstModel(ctx context.Context, cfg OpenAIConfig) (string, error) {
	if cfg.BaseURL == "" {
		return "", errModelRequired
	}
	cfg.Model = "(listing models)"
	o, err := NewOpenAI(cfg)
	if err != nil {
		return "", err
	}
	m, err := o.firstModel(ctx)
	if err != nil {
		return "", fmt.Errorf("openai provider: %w: set --model (or the model setting, or OPENAI_MODEL); asking %s for its models failed: %v", ErrNoModel, o.red.String(o.baseURL), err)
	}
	return m, nil
}

// modelListTimeout bounds the model list request made when no model is
// configured.
const modelListTimeout = 10 * time.Second

// firstModel returns the first model the server lists.
func (o *OpenAI) firstModel(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	list, err := o.client.ListModels(ctx)
	if err != nil {
		return "", errors.New(o.redact(err.Error()))
	}
	for _, m := range list.Models {
		if id := strings.TrimSpace(m.ID); id != "" {
			o.log.Info("no model configured; using the first model the server lists", "model", id, "listed", len(list.Models))
			return id, nil
		}
	}
	return "", errors.New("the server lists no models")
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

// transientError is a failure worth retrying (connection trouble, timeout).
type transientError struct{ msg string }

func (e *transientError) Error() string { return e.msg }

// interruptedError is a stream that broke after it started.
type interruptedError struct {
	bytes int
	cause error
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("stream interrupted after %d bytes: %v", e.bytes, e.cause)
}

func (e *interruptedError) Is(target error) bool { return target == ErrStreamInterrupted }

func (e *interruptedError) Unwrap() error { return e.cause }

// refusedStreamOptions reports a server refusing the request because of its
// stream_options field ("Unrecognized request argument supplied:
// stream_options", or a validation error whose location names it).
func refusedStreamOptions(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) || (se.StatusCode != http.StatusBadRequest && se.StatusCode != http.StatusUnprocessableEntity) {
		return false
	}
	m := strings.ToLower(se.Message)
	return strings.Contains(m, "stream_options") || strings.Contains(m, "include_usage")
}

func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Temporary()
	}
	var te *transientError
	var ie *interruptedError
	return errors.As(err, &te) || errors.As(err, &ie)
}

// parseRetryAfter reads retry-after-ms (OpenAI) or Retry-After in seconds or
// as an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// captureKey carries a *respCapture in a request context, so the HTTP
// wrapper can hand the response headers (Retry-After) of one call back to it
// even though go-openai's errors do not carry headers.
type captureKey struct{}

type respCapture struct {
	mu sync.Mutex
	h  http.Header
	// done is set when the body carried the stream's "data: [DONE]" line,
	// which go-openai reports as io.EOF just like a closed connection.
	done atomic.Bool
}

func (c *respCapture) set(h http.Header) {
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
}

func (c *respCapture) header() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// doneWatcher notes the "[DONE]" sentinel line as the response body
// streams by ("data: [DONE]", with or without the space).
type doneWatcher struct {
	io.ReadCloser
	capt    *respCapture
	line    []byte // the start of the current, unfinished line (capped)
	lineLen int    // the length of the current line
}

const maxWatchedLine = 64

func (w *doneWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 && !w.capt.done.Load() {
		for _, b := range p[:n] {
			if b == '\n' {
				if isDoneLine(w.line) {
					w.capt.done.Store(true)
				}
				w.line, w.lineLen = w.line[:0], 0
				continue
			}
			if w.lineLen++; w.lineLen > maxStreamLine {
				return 0, &lineTooLongError{}
			}
			if len(w.line) < maxWatchedLine {
				w.line = append(w.line, b)
			}
		}
	}
	if err == io.EOF && isDoneLine(w.line) {
		w.capt.done.Store(true)
	}
	return n, err
}

func isDoneLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	return ok && string(bytes.TrimSpace(rest)) == "[DONE]"
}

// cancelOnClose releases the request's context with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// maxPlainCompletion caps the body of a non-streamed answer we convert.
const maxPlainCompletion = 32 << 20

// completionAsStream turns a plain chat.completion body (what servers that
// ignore "stream": true send) into the SSE stream go-openai expects: one
// chunk whose deltas are the messages, then [DONE]. It reports false when
// body is not a completion.
func completionAsStream(body []byte) ([]byte, bool) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return nil, false
	}
	choices, ok := m["choices"].([]any)
	if !ok {
		return nil, false
	}
	for _, c := range choices {
		ch, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		msg, _ := ch["message"].(map[string]any)
		if msg == nil {
			msg = map[string]any{}
		}
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, tc := range calls {
				if tcm, ok := tc.(map[string]any); ok {
					if _, has := tcm["index"]; !has {
						tcm["index"] = i
					}
				}
			}
		}
		delete(ch, "message")
		ch["delta"] = msg
		if _, has := ch["finish_reason"]; !has || ch["finish_reason"] == nil {
			ch["finish_reason"] = "stop"
		}
	}
	m["object"] = "chat.completion.chunk"
	chunk, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	var out bytes.Buffer
	out.WriteString("data: ")
	out.Write(chunk)
	out.WriteString("\n\ndata: [DONE]\n\n")
	return out.Bytes(), true
}

// plainCompletion reports a successful response that is a JSON document
// rather than an event stream.
func plainCompletion(resp *http.Response) bool {
	if resp.StatusCode != http.StatusOK {
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// firstByteError is a server that did not start answering in time.
type firstByteError struct {
	url   string
	after time.Duration
}

func (e *firstByteError) Error() string {
	return fmt.Sprintf("the model server at %s accepted the connection but sent no response within %s (first-byte timeout; raise it for a server that loads models slowly)", e.url, e.after)
}

// notOpenAIError is a successful answer that is not an API answer: a web
// page, usually because the base URL points at a web UI or a login proxy.
type notOpenAIError struct {
	url, contentType string
}

func (e *notOpenAIError) Error() string {
	return fmt.Sprintf("not an OpenAI-compatible endpoint: got %s from %s; check the base URL (most servers serve the API under /v1)", e.contentType, e.url)
}

// lineTooLongError is an event-stream line longer than maxStreamLine.
type lineTooLongError struct{}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("the model server sent a stream line longer than %d MiB; stopped reading", maxStreamLine>>20)
}

// htmlResponse reports a 200 answer in HTML.
func htmlResponse(resp *http.Response) (string, bool) {
	if resp.StatusCode != http.StatusOK {
		return "", false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt, err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// captureDoer is the openai.HTTPDoer that records response headers, turns
// plain JSON answers into streams, refuses web pages and bounds the wait
// for the first byte of a response.
type captureDoer struct {
	c         *http.Client
	firstByte time.Duration // <= 0: no bound but the call's timeout
	baseURL   string        // redacted, for errors
}

func (d captureDoer) Do(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	var timer *time.Timer
	if d.firstByte > 0 {
		timer = time.AfterFunc(d.firstByte, cancel)
	}
	resp, err := d.c.Do(req.WithContext(ctx))
	if timer != nil && !timer.Stop() && req.Context().Err() == nil {
		cancel()
		if resp != nil {
			resp.Body.Close()
		}
		return nil, &firstByteError{url: d.baseURL, after: d.firstByte}
	}
	if err != nil {
		cancel()
		return resp, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	if ct, ok := htmlResponse(resp); ok {
		resp.Body.Close()
		return nil, &notOpenAIError{url: d.baseURL, contentType: ct}
	}
	if resp != nil {
		if c, ok := req.Context().Value(captureKey{}).(*respCapture); ok {
			c.set(resp.Header.Clone())
			if plainCompletion(resp) {
				body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxPlainCompletion))
				resp.Body.Close()
				if rerr != nil {
					return nil, rerr
				}
				if sse, ok := completionAsStream(body); ok {
					body = sse
					resp.Header.Set("Content-Type", "text/event-stream")
				}
				resp.Body = io.NopCloser(bytes.NewReader(body))
			}
			resp.Body = &doneWatcher{ReadCloser: resp.Body, capt: c}
		}
	}
	return resp, err
}
