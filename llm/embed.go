package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of the embeddings client.
const (
	DefaultEmbedBatch      = 64
	DefaultEmbedTimeout    = 60 * time.Second
	DefaultEmbedMaxRetries = 5
)

// EmbedderConfig configures NewEmbedder. Its String and LogValue methods
// never show the key.
type EmbedderConfig struct {
	// BaseURL is the OpenAI-compatible endpoint, e.g.
	// http://localhost:11434/v1 for Ollama; "" is the OpenAI API.
	BaseURL string
	// Model is the embedding model, e.g. nomic-embed-text or
	// text-embedding-3-small (required).
	Model string
	// APIKey may be empty for a local server.
	APIKey string
	// Batch is the most texts sent in one request (default 64).
	Batch int
	// Timeout bounds one request (default 60s).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt on 429,
	// 5xx, timeouts and connection errors: 0 means the default (5),
	// negative none.
	MaxRetries int
	// HTTPClient defaults to a new http.Client.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Sleep waits between retries; tests inject it. Default: a timer that
	// honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// String describes the config without its key.
func (c EmbedderConfig) String() string {
	return configString("EmbedderConfig", c.Model, c.BaseURL, c.APIKey)
}

// GoString keeps %#v from printing the key.
func (c EmbedderConfig) GoString() string { return c.String() }

// LogValue keeps slog from printing the key.
func (c EmbedderConfig) LogValue() slog.Value { return configLogValue(c.Model, c.BaseURL, c.APIKey) }

// Embedder turns texts into vectors through the embeddings endpoint of any
// OpenAI-compatible server (OpenAI, Ollama, llama.cpp --embedding, LM
// Studio, vLLM), with go-openai. It sends at most Batch texts per request,
// bounds each request by Timeout and retries 429, 5xx, timeouts and
// connection errors with exponential backoff, honouring Retry-After. Its
// errors never hold the API key. It is safe for concurrent use.
type Embedder struct {
	caller
	client *openai.Client
	batch  int
	// requests counts the HTTP requests made, retries included.
	requests atomic.Int64
}

// NewEmbedder returns the client for cfg. It reads no environment and
// makes no request.
func NewEmbedder(cfg EmbedderConfig) (*Embedder, error) {
	cfg.Model = strings.TrimSpace(cfg.Model)
	if cfg.Model == "" {
		return nil, fmt.Errorf("embeddings: %w: set embedModel (--embed-model), e.g. nomic-embed-text for Ollama or text-embedding-3-small for OpenAI", ErrNoModel)
	}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, fmt.Errorf("embeddings: %w: set OPENAI_API_KEY for OpenAI, or embedBaseUrl (--embed-base-url) for a local server such as http://localhost:11434/v1", ErrNoAPIKey)
	}
	oc, c, err := newCaller("embeddings", "llm.embed", cfg.APIKey, cfg.BaseURL, cfg.Model,
		cfg.Timeout, DefaultEmbedTimeout, cfg.MaxRetries, DefaultEmbedMaxRetries, cfg.Logger, cfg.Sleep)
	if err != nil {
		return nil, err
	}
	oc.HTTPClient = headerDoer{c: httpClient(cfg.HTTPClient), baseURL: c.red.String(oc.BaseURL)}
	e := &Embedder{caller: c, client: openai.NewClientWithConfig(oc), batch: cfg.Batch}
	if e.batch <= 0 {
		e.batch = DefaultEmbedBatch
	}
	return e, nil
}

// Model returns the embedding model's name.
func (e *Embedder) Model() string { return e.model }

// Requests returns the number of HTTP requests made so far, retries
// included.
func (e *Embedder) Requests() int64 { return e.requests.Load() }

// ErrUnavailable marks an error of EmbedOnce that a later attempt may not
// have: the server unreachable, timing out, overloaded (429) or failing
// (5xx).
var ErrUnavailable = errors.New("the embeddings endpoint is unavailable")

// Embed returns one vector per text, in order, sending them Batch at a
// time. An empty text is sent as a single space (servers refuse empty
// input).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, true)
}

// EmbedOnce is Embed with a single attempt per request and no retries,
// for a caller with something better to do than wait (hybrid search
// answers lexically, and tries the endpoint again in the background). A
// failure that a later attempt may not have wraps ErrUnavailable.
func (e *Embedder) EmbedOnce(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, false)
}

func (e *Embedder) embed(ctx context.Context, texts []string, retry bool) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		part := texts[start:min(start+e.batch, len(texts))]
		vecs, err := e.embedBatch(ctx, part, retry)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string, retry bool) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	req := openai.EmbeddingRequestStrings{Input: input, Model: openai.EmbeddingModel(e.model), EncodingFormat: openai.EmbeddingEncodingFormatFloat}
	for attempt := 0; ; attempt++ {
		vecs, err := e.attempt(ctx, req)
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embeddings: %w", ctx.Err())
		}
		if !retryable(err) {
			return nil, fmt.Errorf("embeddings (%s at %s): %w", e.model, e.red.String(e.baseURL), err)
		}
		if !retry {
			return nil, fmt.Errorf("embeddings (%s at %s): %w: %w", e.model, e.red.String(e.baseURL), ErrUnavailable, err)
		}
		wait, ok := e.backoff(attempt, err)
		if !ok {
			return nil, fmt.Errorf("embeddings: the server asks to wait longer than %s: %w", maxRetryAfter, err)
		}
		if perr := e.pause(ctx, "embeddings", "embedding request failed, retrying", attempt, wait, err); perr != nil {
			return nil, perr
		}
	}
}

// attempt makes one request; its errors are redacted and classified.
func (e *Embedder) attempt(ctx context.Context, req openai.EmbeddingRequestStrings) ([][]float32, error) {
	actx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	capt := &respCapture{}
	actx = context.WithValue(actx, captureKey{}, capt)
	e.requests.Add(1)
	resp, err := e.client.CreateEmbeddings(actx, req)
	if err != nil {
		return nil, e.classify(ctx, actx, err, capt)
	}
	if len(resp.Data) != len(req.Input) {
		return nil, fmt.Errorf("embeddings: the server returned %d vectors for %d texts", len(resp.Data), len(req.Input))
	}
	out := make([][]float32, len(req.Input))
	for i, d := range resp.Data {
		idx := d.Index
		if idx < 0 || idx >= len(out) || out[idx] != nil {
			idx = i // a server that numbers them wrongly: keep the order
		}
		if len(d.Embedding) == 0 {
			return nil, errors.New("embeddings: the server returned an empty vector")
		}
		out[idx] = d.Embedding
	}
	dims := len(out[0])
	for _, v := range out {
		if v == nil || len(v) != dims {
			return nil, errors.New("embeddings: the server returned vectors of different lengths")
		}
	}
	return out, nil
}

// headerDoer hands the response headers (Retry-After) of a request to the
// respCapture in its context, and refuses HTML answers (a web page at the
// base URL, not an API).
type headerDoer struct {
	c       *http.Client
	baseURL string // redacted, for errors
}

func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err != nil {
		return resp, err
	}
	if c, ok := req.Context().Value(captureKey{}).(*respCapture); ok {
		c.set(resp.Header.Clone())
	}
	if ct, ok := htmlResponse(resp); ok {
		resp.Body.Close()
		return nil, &notOpenAIError{url: d.baseURL, contentType: ct}
	}
	return resp, nil
}
