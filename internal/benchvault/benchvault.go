// Package benchvault provides the generated vault that benchmarks share:
// 10,000 notes (or $VAULT_AGENT_BENCH_NOTES) from vaultgen with a fixed
// seed, cached in $VAULT_AGENT_BENCH_DIR when set so repeated `make bench`
// runs generate it once, and the process's peak memory.
package benchvault

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/internal/vaultgen"
)

// Seed and AvgSize fix the generated vault (10,000 notes ≈ 60 MB).
const (
	Seed    = 42
	AvgSize = 6000
)

var (
	once            sync.Once
	vaultDir, index string
	genErr          error
	cleanup         string
)

// Notes is the generated vault's size.
func Notes() int {
	if n, err := strconv.Atoi(os.Getenv("VAULT_AGENT_BENCH_NOTES")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// Dirs returns the generated vault and an index folder for it, generating
// the vault on first use.
func Dirs(tb testing.TB) (vault, indexDir string) {
	tb.Helper()
	once.Do(func() {
		base := os.Getenv("VAULT_AGENT_BENCH_DIR")
		if base == "" {
			base, genErr = os.MkdirTemp("", "vault-agent-bench-")
			if genErr != nil {
				return
			}
			cleanup = base
		}
		n := Notes()
		vaultDir = filepath.Join(base, fmt.Sprintf("vault-%d-%d", n, Seed))
		index = filepath.Join(base, fmt.Sprintf("index-%d-%d", n, Seed))
		stamp := filepath.Join(vaultDir, ".generated")
		if _, err := os.Stat(stamp); err == nil {
			return
		}
		os.RemoveAll(vaultDir)
		if _, genErr = vaultgen.Generate(vaultDir, vaultgen.Options{Notes: n, Seed: Seed, AvgSize: AvgSize}); genErr != nil {
			return
		}
		genErr = os.WriteFile(stamp, nil, 0o644)
	})
	if genErr != nil {
		tb.Fatalf("bench vault: %v", genErr)
	}
	return vaultDir, index
}

// Cleanup removes a temporary bench folder; call it from TestMain.
func Cleanup() {
	if cleanup != "" {
		os.RemoveAll(cleanup)
	}
}

// PeakMB is the process's peak resident set size (VmHWM) in MB, or 0 where
// /proc is not available. It counts the pages of memory-mapped files that
// were read (bleve's segment files), which the kernel can drop under
// memory pressure, besides the memory it cannot (see SampleAnon).
func PeakMB() float64 { return StatusMB("VmHWM:") }

// StatusMB is the field named key of /proc/self/status (a size in kB) in
// MB, or 0 where that is not available.
func StatusMB(key string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// AnonInterval is how often SampleAnon reads the process's anonymous
// memory.
const AnonInterval = 20 * time.Millisecond

// SampleAnon reads the process's anonymous resident memory (RssAnon: the
// Go heap, stacks and whatever else no file backs, the memory that runs a
// machine out of memory) every AnonInterval until the returned func is
// called, which returns the highest reading in MB (0 where /proc is not
// available). The kernel keeps no high-water mark of it as it does for the
// whole resident set (VmHWM), so it is sampled; a peak shorter than the
// interval can be missed.
func SampleAnon() (stop func() float64) {
	done := make(chan struct{})
	result := make(chan float64, 1)
	go func() {
		high := StatusMB("RssAnon:")
		t := time.NewTicker(AnonInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				result <- max(high, StatusMB("RssAnon:"))
				return
			case <-t.C:
				high = max(high, StatusMB("RssAnon:"))
			}
		}
	}()
	return func() float64 {
		close(done)
		return <-result
	}
}
