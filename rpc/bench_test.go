package rpc_test

// Benchmarks of the JSON-RPC layer over a generated vault, through the
// in-process server over pipes (framing, the handler chain and JSON on
// both sides included):
//
//	go test ./rpc -run '^$' -bench . -benchtime 1x
//
// The vault has $VAULT_AGENT_BENCH_NOTES notes (default 10000, as make
// bench) and is cached with its index under $VAULT_AGENT_BENCH_DIR when
// set. Each benchmark sends at least benchMinRequests requests whatever
// b.N is, so that -benchtime 1x still yields percentiles.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/benchvault"
	"github.com/vault-agent/vault-agent/internal/vaultgen"
	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/rpc/rpctest"
)

const (
	benchSeed        = benchvault.Seed
	benchMinRequests = 2000
)

// benchDirs returns the generated vault the other benchmarks share and an
// index folder of its own for the server.
func benchDirs(b *testing.B) (string, string) {
	vaultDir, indexDir := benchvault.Dirs(b)
	return vaultDir, indexDir + "-rpc"
}

// benchSession starts an initialized in-process server on the bench vault.
func benchSession(b *testing.B) (*rpctest.Session, []string) {
	b.Helper()
	vaultDir, indexDir := benchDirs(b)
	cfg := rpc.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s := rpctest.StartInProcess(b, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	params := map[string]any{"vault": vaultDir}
	if indexDir != "" {
		params["index"] = indexDir
	}
	var res protocol.InitializeResult
	if err := s.Call(ctx, "initialize", params, &res); err != nil {
		b.Fatalf("initialize: %v", err)
	}
	queries := vaultgen.Queries(50, benchSeed)
	if len(queries) == 0 {
		b.Fatal("no bench queries")
	}
	return s, queries
}

func percentile(sorted []time.Duration, p float64) float64 {
	i := min(len(sorted)-1, int(float64(len(sorted))*p))
	return float64(sorted[i].Microseconds()) / 1000
}

// BenchmarkSearchRoundTrip measures vault/search latency as a host sees
// it: request written, response read, one request at a time.
func BenchmarkSearchRoundTrip(b *testing.B) {
	s, queries := benchSession(b)
	ctx := context.Background()
	n := max(b.N, benchMinRequests)
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := range n {
		start := time.Now()
		if err := s.Call(ctx, "vault/search", map[string]any{"query": queries[i%len(queries)], "limit": 10}, nil); err != nil {
			b.Fatalf("%q: %v", queries[i%len(queries)], err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(percentile(lat, 0.50), "p50_ms")
	b.ReportMetric(percentile(lat, 0.99), "p99_ms")
}

// BenchmarkStatusRoundTrip measures the protocol overhead alone: a quick
// request that does no work.
func BenchmarkStatusRoundTrip(b *testing.B) {
	s, _ := benchSession(b)
	ctx := context.Background()
	n := max(b.N, benchMinRequests)
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for range n {
		start := time.Now()
		if err := s.Call(ctx, "vault/status", nil, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(percentile(lat, 0.50), "p50_ms")
	b.ReportMetric(percentile(lat, 0.99), "p99_ms")
}

// BenchmarkSearchThroughput8 has 8 concurrent callers (8 clients' worth of
// requests) share one connection and reports requests per second.
func BenchmarkSearchThroughput8(b *testing.B) {
	const clients = 8
	s, queries := benchSession(b)
	ctx := context.Background()
	n := max(b.N, benchMinRequests)
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += clients {
				q := queries[i%len(queries)]
				if err := s.Call(ctx, "vault/search", map[string]any{"query": q, "limit": 10}, nil); err != nil {
					errs <- fmt.Errorf("%q: %w", q, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "req/s")
}
