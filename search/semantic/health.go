package semantic

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vault-agent/vault-agent/llm"
)

// An embedding endpoint that is down, or too slow, costs a search at most
// queryTimeout, once: the query's embedding is one attempt bounded by
// queryTimeout, and after a failure that a later attempt may not have (the
// server unreachable, timing out, overloaded or failing) the endpoint is
// marked down. While it is down, hybrid search answers lexically at once
// (and says so once, in the log), semantic search fails at once with
// ErrUnavailable, and Sync and the watcher embed nothing. In the
// background the endpoint is tried again, after probeFirst, then twice as
// long each time up to probeMax; when it answers, the vectors the outage
// missed are embedded (a Sync) and search uses them again.
const (
	queryTimeout = time.Second
	probeFirst   = time.Second
	probeMax     = time.Minute
	// probeTimeout bounds one background attempt: a local server may take
	// seconds to load its model on the first request.
	probeTimeout = 30 * time.Second
	probeText    = "is the embedding endpoint back?"
)

// ErrUnavailable is the error of a semantic search while the embedding
// endpoint is down.
var ErrUnavailable = errors.New("the embedding endpoint is unavailable (tried again in the background)")

// onceEmbedder makes a single attempt, without retries; *llm.Embedder
// satisfies it. An Embedder without it is called with Embed.
type onceEmbedder interface {
	EmbedOnce(ctx context.Context, texts []string) ([][]float32, error)
}

// health is the state of the embedding endpoint.
type health struct {
	mu      sync.Mutex
	down    bool
	lastErr error
	probing bool
	closed  bool // no probe starts any more
}

// unavailable reports whether err says the endpoint is down or too slow,
// rather than that it refused this request.
func unavailable(err error) bool {
	return errors.Is(err, llm.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// embedOnce embeds texts in a single attempt.
func (e *Engine) embedOnce(ctx context.Context, texts []string) ([][]float32, error) {
	if o, ok := e.emb.(onceEmbedder); ok {
		return o.EmbedOnce(ctx, texts)
	}
	return e.emb.Embed(ctx, texts)
}

// downErr returns ErrUnavailable, with the failure that marked the
// endpoint down, while it is down, and nil otherwise.
func (e *Engine) downErr() error {
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	if !e.health.down {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, e.health.lastErr)
}

// embedQuery embeds a query: one attempt within queryTimeout, none while
// the endpoint is down. A failure that says the endpoint is down marks it
// so.
func (e *Engine) embedQuery(ctx context.Context, text string) ([][]float32, error) {
	if err := e.downErr(); err != nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, e.queryTimeout)
	defer cancel()
	vs, err := e.embedOnce(qctx, []string{text})
	if err != nil && ctx.Err() == nil && unavailable(err) {
		e.markDown(err)
	}
	return vs, err
}

// markDown marks the endpoint down after err, says so once per outage,
// and starts trying it again in the background.
func (e *Engine) markDown(err error) {
	h := &e.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down {
		e.log.Warn("search results are lexical only: the embedding endpoint is unavailable; it is tried again in the background", "model", e.model, "error", err)
	}
	h.down, h.lastErr = true, err
	if h.probing || h.closed {
		return
	}
	h.probing = true
	e.probes.Add(1)
	go e.probe()
}

// probe tries the endpoint with backoff until it answers or the engine is
// closed; then it embeds what the outage missed.
func (e *Engine) probe() {
	defer e.probes.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-e.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	wait := e.probeFirst
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			e.health.mu.Lock()
			e.health.probing = false
			e.health.mu.Unlock()
			return
		case <-t.C:
		}
		pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
		_, err := e.embedOnce(pctx, []string{probeText})
		pcancel()
		if ctx.Err() != nil {
			continue // closed: the next turn returns
		}
		if err == nil || !unavailable(err) {
			// Any answer, even a refusal of this text, is the server up.
			break
		}
		e.log.Debug("the embedding endpoint is still unavailable", "model", e.model, "retryIn", (2 * wait).String(), "error", err)
		wait = min(2*wait, e.probeMax)
	}
	e.health.mu.Lock()
	e.health.down, e.health.lastErr, e.health.probing = false, nil, false
	e.health.mu.Unlock()
	e.log.Info("the embedding endpoint answers again: search uses the vectors again", "model", e.model)
	if st, err := e.Sync(ctx, nil); err != nil && ctx.Err() == nil {
		e.log.Warn("could not embed the notes the outage missed", "error", err)
	} else if st.Embedded > 0 {
		e.log.Info("embedded the notes the outage missed", "chunks", st.Embedded)
	}
	select {
	case e.recovered <- struct{}{}:
	default:
	}
}
