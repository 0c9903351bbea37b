package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/vault-agent/vault-agent/internal/redact"
)

// caller is what the chat and the embeddings clients share: the model and
// endpoint they call, the redaction of their key, the bound of one
// attempt and the retry policy.
type caller struct {
	model      string
	red        *redact.Redactor
	baseURL    string
	timeout    time.Duration
	maxRetries int
	log        *slog.Logger
	sleep      func(ctx context.Context, d time.Duration) error
}

// newCaller checks baseURL and returns the go-openai config for key and
// baseURL with the caller; timeout and maxRetries <= 0 take the defaults
// given (a negative maxRetries means none), a nil log discards, a nil
// sleep is a timer that honours ctx. op prefixes its errors; component
// names the caller in its log lines.
func newCaller(op, component, key, baseURL, model string, timeout, defTimeout time.Duration, maxRetries, defRetries int,
	log *slog.Logger, sleep func(context.Context, time.Duration) error) (openai.ClientConfig, caller, error) {
	red := redact.New(key)
	oc := openai.DefaultConfig(key)
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return oc, caller{}, fmt.Errorf("%s: base URL %q is not an http(s) URL", op, red.String(baseURL))
		}
		oc.BaseURL = strings.TrimRight(baseURL, "/")
	}
	c := caller{model: model, red: red, baseURL: oc.BaseURL, timeout: timeout, maxRetries: maxRetries, log: log, sleep: sleep}
	if c.timeout <= 0 {
		c.timeout = defTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = defRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("component", component)
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	return oc, c, nil
}

// httpClient is the client of every request to a model server: hc (a
// new http.Client when nil) with redirects that never carry the key to
// another origin.
func httpClient(hc *http.Client) *http.Client { return keepKeyAtHome(hc) }

// pause waits before retry number attempt+1 of a call that failed with
// err, or returns the error that ends the call (prefixed with op): the
// retries are spent or ctx ended the wait. logMsg is its warning.
func (c *caller) pause(ctx context.Context, op, logMsg string, attempt int, wait time.Duration, err error) error {
	if attempt >= c.maxRetries {
		return fmt.Errorf("%s: giving up after %d attempts: %w", op, attempt+1, err)
	}
	c.log.Warn(logMsg, "model", c.model, "attempt", attempt+1, "wait", wait.String(), "error", err.Error())
	if serr := c.sleep(ctx, wait); serr != nil {
		return fmt.Errorf("%s: waiting to retry: %w", op, serr)
	}
	return nil
}

// classify turns a go-openai or transport error into a redacted error that
// says whether it is worth retrying.
func (c *caller) classify(parent, actx context.Context, err error, capt *respCapture) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	if actx.Err() != nil {
		return &transientError{msg: fmt.Sprintf("call timed out after %s", c.timeout)}
	}
	var fb *firstByteError
	var notAPI *notOpenAIError
	if errors.As(err, &fb) || errors.As(err, &notAPI) {
		return err // says what happened; not worth a retry
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status, msg := 0, ""
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
		msg = strings.TrimSpace(string(reqErr.Body))
		if msg == "" {
			msg = reqErr.HTTPStatus
		}
	}
	if status > 0 {
		se := &StatusError{StatusCode: status, Message: c.red.Truncate(msg, maxErrorMessage)}
		if h := capt.header(); h != nil {
			se.RetryAfter = parseRetryAfter(h, time.Now())
		}
		return se
	}
	if apiErr != nil {
		// An error event inside the stream: the server gave up mid-answer.
		return &transientError{msg: "server error in stream: " + c.red.Truncate(apiErr.Message, maxErrorMessage)}
	}
	var netErr net.Error
	var urlErr *url.Error
	if errors.As(err, &netErr) || errors.As(err, &urlErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) {
		return &transientError{msg: "connection error: " + c.redact(err.Error())}
	}
	return errors.New(c.redact(err.Error()))
}

// backoff returns how long to wait before retry number attempt+1, and false
// when the server asked for a wait too long to honour.
func (c *caller) backoff(attempt int, err error) (time.Duration, bool) {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		if se.RetryAfter > maxRetryAfter {
			return 0, false
		}
		return se.RetryAfter, true
	}
	d := backoffBase << attempt
	if d > backoffCap || d <= 0 {
		d = backoffCap
	}
	// Equal jitter: half fixed, half random, so concurrent runs spread out.
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1)), true
}

func (c *caller) redact(s string) string { return c.red.String(s) }

// configString and configLogValue describe a client config without its
// key, for String, GoString and LogValue.
func configString(typ, model, baseURL, key string) string {
	state := "unset"
	if key != "" {
		state = "set"
	}
	return fmt.Sprintf("%s{Model:%q BaseURL:%q APIKey:%s}", typ, model, baseURL, state)
}

func configLogValue(model, baseURL, key string) slog.Value {
	return slog.GroupValue(slog.String("model", model), slog.String("baseUrl", baseURL), slog.Bool("apiKeySet", key != ""))
}
