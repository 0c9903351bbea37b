package search

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
)

// memClasses reads the runtime's accounting of the memory it holds (the
// classes of runtime/metrics under /memory/classes/, the heap goal and the
// bytes allocated so far), for the benchmarks that explain where a
// server's anonymous memory goes.
func memClasses() map[string]float64 {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/gc/heap/goal:bytes" ||
			d.Name == "/gc/heap/allocs:bytes" || d.Name == "/gc/cycles/total:gc-cycles" {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	out := make(map[string]float64, len(samples))
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			out[s.Name] = float64(s.Value.Uint64())
		}
	}
	return out
}

// logMemClasses logs the memory classes of m in megabytes, under what.
func logMemClasses(b *testing.B, what string, m map[string]float64) {
	var sb strings.Builder
	for _, name := range []string{
		"/memory/classes/total:bytes",
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/free:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/heap/stacks:bytes",
		"/memory/classes/os-stacks:bytes",
		"/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/metadata/other:bytes",
		"/memory/classes/profiling/buckets:bytes",
		"/memory/classes/other:bytes",
		"/gc/heap/goal:bytes",
	} {
		sb.WriteString(strings.TrimSuffix(strings.TrimPrefix(name, "/memory/classes/"), ":bytes"))
		sb.WriteString("=")
		fmt.Fprintf(&sb, "%.1f", m[name]/(1<<20))
		sb.WriteString(" ")
	}
	b.Logf("%s: %s", what, sb.String())
}

// writeHeapProfile writes a heap profile to p after a collection.
func writeHeapProfile(b *testing.B, p string) {
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}
