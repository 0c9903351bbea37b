package offline

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/benchvault"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchvault.Cleanup()
	os.Exit(code)
}

// BenchmarkAskOffline10k is an end-to-end offline ask (plan, search, read,
// answer) against the generated 10,000-note vault's persistent index.
func BenchmarkAskOffline10k(b *testing.B) {
	vaultDir, indexDir := benchvault.Dirs(b)
	v, err := vault.Open(vaultDir, vault.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ix, err := search.Open(context.Background(), search.Options{Path: indexDir, Vault: v})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Deps{Index: ix, Model: New()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := a.Run(context.Background(), agent.RunRequest{Message: "what are the notes about garden soil and compost?", Config: agent.Config{Planner: true}}, nil)
		total += time.Since(start)
		if err != nil || res.StopReason != agent.StopFinalAnswer {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/ask")
	b.ReportMetric(benchvault.PeakMB(), "peak_MB")
}
