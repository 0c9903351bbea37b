package semantic

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkSemanticQuery100k measures the query cost of semantic search
// over 100,000 chunks of 768 dimensions (20,000 notes of 5 chunks),
// embedder excluded: the int8 scan, each note's best chunk, the top 10.
// It reports the p50 and p99 of 300 queries, the CPU time per query and
// the memory the vectors take.
func BenchmarkSemanticQuery100k(b *testing.B) {
	const chunks, perNote, d, queries = 100_000, 5, 768, 300
	r := rand.New(rand.NewPCG(7, 8))
	randVec := func() []float32 {
		v := make([]float32, d)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := &Engine{notes: map[string]*noteState{}}
	e.dims, e.stride = d, strideOf(d)
	e.mat = make([]int8, 0, chunks*e.stride)
	for n := range chunks / perNote {
		vecs := make([]vec, perNote)
		for i := range vecs {
			vecs[i].q, vecs[i].inv = quantize(randVec(), e.stride)
		}
		e.place(fmt.Sprintf("notes/%05d.md", n), "h", vecs)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	qs := make([][]int16, queries)
	for i := range qs {
		q, _ := quantize(randVec(), e.stride)
		qs[i] = widen(q)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	var took []time.Duration
	for range b.N {
		for _, q := range qs {
			start := time.Now()
			res := e.rank(q, nil, -1, 10)
			took = append(took, time.Since(start))
			if len(res.top) != 10 {
				b.Fatal("not 10 results")
			}
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	// CPU time per query (both cores' share summed): the work, apart from
	// waiting for a core on a busy machine.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(took)), "cpu-ms/query")
	b.ReportMetric(float64(e.MemoryBytes())/1e6, "vector-MB")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-MB")
}
