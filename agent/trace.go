package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// ErrNotTrace is the error of OpenTrace for an existing file that is not
// a trace: it is left as it was.
var ErrNotTrace = errors.New("the file exists and is not a vault-agent trace; refusing to write into it")

// OpenTrace opens a trace file for appending, creating it if needed. A run
// is appended after the runs already in the file, never over them, and a
// file that holds anything but trace events (a note, a config file the
// path named by mistake) is refused with ErrNotTrace and left untouched.
func OpenTrace(path string) (*TraceWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	if err := checkTrace(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open trace %s: %w", path, err)
	}
	return &TraceWriter{f: f, path: path}, nil
}

// checkTrace accepts a regular file that is empty or whose first line is
// a trace event; a last line cut by a crash is ended so that the next
// run's events start on a line of their own.
func checkTrace(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w (not a regular file)", ErrNotTrace)
	}
	if fi.Size() == 0 {
		return nil
	}
	line, err := bufio.NewReaderSize(io.LimitReader(f, 1<<20), 64<<10).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("%w: %v", ErrNotTrace, err)
	}
	var first struct {
		EventID   string `json:"event_id"`
		EventType string `json:"event_type"`
		RunID     string `json:"run_id"`
		Seq       *int   `json:"seq"`
	}
	if json.Unmarshal(line, &first) != nil || first.EventID == "" || first.EventType == "" || first.RunID == "" || first.Seq == nil {
		return ErrNotTrace
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
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
