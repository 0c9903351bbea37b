package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/agent"
)

// ErrBadTrace marks a trace file that cannot be read or replayed.
var ErrBadTrace = errors.New("bad trace")

// ReadTrace reads a JSONL trace written by agent.TraceWriter and returns its
// last run: a trace file is appended to, so it may hold several runs one
// after the other, each starting with its seq 1. Within a run each line
// must be one event of that run, with seq 1, 2, 3...; the error names the
// first bad line (a truncated last line, invalid JSON, a missing field, a
// seq out of order, another run's id, a payload that is not its type's).
func ReadTrace(path string) ([]agent.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTrace, err)
	}
	defer f.Close()
	return ParseTrace(f, path)
}

// ParseTrace is ReadTrace over a reader; name is used in errors.
func ParseTrace(r io.Reader, name string) ([]agent.Event, error) {
	br := bufio.NewReader(r)
	var events []agent.Event
	runLine := 0 // the line of the current run's first event
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
			if len(events) > 0 && ev.Seq == 1 {
				// The next run appended to the file.
				events, runLine = nil, line
			}
			if len(events) == 0 {
				runLine = line
				if ev.Seq != 1 {
					return nil, bad(line, "seq %d out of order: a trace starts with its run's first event (seq 1)", ev.Seq)
				}
			} else {
				first, prev := events[0], events[len(events)-1]
				if ev.RunID != first.RunID {
					return nil, bad(line, "run id %q differs from %q on line %d: a run's events share its id", ev.RunID, first.RunID, runLine)
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

func parseTraceLine(b []byte) (agent.Event, error) {
	var raw struct {
		EventID    *string          `json:"event_id"`
		EventType  *string          `json:"event_type"`
		Timestamp  *time.Time       `json:"timestamp"`
		Actor      string           `json:"actor"`
		RunID      *string          `json:"run_id"`
		Seq        *int             `json:"seq"`
		Iteration  int              `json:"iteration"`
		References agent.References `json:"references"`
		Payload    json.RawMessage  `json:"payload"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return agent.Event{}, fmt.Errorf("invalid JSON: %v", err)
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
		return agent.Event{}, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	payload, err := agent.DecodePayload(*raw.EventType, raw.Payload)
	if err != nil {
		return agent.Event{}, err
	}
	return agent.Event{
		EventID: *raw.EventID, EventType: *raw.EventType, Timestamp: *raw.Timestamp, Actor: raw.Actor,
		RunID: *raw.RunID, Seq: *raw.Seq, Iteration: raw.Iteration, References: raw.References, Payload: payload,
	}, nil
}
