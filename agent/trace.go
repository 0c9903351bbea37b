package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// TraceWriter writes a run's events as JSON lines, one write per event so
// that a crash keeps everything that happened before it. Transient events
// (answer deltas) are not written. It is safe for concurrent use.
type TraceWriter struct {
	mu   sync.Mutex // guards f and err
	f    *os.File
	err  error
	path string
}

// CreateTrace creates (or truncates) a trace file.
func CreateTrace(path string) (*TraceWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	return &TraceWriter{f: f, path: path}, nil
}

// Emit writes one event line. The first write error is kept and reported by
// Close; later events are dropped.
func (t *TraceWriter) Emit(ev Event) {
	if ev.Transient() {
		return
	}
	b, err := json.Marshal(ev)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	if err != nil {
		t.err = fmt.Errorf("trace %s: encode event %s: %w", t.path, ev.EventID, err)
		return
	}
	if _, err := t.f.Write(append(b, '\n')); err != nil {
		t.err = fmt.Errorf("trace %s: %w", t.path, err)
	}
}

// Close closes the file and reports the first write error.
func (t *TraceWriter) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cerr := t.f.Close()
	if t.err != nil {
		return t.err
	}
	return cerr
}

// Tee returns a Sink that forwards every event to each non-nil sink in order.
func Tee(sinks ...Sink) Sink {
	var live []Sink
	for _, s := range sinks {
		if s != nil {
			live = append(live, s)
		}
	}
	return SinkFunc(func(ev Event) {
		for _, s := range live {
			s.Emit(ev)
		}
	})
}
