package llm

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of the package. Callers test for them with errors.Is.
var (
	// ErrNoModel means a provider was configured without a model name.
	ErrNoModel = errors.New("no model configured")
	// ErrNoAPIKey means the OpenAI provider has neither a key nor a base URL
	// of a local server that needs none.
	ErrNoAPIKey = errors.New("no API key")
	// ErrStreamInterrupted means a streamed response ended before the server
	// said it was complete.
	ErrStreamInterrupted = errors.New("stream interrupted")
	// ErrScriptExhausted means the run asked a scripted model for more turns
	// than its fixture holds.
	ErrScriptExhausted = errors.New("scripted model exhausted")
	// ErrScriptExpectation means a scripted turn's expectation about the
	// request did not hold.
	ErrScriptExpectation = errors.New("scripted model expectation failed")
)

// StatusError is an HTTP error answer of a model server. Message never
// contains the API key.
type StatusError struct {
	StatusCode int
	Message    string
	// RetryAfter is the wait the server asked for, zero when it sent none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("status %d", e.StatusCode)
	}
	return fmt.Sprintf("status %d: %s", e.StatusCode, e.Message)
}

// Temporary reports whether the request may succeed when retried.
func (e *StatusError) Temporary() bool {
	return e.StatusCode == 408 || e.StatusCode == 409 || e.StatusCode == 429 || e.StatusCode >= 500
}
