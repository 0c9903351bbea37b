package semantic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/benchvault"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
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
			res := e.rank(q, nil, -1, 10, false)
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

// cachedEmbedder answers the texts it has seen from memory, so a benchmark
// of search leaves the embedding call out.
type cachedEmbedder struct {
	Embedder
	mu   sync.Mutex
	seen map[string][]float32
}

func (c *cachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	out := make([][]float32, len(texts))
	var miss []int
	for i, t := range texts {
		if v, ok := c.seen[t]; ok {
			out[i] = v
		} else {
			miss = append(miss, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	var mt []string
	for _, i := range miss {
		mt = append(mt, texts[i])
	}
	vs, err := c.Embedder.Embed(ctx, mt)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range miss {
		out[i] = vs[j]
		c.seen[texts[i]] = vs[j]
	}
	return out, nil
}

// BenchmarkHybridQuery measures what hybrid search adds to a lexical
// search on the generated vault (benchvault: 10,000 notes, their chunks'
// vectors of 512 dimensions with signal, so that every query is fused), the query's embedding call excluded: each query runs lexically
// and in hybrid mode in turn, and the p50 of both and of their difference
// are reported, and the CPU time of each per query.
func BenchmarkHybridQuery(b *testing.B) {
	vaultDir, indexDir := benchvault.Dirs(b)
	v, err := vault.Open(vaultDir, vault.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ix, err := search.Open(ctx, search.Options{Path: indexDir, Vault: v})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(ctx, nil); err != nil {
		b.Fatal(err)
	}
	emb := &cachedEmbedder{Embedder: llmtest.LocalEmbedder{Name: "words-512", Fn: llmtest.WordVectors(512, nil)}, seen: map[string][]float32{}}
	e, err := Open(Options{Index: ix, Embedder: emb, Path: filepath.Clean(indexDir) + "-bench-vectors.db"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(ctx, nil); err != nil {
		b.Fatal(err)
	}
	if trust, _ := e.trust(); trust == 0 {
		b.Fatal("the vectors are not trusted: hybrid would be lexical search")
	}
	var qs []string
	ps := ix.Paths()
	for i := range 20 {
		m, _ := ix.Note(ps[(i*7919)%len(ps)])
		w := strings.Fields(strings.ToLower(m.Title))
		q := strings.Join(w[:min(3, len(w))], " ")
		if i%2 == 1 {
			q = "how do I find notes about " + q
		}
		qs = append(qs, q)
	}
	for _, q := range qs { // warm-up: parsed chunks, query vectors
		if _, err := e.Search(ctx, search.Request{Query: q, Mode: search.ModeHybrid}); err != nil {
			b.Fatal(err)
		}
	}
	var lex, hyb, diff []time.Duration
	var lexCPU, hybCPU time.Duration
	b.ResetTimer()
	for range b.N {
		for _, q := range qs {
			c0, start := cpuTime(), time.Now()
			if _, err := e.Search(ctx, search.Request{Query: q, Mode: search.ModeLexical}); err != nil {
				b.Fatal(err)
			}
			l, c1 := time.Since(start), cpuTime()
			start = time.Now()
			if _, err := e.Search(ctx, search.Request{Query: q, Mode: search.ModeHybrid}); err != nil {
				b.Fatal(err)
			}
			h, c2 := time.Since(start), cpuTime()
			lex, hyb, diff = append(lex, l), append(hyb, h), append(diff, h-l)
			lexCPU += c1 - c0
			hybCPU += c2 - c1
		}
	}
	b.StopTimer()
	// CPU time (both cores' share summed) is the work, apart from waiting
	// for a core on a busy machine, where the p50s mostly measure the wait.
	n := float64(len(lex))
	b.ReportMetric(float64(lexCPU.Microseconds())/1000/n, "lexical-cpu-ms/query")
	b.ReportMetric(float64(hybCPU.Microseconds())/1000/n, "hybrid-cpu-ms/query")
	b.ReportMetric(float64(len(e.rowNote)), "chunks")
	p50 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(lex), "lexical-p50-ms")
	b.ReportMetric(p50(hyb), "hybrid-p50-ms")
	b.ReportMetric(p50(diff), "added-p50-ms")
}
