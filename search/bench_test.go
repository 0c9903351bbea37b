package search

// Benchmarks of indexing and search (see BENCHMARKS.md). Each reports its
// own figures with b.ReportMetric; peak_MB is the process's VmHWM, so run each benchmark in
// its own `go test` process to attribute it:
//
//	go test ./search -run '^$' -bench '^BenchmarkIndexFull10k$' -benchtime 1x
//
// The generated 10k-note vault (and, for the serving benchmarks, its
// index) is cached under $VAULT_AGENT_BENCH_DIR when set, so that only the
// first run pays for generating and indexing and the serving benchmarks
// measure a process that never indexed in bulk.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/vault-agent/vault-agent/internal/benchvault"
	"github.com/vault-agent/vault-agent/internal/vaultgen"
	"github.com/vault-agent/vault-agent/vault"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchvault.Cleanup()
	os.Exit(code)
}

// benchDirs returns the shared generated vault and an index dir for it.
func benchDirs(b *testing.B) (vaultDir, indexDir string) { return benchvault.Dirs(b) }

// benchLogger discards the index's log, or writes it to stderr with
// $VAULT_AGENT_BENCH_LOG set.
func benchLogger() *slog.Logger {
	if os.Getenv("VAULT_AGENT_BENCH_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func benchOpen(b *testing.B, vaultDir, indexDir string) (*Index, SyncStats) {
	b.Helper()
	v, err := vault.Open(vaultDir, vault.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ix, err := Open(context.Background(), Options{Path: indexDir, Vault: v, Logger: benchLogger()})
	if err != nil {
		b.Fatal(err)
	}
	st, err := ix.Sync(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return ix, st
}

func vaultBytes(b *testing.B, dir string) int64 {
	var n int64
	v, _ := vault.Open(dir, vault.Options{})
	if err := v.Walk(context.Background(), func(fi vault.FileInfo) error { n += fi.Size; return nil }); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchIndexFull indexes vaultDir into a new on-disk index b.N times and
// returns the notes indexed and the mean seconds per index (opening and
// closing the index left out).
func benchIndexFull(b *testing.B, vaultDir string) (notes int, sec float64) {
	var total time.Duration
	anon, goal, limit := 0.0, 0.0, 0.0
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		stopAnon := benchvault.SampleAnon()
		stopLimit := sampleLimit()
		start := time.Now()
		ix, st := benchOpen(b, vaultDir, filepath.Join(dir, "idx"))
		total += time.Since(start)
		notes = st.Added
		b.StopTimer()
		goal = max(goal, heapGoalMB())
		if os.Getenv("VAULT_AGENT_BENCH_STATS") != "" {
			if sm, ok := ix.idx.StatsMap()["index"].(map[string]interface{}); ok {
				for _, k := range []string{"TotBatches", "TotIntroducedSegmentsBatch", "TotFileMergeSegments", "TotFileMergePlanTasks", "TotFileMergeZapTime", "TotMemMergeSegments", "TotPersistedItems", "TotFileSegmentsAtRoot", "TotMemorySegmentsAtRoot", "num_bytes_used_disk", "TotFileMergeIntroductions"} {
					b.Logf("%s=%v", k, sm[k])
				}
			}
		}
		ix.Close() // waits for the tables built after a sync
		anon = max(anon, stopAnon())
		limit = max(limit, stopLimit())
		b.StartTimer()
	}
	b.ReportMetric(anon, "peak_anon_MB")
	// The highest soft memory limit the sync set.
	b.ReportMetric(limit, "limit_MB")
	// The collector's heap goal when the sync returns, the bulk settings
	// undone: how far the heap may grow before the next collection.
	b.ReportMetric(goal, "goal_after_MB")
	// The collector's cycles, and whether its CPU limiter let the heap
	// past the soft memory limit (the cycle it last did so; 0: never).
	cycles, ok1 := runtimeMetric("/gc/cycles/total:gc-cycles")
	limited, ok2 := runtimeMetric("/gc/limiter/last-enabled:gc-cycle")
	if ok1 && ok2 {
		b.ReportMetric(float64(cycles), "gc_cycles")
		b.ReportMetric(float64(limited), "gc_limited_at")
	}
	return notes, total.Seconds() / float64(b.N)
}

// heapGoalMB is the collector's current heap goal in MB.
func heapGoalMB() float64 {
	goal, _ := runtimeMetric("/gc/heap/goal:bytes")
	return float64(goal) / 1e6
}

// BenchmarkIndexFull10k measures a full index of the 10k-note vault into a
// new on-disk index, as `vault-agent index` does on first use.
func BenchmarkIndexFull10k(b *testing.B) {
	vaultDir, _ := benchDirs(b)
	size := vaultBytes(b, vaultDir)
	b.ResetTimer()
	notes, sec := benchIndexFull(b, vaultDir)
	b.ReportMetric(float64(notes)/sec, "notes/s")
	b.ReportMetric(float64(size)/1e6/sec, "MB/s")
	b.ReportMetric(sec, "s/index")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// BenchmarkIndexVault measures a full index of the vault folder named by
// $VAULT_AGENT_BENCH_VAULT (a real corpus) into a new on-disk index; it is
// skipped when that is unset. `make bench BENCH_VAULT=dir` runs it
// interleaved with the SQLite FTS5 baseline (eval/fts5.py index).
func BenchmarkIndexVault(b *testing.B) {
	vaultDir := os.Getenv("VAULT_AGENT_BENCH_VAULT")
	if vaultDir == "" {
		b.Skip("VAULT_AGENT_BENCH_VAULT not set")
	}
	size := vaultBytes(b, vaultDir)
	if p := os.Getenv("VAULT_AGENT_BENCH_HEAPPROF"); p != "" {
		defer peakHeapProfile(p)()
	}
	b.ResetTimer()
	notes, sec := benchIndexFull(b, vaultDir)
	b.ReportMetric(float64(notes), "notes")
	b.ReportMetric(float64(notes)/sec, "notes/s")
	b.ReportMetric(float64(size)/1e6/sec, "MB/s")
	b.ReportMetric(sec, "s/index")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// peakHeapProfile writes a heap profile to path each time the live heap
// after a collection reaches a new high, until the returned func is called:
// the profile left is the heap at its largest.
func peakHeapProfile(path string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var high uint64
		var ms runtime.MemStats
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			runtime.ReadMemStats(&ms)
			if ms.NextGC*100/uint64(100+100) <= high { // live heap ≈ NextGC/(1+GOGC/100)
				continue
			}
			high = ms.NextGC * 100 / 200
			if f, err := os.Create(path); err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// BenchmarkIndexNaive10k is the baseline: a straightforward loop that reads
// and parses one note at a time and adds it with Index.Index to a bleve
// index opened with default settings (each call is its own batch and
// waits for persistence), same mapping and documents. It indexes the first
// $VAULT_AGENT_NAIVE_NOTES notes (default 500: at ~20 notes/s more only costs time; the rate is what matters)
// and reports notes/s to compare with BenchmarkIndexFull10k.
func BenchmarkIndexNaive10k(b *testing.B) {
	vaultDir, _ := benchDirs(b)
	limit := 500
	if s := os.Getenv("VAULT_AGENT_NAIVE_NOTES"); s != "" {
		limit, _ = strconv.Atoi(s)
	}
	v, err := vault.Open(vaultDir, vault.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	v.Walk(context.Background(), func(fi vault.FileInfo) error {
		if len(files) < limit {
			files = append(files, fi.Path)
		}
		return nil
	})
	m, err := newMapping()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		path := filepath.Join(b.TempDir(), "naive")
		start := time.Now()
		idx, err := bleve.New(path, m)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range files {
			n, err := v.ReadNote(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := idx.Index(p, noteDocument(n, nil)); err != nil {
				b.Fatal(err)
			}
		}
		total += time.Since(start)
		b.StopTimer()
		idx.Close()
		b.StartTimer()
	}
	sec := total.Seconds() / float64(b.N)
	b.ReportMetric(float64(len(files))/sec, "notes/s")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// servingIndex opens the cached 10k index (building it on first use).
func servingIndex(b *testing.B) (*Index, string) {
	vaultDir, indexDir := benchDirs(b)
	ix, _ := benchOpen(b, vaultDir, indexDir)
	return ix, vaultDir
}

// benchQueries is a fixed mix over the generated vault: common and rare
// terms, phrases, tags, folders, files, exclusions and typos.
func benchQueries(b *testing.B, ix *Index) []Request {
	// Pick real words, tags and folders of the generated vault so every
	// kind of query does work.
	var tags []string
	for _, tc := range ix.Tags() {
		if tc.Count > 20 {
			tags = append(tags, tc.Tag)
		}
	}
	ps := ix.Paths()
	if len(tags) < 2 || len(ps) < 100 {
		b.Fatalf("bench vault too small: %d tags, %d notes", len(tags), len(ps))
	}
	folder := ps[len(ps)/2]
	if i := strings.IndexByte(folder, '/'); i > 0 {
		folder = folder[:i+1]
	} else {
		folder = ""
	}
	m1, _ := ix.Note(ps[len(ps)/3])
	m2, _ := ix.Note(ps[2*len(ps)/3])
	words := func(s string, n int) []string {
		f := strings.Fields(strings.ToLower(s))
		return f[:min(n, len(f))]
	}
	t1 := words(m1.Title, 3)
	t2 := words(m2.Title, 2)
	typo := func(w string) string {
		if len(w) < 5 {
			return w + "x"
		}
		return w[:2] + w[3:]
	}
	qs := []string{
		"project", "meeting notes", "garden sensor battery", "how do I plan the next release",
		strings.Join(t1, " "), strings.Join(t2, " "), `"` + strings.Join(t1, " ") + `"`,
		"tag:" + tags[0], "tag:" + tags[1] + " " + t1[0], "#" + tags[len(tags)-1],
		"path:" + folder + " " + t2[0], "file:" + t1[0], t1[0] + " -" + t2[0],
		t1[0] + " OR " + t2[0], typo(t1[0]), typo(t2[0]) + " " + t1[0], "zzzqqq",
		"review deadline budget", `"the next step"`, "a OR the",
	}
	out := make([]Request, 0, len(qs)+2)
	for _, q := range qs {
		out = append(out, Request{Query: q})
	}
	out = append(out, Request{Tags: []string{tags[0]}}, Request{Query: t1[0], Folders: []string{folder}, From: time.Now().AddDate(-1, 0, 0)})
	return out
}

// BenchmarkSearch runs a fixed mix of ~20 queries (with snippets) against
// the 10k index and reports latency percentiles. The first pass over the
// mix finds every note for the first time (no parsed chunks cached for its
// snippets): it is reported as cold_p50_ms/cold_max_ms; the measured passes
// repeat the mix, as an agent or a host re-running a query does.
func BenchmarkSearch(b *testing.B) {
	ix, _ := servingIndex(b)
	defer ix.Close()
	reqs := benchQueries(b, ix)
	ctx := context.Background()
	cold := make([]time.Duration, 0, len(reqs))
	for _, r := range reqs { // the cold pass, also the warm-up
		start := time.Now()
		if _, err := ix.Search(ctx, r); err != nil && !errors.Is(err, ErrEmptyQuery) {
			b.Fatalf("%q: %v", r.Query, err)
		}
		cold = append(cold, time.Since(start))
	}

	runtime.GC()
	lat := make([]time.Duration, 0, b.N*len(reqs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range reqs {
			start := time.Now()
			if _, err := ix.Search(ctx, r); err != nil && !errors.Is(err, ErrEmptyQuery) { // "a OR the"
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(p99, "p99_ms")
	coldP50, _ := percentiles(cold)
	b.ReportMetric(coldP50, "cold_p50_ms")
	b.ReportMetric(float64(slices.Max(cold).Microseconds())/1000, "cold_max_ms")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// BenchmarkSearchBadInput runs what people paste and models write against
// the 10k index: only stop words, only punctuation, 10 KB of text, 500
// words, 500 words joined by OR. Each must end with results or a clear
// error within the latency bounds of ordinary searches.
func BenchmarkSearchBadInput(b *testing.B) {
	ix, _ := servingIndex(b)
	defer ix.Close()
	var words []string
	for _, p := range ix.Paths() {
		m, _ := ix.Note(p)
		words = append(words, strings.Fields(strings.ToLower(m.Title))...)
		if len(words) >= 500 {
			break
		}
	}
	words = words[:500]
	text := strings.Join(words, " ")
	for len(text) < 10<<10 {
		text += " " + text
	}
	text = text[:10<<10]
	qs := []string{
		"the and of how do i to a is what",
		"?!?... --- ,,, ;;; () // **",
		text,
		strings.Join(words, " "),
		strings.Join(words, " OR "),
	}
	ctx := context.Background()
	for _, q := range qs { // warm-up
		_, _ = ix.Search(ctx, Request{Query: q})
	}
	lat := make([]time.Duration, 0, b.N*len(qs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			start := time.Now()
			_, err := ix.Search(ctx, Request{Query: q})
			lat = append(lat, time.Since(start))
			if err != nil && !errors.Is(err, ErrEmptyQuery) {
				b.Fatalf("%.40q: %v", q, err)
			}
		}
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(p99, "p99_ms")
	b.ReportMetric(float64(slices.Max(lat).Microseconds())/1000, "max_ms")
}

func percentiles(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		i := int(q * float64(len(lat)-1))
		return float64(lat[i].Microseconds()) / 1000
	}
	return at(0.50), at(0.99)
}

// BenchmarkReopen10k measures Open + Sync of an unchanged 10k index: the
// time from start to ready to search.
func BenchmarkReopen10k(b *testing.B) {
	vaultDir, indexDir := benchDirs(b)
	ix, _ := benchOpen(b, vaultDir, indexDir) // make sure it exists and is current
	ix.Close()
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		ix, st := benchOpen(b, vaultDir, indexDir)
		total += time.Since(start)
		if st.Added+st.Updated+st.Removed != 0 || st.Rebuilt {
			b.Fatalf("reopen of an unchanged vault changed things: %+v", st)
		}
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// BenchmarkServeMemory measures what a serving process holds: it opens
// the cached index (built by another process, as make bench's first
// benchmark does), syncs it, waits for the tables built after a sync,
// answers 1,000 searches of the generated query mix one at a time and
// reports its resident memory then (rss_MB, and the anonymous and
// file-backed parts of it), as `vault-agent serve` would hold it. After a
// collection once the tables are built it reports the live heap
// (warm_live_MB) and the heap in use past it (warm_slack_MB: pages left
// part empty by the objects kept among the garbage of building them).
// With $VAULT_AGENT_BENCH_HEAPPROF set, it writes a heap profile there at
// the end, and one with ".warm" added to the name before the searches.
func BenchmarkServeMemory(b *testing.B) {
	vaultDir, indexDir := benchDirs(b)
	ix, _ := benchOpen(b, vaultDir, indexDir)
	defer ix.Close()
	ix.warming.Wait()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	queries := vaultgen.Queries(50, benchvault.Seed)
	ctx := context.Background()
	fileBefore := benchvault.StatusMB("RssFile:")
	lat := make([]time.Duration, 0, 1000)
	classes := memClasses()
	if p := os.Getenv("VAULT_AGENT_BENCH_HEAPPROF"); p != "" {
		writeHeapProfile(b, p+".warm")
	}
	b.ResetTimer()
	for i := range 1000 {
		start := time.Now()
		if _, err := ix.Search(ctx, Request{Query: queries[i%len(queries)], Limit: 10}); err != nil && !errors.Is(err, ErrEmptyQuery) {
			b.Fatalf("%q: %v", queries[i%len(queries)], err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	after := memClasses()
	if os.Getenv("VAULT_AGENT_BENCH_MEMCLASSES") != "" {
		logMemClasses(b, "warm", classes)
		logMemClasses(b, "after the searches", after)
	}
	b.ReportMetric((after["/gc/heap/allocs:bytes"]-classes["/gc/heap/allocs:bytes"])/1000/1024, "alloc_KB/search")
	b.ReportMetric(after["/gc/cycles/total:gc-cycles"]-classes["/gc/cycles/total:gc-cycles"], "gcs")
	b.ReportMetric(after["/gc/heap/goal:bytes"]/(1<<20), "heap_goal_MB")
	if p := os.Getenv("VAULT_AGENT_BENCH_HEAPPROF"); p != "" {
		writeHeapProfile(b, p)
	}
	if os.Getenv("VAULT_AGENT_BENCH_SMAPS") != "" {
		logMappedFiles(b)
	}
	p50, p99 := percentiles(lat)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(p99, "p99_ms")
	b.ReportMetric(benchvault.StatusMB("VmRSS:"), "rss_MB")
	b.ReportMetric(benchvault.StatusMB("RssAnon:"), "anon_MB")
	b.ReportMetric(benchvault.StatusMB("RssFile:"), "file_MB")
	b.ReportMetric(fileBefore, "file_open_MB")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "warm_live_MB")
	b.ReportMetric(float64(ms.HeapInuse-ms.HeapAlloc)/(1<<20), "warm_slack_MB")
}

// BenchmarkTouch10 measures a Sync after 10 notes changed on disk.
func BenchmarkTouch10(b *testing.B) {
	vaultDir, indexDir := benchDirs(b)
	ix, _ := benchOpen(b, vaultDir, indexDir)
	defer ix.Close()
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := vaultgen.TouchNotes(vaultDir, 10, time.Now().UnixNano()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		st, err := ix.Sync(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		if st.Updated+st.Added == 0 {
			b.Fatalf("touch changed nothing: %+v", st)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// BenchmarkSaveToSearchable measures, through the live watcher, the time
// from writing a note to finding a new word of it with Search, over 50
// saves, and what the process wrote to the disk for each (write_KB: the
// write_bytes of /proc/self/io over the saves, the merges they caused
// included, divided by the saves; the saved notes themselves are written
// by the benchmark, so they count too, about 6 KB each).
func BenchmarkSaveToSearchable(b *testing.B) {
	stopAnon := benchvault.SampleAnon()
	ix, vaultDir := servingIndex(b)
	defer ix.Close()
	// The peak before the saves: that of building the index, when this
	// process built it.
	openPeak := benchvault.PeakMB()
	if p := os.Getenv("VAULT_AGENT_BENCH_HEAPPROF"); p != "" {
		defer peakHeapProfile(p)()
	}
	// Saves go to a few dedicated notes holding a copy of a real note, so
	// the cached vault is left as it was (the folder is removed at the end
	// and the next Sync drops it from the index).
	ps := ix.Paths()
	base, err := os.ReadFile(filepath.Join(vaultDir, filepath.FromSlash(ps[len(ps)/2])))
	if err != nil {
		b.Fatal(err)
	}
	saveDir := filepath.Join(vaultDir, "zz-bench-saves")
	defer os.RemoveAll(saveDir)
	if err := os.MkdirAll(saveDir, 0o755); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ix.Watch(ctx); err != nil {
		b.Fatal(err)
	}
	ch, unsub := ix.Subscribe()
	defer unsub()
	var lat []time.Duration
	written := ioBytes("write_bytes:")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 50; j++ {
			abs := filepath.Join(saveDir, fmt.Sprintf("save %d.md", j%5))
			marker := fmt.Sprintf("savemarker%dx%d", i, j)
			start := time.Now()
			if err := os.WriteFile(abs, append(slices.Clip(base), "\n"+marker+"\n"...), 0o644); err != nil {
				b.Fatal(err)
			}
			deadline := time.After(10 * time.Second)
			for {
				res, err := ix.Search(ctx, Request{Query: marker, Limit: 1})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Results) == 1 && !res.Fuzzy { // a fuzzy hit is the previous marker
					break
				}
				select {
				case <-ch:
				case <-deadline:
					b.Fatalf("%s not searchable after 10s", marker)
				}
			}
			lat = append(lat, time.Since(start))
			if os.Getenv("DEBUG_SAVE") != "" {
				fmt.Println(marker, time.Since(start))
			}
		}
	}
	b.StopTimer()
	// The writes of the last save's persisting and merges, which go on
	// after it is searchable, count too.
	ix.writeMu.Lock()
	ix.waitSettled(context.Background())
	ix.writeMu.Unlock()
	written = ioBytes("write_bytes:") - written
	p50, p99 := percentiles(lat)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(p99, "p99_ms")
	b.ReportMetric(float64(written)/1024/float64(len(lat)), "write_KB")
	b.ReportMetric(openPeak, "open_peak_MB")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
	b.ReportMetric(stopAnon(), "peak_anon_MB")
}

// logMappedFiles logs the resident memory of each file the process maps
// (from /proc/self/smaps), largest first.
func logMappedFiles(b *testing.B) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	rss := map[string]int{}
	name := ""
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			name = "[anon]"
			if len(f) >= 6 {
				name = f[5]
			}
		case len(f) == 3 && f[0] == "Rss:":
			kb, _ := strconv.Atoi(f[1])
			rss[name] += kb
		}
	}
	names := slices.Collect(maps.Keys(rss))
	slices.SortFunc(names, func(a, c string) int { return rss[c] - rss[a] })
	for _, n := range names[:min(len(names), 25)] {
		b.Logf("%8.1f MB %s", float64(rss[n])/1024, n)
	}
}

// BenchmarkBranchSwitch measures a branch switch in a git-backed vault as
// the live watcher sees it: a tenth of the notes of the cached vault change
// at once (a paragraph added to each), then change back. It reports the
// time from the first write until the index has every note of each switch
// (switch_s, back_s, from the last write: settle_s), the watcher batches
// applied for them (applies), the latency of searches run every 50 ms
// meanwhile (search_p50_ms, search_p99_ms, search_max_ms, searches) and
// the process's peak anonymous memory (peak_anon_MB; compare with the
// first index's at the same size).
func BenchmarkBranchSwitch(b *testing.B) {
	ix, vaultDir := servingIndex(b)
	defer ix.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ps := ix.Paths()
	var chosen []string
	for i := 3; i < len(ps); i += 10 {
		chosen = append(chosen, ps[i])
	}
	// The two branches' versions of the chosen notes, in folders of
	// their own; a switch copies one over the vault with cp, as git
	// checkout writes them: from another process, as fast as it can.
	mine, other := b.TempDir(), b.TempDir()
	sizes := map[string]map[string]int64{mine: {}, other: {}}
	for _, p := range chosen {
		data, err := os.ReadFile(filepath.Join(vaultDir, filepath.FromSlash(p)))
		if err != nil {
			b.Fatal(err)
		}
		versions := map[string][]byte{mine: data, other: append(slices.Clip(data), "\n\n## On the other branch\n\nThis paragraph exists on the feature branch only.\n"...)}
		for tree, content := range versions {
			dst := filepath.Join(tree, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(dst, content, 0o644); err != nil {
				b.Fatal(err)
			}
			sizes[tree][p] = int64(len(content))
		}
	}
	reqs := benchQueries(b, ix)
	if err := ix.Watch(ctx); err != nil {
		b.Fatal(err)
	}
	ch, unsub := ix.Subscribe()
	defer unsub()
	runtime.GC()
	stopAnon := benchvault.SampleAnon()
	stopLimit := sampleLimit()

	// Searches from another goroutine until the end, one every 50 ms (a
	// person typing, an agent at work) or as fast as they come back.
	stopSearch := make(chan struct{})
	searched := make(chan []time.Duration)
	go func() {
		var lat []time.Duration
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopSearch:
				searched <- lat
				return
			case <-tick.C:
			}
			start := time.Now()
			if _, err := ix.Search(ctx, reqs[i%len(reqs)]); err != nil && !errors.Is(err, ErrEmptyQuery) {
				b.Error(err)
			}
			lat = append(lat, time.Since(start))
		}
	}()

	// switchTo copies tree over the vault and waits until the index has
	// every chosen note at its size there.
	var writing time.Duration // the longest a copy took
	switchTo := func(tree string) (total, settle time.Duration, applies int64) {
		before := appliesOf(ix)
		start := time.Now()
		if out, err := exec.Command("cp", "-R", tree+"/.", vaultDir).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v: %s", err, out)
		}
		written := time.Now()
		writing = max(writing, written.Sub(start))
		deadline := time.After(10 * time.Minute)
		for {
			missing := 0
			for p, size := range sizes[tree] {
				if m, ok := ix.Note(p); !ok || m.Size != size {
					missing++
				}
			}
			if missing == 0 {
				break
			}
			select {
			case <-ch:
			case <-deadline:
				b.Fatalf("%d of %d notes not indexed after 10 minutes", missing, len(chosen))
			}
		}
		return time.Since(start), time.Since(written), appliesOf(ix) - before
	}
	b.ResetTimer()
	there, settle, applies := switchTo(other)
	back, settleBack, appliesBack := switchTo(mine)
	b.StopTimer()
	close(stopSearch)
	lat := <-searched
	anon, limit := stopAnon(), stopLimit()
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(len(chosen)), "notes")
	b.ReportMetric(there.Seconds(), "switch_s")
	b.ReportMetric(back.Seconds(), "back_s")
	b.ReportMetric(max(settle, settleBack).Seconds(), "settle_s")
	b.ReportMetric(writing.Seconds(), "write_s")
	b.ReportMetric(float64(max(applies, appliesBack)), "applies")
	b.ReportMetric(p50, "search_p50_ms")
	b.ReportMetric(p99, "search_p99_ms")
	b.ReportMetric(float64(slices.Max(lat).Microseconds())/1000, "search_max_ms")
	b.ReportMetric(float64(len(lat)), "searches")
	b.ReportMetric(anon, "peak_anon_MB")
	b.ReportMetric(limit, "limit_MB")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}

// sampleLimit reads the collector's soft memory limit every
// benchvault.AnonInterval until the returned func is called, which returns
// the highest limit set in MB (0 for none).
func sampleLimit() (stop func() float64) {
	done := make(chan struct{})
	result := make(chan float64, 1)
	go func() {
		high := int64(0)
		t := time.NewTicker(benchvault.AnonInterval)
		defer t.Stop()
		for {
			if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
				high = max(high, l)
			}
			select {
			case <-done:
				result <- float64(high) / 1e6
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		return <-result
	}
}

// ioBytes reads a counter of /proc/self/io (0 where there is none).
func ioBytes(key string) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n
		}
	}
	return 0
}
