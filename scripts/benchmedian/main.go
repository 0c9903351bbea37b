// Command benchmedian reads `go test -bench` output and prints, for every
// benchmark and metric, the median over the runs and the number of runs.
// A benchmark BenchmarkX run in turn with a baseline BenchmarkFTS5X (see
// scripts/bench.sh) also gets the median of its s/index over the
// baseline's, pair by pair (the i-th run of each). The bleve floor
// benchmarks (BenchmarkBleveFloor...) are compared with the FTS5 run of the
// real-corpus full index, BenchmarkFTS5IndexVault, which they run beside.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	type key struct{ bench, unit string }
	values := map[key][]float64{}
	runs := map[key][]float64{} // in the order read (values is sorted)
	var order []key
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // drop the GOMAXPROCS suffix
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			k := key{name, f[i+1]}
			if _, ok := values[k]; !ok {
				order = append(order, k)
			}
			values[k] = append(values[k], v)
			runs[k] = append(runs[k], v)
		}
	}
	for _, k := range order {
		v := values[k]
		sort.Float64s(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		fmt.Printf("%-32s %14.3f %-12s (n=%d)\n", k.bench, med, k.unit, len(v))
	}
	for _, k := range order {
		if k.unit != "s/index" || strings.HasPrefix(k.bench, "BenchmarkFTS5") {
			continue
		}
		a, b := runs[k], runs[key{baselineOf(k.bench), k.unit}]
		n := min(len(a), len(b))
		if n == 0 {
			continue
		}
		r := make([]float64, n)
		for i := range r {
			r[i] = a[i] / b[i]
		}
		fmt.Printf("%-32s %14.3f %-12s (n=%d pairs)\n", k.bench, median(r), "x FTS5 time", n)
	}
}

// baselineOf names the FTS5 run a full-index benchmark is compared with.
func baselineOf(bench string) string {
	if strings.HasPrefix(bench, "BenchmarkBleveFloor") {
		return "BenchmarkFTS5IndexVault"
	}
	return "BenchmarkFTS5" + strings.TrimPrefix(bench, "Benchmark")
}

func median(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}
