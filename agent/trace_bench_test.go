package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
)

// benchTurns is a 50-iteration scripted run: 49 turns calling cheap tools
// (so the loop and the trace dominate), then the answer.
func benchTurns() []llm.Turn {
	turns := make([]llm.Turn, 0, 50)
	for i := 0; i < 49; i++ {
		name := "getCurrentTime"
		if i%2 == 1 {
			name = "getTagList"
		}
		turns = append(turns, llm.Turn{Content: fmt.Sprintf("Step %d.", i), ToolCalls: []llm.ScriptedToolCall{{Name: name}}})
	}
	return append(turns, llm.Turn{Content: "Done."})
}

// BenchmarkTraceOverhead runs the same 50-iteration scripted run without
// and with a TraceWriter and reports the cost the trace adds per event
// (trace_overhead_us/event), beside the cost of each run.
func BenchmarkTraceOverhead(b *testing.B) {
	script := llm.NewScripted(benchTurns())
	a, err := New(Deps{Model: script, Index: newFakeIndex(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	dir := b.TempDir()
	cfg := Config{MaxIterations: 50}
	run := func(i int, trace bool) (time.Duration, int) {
		var events int
		var sink Sink = SinkFunc(func(e Event) {
			if !e.Transient() {
				events++
			}
		})
		var tw *TraceWriter
		if trace {
			var err error
			if tw, err = OpenTrace(filepath.Join(dir, fmt.Sprintf("t%d.jsonl", i%4))); err != nil {
				b.Fatal(err)
			}
			sink = Tee(sink, tw)
		}
		start := time.Now()
		res, err := a.Run(context.Background(), RunRequest{RunID: fmt.Sprintf("b%d-%v", i, trace), Message: "bench", Config: cfg, Model: script.Clone()}, sink)
		if tw != nil {
			if cerr := tw.Close(); cerr != nil {
				b.Fatal(cerr)
			}
		}
		took := time.Since(start)
		if err != nil || res.StopReason != StopFinalAnswer || res.Iterations != 50 {
			b.Fatalf("run: %+v, %v", res, err)
		}
		return took, events
	}
	var plain, traced time.Duration
	var events int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, _ := run(i, false)
		plain += d
		d, n := run(i, true)
		traced += d
		events = n
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(plain.Microseconds())/n, "plain_us/run")
	b.ReportMetric(float64(traced.Microseconds())/n, "traced_us/run")
	b.ReportMetric(float64(events), "events/run")
	b.ReportMetric(float64((traced-plain).Microseconds())/n/float64(events), "trace_overhead_us/event")
}
