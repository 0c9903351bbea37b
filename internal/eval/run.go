package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Engine results for every question of a run.
type Engine struct {
	Name     string
	Notes    int
	Outcomes []Outcome
	Results  [][]string
	// Millis is the search time of each question, when measured.
	Millis []float64
	// Asks is the answer check, when run.
	Asks *Asks
}

// Options configures Run.
type Options struct {
	Vault string
	// Index is the index directory of vault-agent; "" uses one per vault
	// under the user cache dir (vault-agent-eval/), kept between runs and
	// apart from the index the vault-agent commands share.
	Index string
	// Rebuild rebuilds vault-agent's index from scratch first.
	Rebuild bool
	Logger  *slog.Logger
	// Progress, when set, receives indexing progress.
	Progress search.ProgressFunc
	// Ask also asks every question with the offline model (Engine.Asks).
	Ask bool
}

// RunVaultAgent opens (and syncs) vault-agent's index of the vault and runs
// every question through Index.Search with a limit of K.
func RunVaultAgent(ctx context.Context, opts Options, qs []Question) (*Engine, search.SyncStats, error) {
	var stats search.SyncStats
	v, err := vault.Open(opts.Vault, vault.Options{Logger: opts.Logger})
	if err != nil {
		return nil, stats, err
	}
	dir := opts.Index
	if dir == "" {
		if dir, err = evalIndexDir(opts.Vault); err != nil {
			return nil, stats, err
		}
	}
	ix, err := search.Open(ctx, search.Options{Path: dir, Vault: v, Logger: opts.Logger})
	if err != nil {
		return nil, stats, err
	}
	defer ix.Close()
	if opts.Rebuild {
		stats, err = ix.Rebuild(ctx, opts.Progress)
	} else {
		stats, err = ix.Sync(ctx, opts.Progress)
	}
	if err != nil {
		return nil, stats, err
	}
	e := &Engine{Name: "vault-agent", Notes: ix.Count()}
	for _, q := range qs {
		start := time.Now()
		res, err := ix.Search(ctx, search.Request{Query: q.Q, Limit: K})
		e.Millis = append(e.Millis, float64(time.Since(start).Microseconds())/1000)
		if err != nil {
			e.Results = append(e.Results, nil)
			e.Outcomes = append(e.Outcomes, Outcome{Err: err.Error()})
			continue
		}
		ranked := make([]string, len(res.Results))
		for i, r := range res.Results {
			ranked[i] = r.Path
		}
		e.Results = append(e.Results, ranked)
		e.Outcomes = append(e.Outcomes, Judge(q, ranked))
	}
	if opts.Ask {
		if e.Asks, err = RunAsks(ctx, ix, qs); err != nil {
			return nil, stats, err
		}
	}
	return e, stats, nil
}

// evalIndexDir is the default index directory of the vault at root:
// <user cache dir>/vault-agent-eval/<folder name>-<hash of its absolute path>.
func evalIndexDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache dir (give --index): %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "vault-agent-eval", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:4])), nil
}

// RunFTS5 runs every question through the FTS5 baseline.
func RunFTS5(ctx context.Context, root string, qs []Question) (*Engine, error) {
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Q
	}
	res, notes, err := FTS5(ctx, root, texts)
	if err != nil {
		return nil, err
	}
	e := &Engine{Name: "FTS5", Notes: notes, Results: res}
	for i, q := range qs {
		e.Outcomes = append(e.Outcomes, Judge(q, res[i]))
	}
	return e, nil
}

// Missing returns the expected notes that are not notes of the vault, as
// seen by an engine that indexed notes, so a stale question file or a
// differently extracted vault is noticed instead of silently scoring 0.
func Missing(qs []Question, exists func(string) bool) []string {
	var out []string
	for _, q := range qs {
		for _, p := range q.Expect {
			if !exists(p) {
				out = append(out, fmt.Sprintf("%q (for %q)", p, q.Q))
			}
		}
	}
	return out
}
