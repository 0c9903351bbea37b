package reasoning_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/reasoning"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

type noIndex struct{}

func (noIndex) Search(context.Context, search.Request) (*search.Results, error) {
	return &search.Results{}, nil
}
func (noIndex) Paths() []string         { return nil }
func (noIndex) Tags() []search.TagCount { return nil }
func (noIndex) ReadChunk(string, int) (*search.NoteChunk, error) {
	return nil, vault.ErrNotFound
}

// BenchmarkMessagesPerSecond runs a real-time agent run (model turns take
// 300 ms each, 8 tool steps, about 3 s) through the Observer with its real
// 100 ms timer, and counts the host messages it publishes: the target is
// about one per second plus one per step, never one per tick.
func BenchmarkMessagesPerSecond(b *testing.B) {
	const turns = 8
	script := make([]llm.Turn, 0, turns+1)
	for i := 0; i < turns; i++ {
		script = append(script, llm.Turn{DelayMs: 300, ToolCalls: []llm.ScriptedToolCall{{Name: "getCurrentTime", Arguments: map[string]any{}}}})
	}
	script = append(script, llm.Turn{DelayMs: 300, Stream: []string{"The ", "answer ", "streams ", "in ", "chunks."}})
	a, err := agent.New(agent.Deps{Index: noIndex{}})
	if err != nil {
		b.Fatal(err)
	}
	var perSecond, perStepSecond, ticks float64
	for i := 0; i < b.N; i++ {
		var published, steps atomic.Int64
		obs := reasoning.NewObserver(reasoning.Config{
			Publish: func(string) { published.Add(1) },
			OnStep:  func(string) { steps.Add(1) },
		})
		ctx, cancel := context.WithCancel(context.Background())
		obs.Start(ctx)
		start := time.Now()
		res, err := a.Run(ctx, agent.RunRequest{Message: "x", Model: llm.NewScripted(script)}, obs)
		elapsed := time.Since(start).Seconds()
		obs.Stop()
		cancel()
		if err != nil || res.StopReason != agent.StopFinalAnswer {
			b.Fatalf("%v %+v", err, res)
		}
		perSecond += float64(published.Load()) / elapsed
		perStepSecond += float64(published.Load()) / (elapsed + float64(steps.Load()))
		ticks += elapsed / 0.1
	}
	n := float64(b.N)
	b.ReportMetric(perSecond/n, "messages/s")
	b.ReportMetric(perStepSecond/n, "messages/(s+step)")
	b.ReportMetric(ticks/n, "timer_ticks/run")
}
