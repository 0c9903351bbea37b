package agent

import (
	"context"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
)

// BenchmarkAgentIteration measures the loop's own cost per iteration with
// the scripted model (no model latency): event emission, argument
// validation, tool dispatch and message bookkeeping, with a cheap tool.
func BenchmarkAgentIteration(b *testing.B) {
	const iterations = 50
	turns := make([]llm.Turn, 0, iterations)
	for i := 0; i < iterations-1; i++ {
		turns = append(turns, llm.Turn{Content: "Checking.", ToolCalls: []llm.ScriptedToolCall{{Name: "getCurrentTime", Arguments: map[string]any{}}}})
	}
	turns = append(turns, llm.Turn{Content: "done"})
	a, err := New(Deps{Index: newFakeIndex(b)})
	if err != nil {
		b.Fatal(err)
	}
	events := 0
	sink := SinkFunc(func(Event) { events++ })
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		model := llm.NewScripted(turns)
		start := time.Now()
		res, err := a.Run(context.Background(), RunRequest{Message: "x", Model: model, Config: Config{MaxIterations: iterations}}, sink)
		total += time.Since(start)
		if err != nil || res.StopReason != StopFinalAnswer {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N*iterations), "us/iteration")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
