package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
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

// ErrBadTrace marks a trace file that cannot be read or replayed.
var ErrBadTrace = errors.New("bad trace")

// ReadTrace reads a JSONL trace written by TraceWriter. Each line must be
// one event of the same run, with seq 1, 2, 3...; the error names the first
// bad line (a truncated last line, invalid JSON, a missing field, a seq out
// of order, another run's id, a payload that is not its type's).
func ReadTrace(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTrace, err)
	}
	defer f.Close()
	return ParseTrace(f, path)
}

// ParseTrace is ReadTrace over a reader; name is used in errors.
func ParseTrace(r io.Reader, name string) ([]Event, error) {
	br := bufio.NewReader(r)
	var events []Event
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s: line %d: %s", ErrBadTrace, name, line, fmt.Sprintf(format, args...))
	}
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%w: %s: line %d: %v", ErrBadTrace, name, line, err)
		}
		complete := len(b) > 0 && b[len(b)-1] == '\n'
		text := bytes.TrimSpace(b)
		if len(text) > 0 {
			ev, perr := parseTraceLine(text)
			if perr != nil {
				if !complete {
					return nil, bad(line, "truncated event: the file ends in the middle of this line (was the run interrupted?)")
				}
				return nil, bad(line, "%v", perr)
			}
			if len(events) == 0 {
				if ev.Seq != 1 {
					return nil, bad(line, "seq %d out of order: a trace starts with its run's first event (seq 1)", ev.Seq)
				}
			} else {
				first, prev := events[0], events[len(events)-1]
				if ev.RunID != first.RunID {
					return nil, bad(line, "run id %q differs from %q on line 1: a trace holds one run", ev.RunID, first.RunID)
				}
				if ev.Seq != prev.Seq+1 {
					return nil, bad(line, "seq %d out of order: want %d", ev.Seq, prev.Seq+1)
				}
			}
			events = append(events, ev)
		}
		if err == io.EOF {
			break
		}
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%w: %s: the file holds no events", ErrBadTrace, name)
	}
	return events, nil
}

func parseTraceLine(b []byte) (Event, error) {
	var raw struct {
		EventID    *string         `json:"event_id"`
		EventType  *string         `json:"event_type"`
		Timestamp  *time.Time      `json:"timestamp"`
		Actor      string          `json:"actor"`
		RunID      *string         `json:"run_id"`
		Seq        *int            `json:"seq"`
		Iteration  int             `json:"iteration"`
		References References      `json:"references"`
		Payload    json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Event{}, fmt.Errorf("invalid JSON: %v", err)
	}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"event_id", raw.EventID != nil && *raw.EventID != ""},
		{"event_type", raw.EventType != nil && *raw.EventType != ""},
		{"timestamp", raw.Timestamp != nil},
		{"run_id", raw.RunID != nil && *raw.RunID != ""},
		{"seq", raw.Seq != nil},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return Event{}, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	payload, err := DecodePayload(*raw.EventType, raw.Payload)
	if err != nil {
		return Event{}, err
	}
	return Event{
		EventID: *raw.EventID, EventType: *raw.EventType, Timestamp: *raw.Timestamp, Actor: raw.Actor,
		RunID: *raw.RunID, Seq: *raw.Seq, Iteration: raw.Iteration, References: raw.References, Payload: payload,
	}, nil
}
