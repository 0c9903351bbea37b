package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"

	"github.com/vault-agent/vault-agent/llm"
)

func TestReadTraceErrors(t *testing.T) {
	path, _ := recordTrace(t, llm.NewScripted([]llm.Turn{{Content: "Answer."}}), agent.Config{}, nil)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(good), "\n"), "\n")
	if len(lines) < 4 {
		t.Fatalf("trace has %d lines", len(lines))
	}
	set := func(i int, key string, v any) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatal(err)
		}
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	with := func(i int, line string) string {
		l := append([]string(nil), lines...)
		l[i] = line
		return strings.Join(l, "\n") + "\n"
	}
	tests := []struct{ name, data, want string }{
		{"truncated last line", strings.Join(lines[:len(lines)-1], "\n") + "\n" + lines[len(lines)-1][:40],
			"line 4: truncated event: the file ends in the middle of this line"},
		{"invalid JSON", with(1, `{"event_id": "x",`), "line 2: invalid JSON"},
		{"missing fields", with(1, set(1, "event_type", nil)), "line 2: missing event_type"},
		{"seq out of order", with(2, set(2, "seq", 7)), "line 3: seq 7 out of order: want 3"},
		{"first seq", with(0, set(0, "seq", 2)), "line 1: seq 2 out of order: a trace starts with its run's first event"},
		{"mixed run ids", with(1, set(1, "run_id", "other")), `line 2: run id "other" differs from "rec-1" on line 1`},
		{"empty", "", "the file holds no events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTrace(strings.NewReader(tt.data), "run.jsonl")
			if err == nil || !errors.Is(err, ErrBadTrace) || !strings.Contains(err.Error(), "run.jsonl: "+strings.SplitN(tt.want, ":", 2)[0]) ||
				!strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
	if evs, err := ParseTrace(bytes.NewReader(good), "run.jsonl"); err != nil || len(evs) != len(lines) {
		t.Fatalf("good trace: %d events, %v", len(evs), err)
	}
	// Runs appended one after the other: the last one is read, and its
	// errors name lines of the file.
	two := string(good) + strings.Replace(string(good), `"run_id":"rec-1"`, `"run_id":"rec-2"`, -1)
	evs, err := ParseTrace(strings.NewReader(two), "run.jsonl")
	if err != nil || len(evs) != len(lines) || evs[0].RunID != "rec-2" {
		t.Fatalf("two runs: %d events, %v", len(evs), err)
	}
	bad := string(good) + with(1, set(1, "run_id", "other"))
	if _, err := ParseTrace(strings.NewReader(bad), "run.jsonl"); err == nil ||
		!strings.Contains(err.Error(), fmt.Sprintf(`line %d: run id "other" differs from "rec-1" on line %d`, len(lines)+2, len(lines)+1)) {
		t.Fatalf("two runs, the second bad: %v", err)
	}
}
