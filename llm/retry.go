package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
