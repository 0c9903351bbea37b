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

	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
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
	// Embed, when set, also runs the questions in semantic and hybrid mode
	// with an in-process embedder of 768 dimensions: "random" (a vector
	// per text, no signal at all: hybrid must then stay as good as
	// lexical) or "words" (the sum of a vector per word: lexical signal).
	// Its vectors are kept beside the index.
	Embed string
	// Ask also asks every question with the offline model (Engine.Asks).
	Ask bool
}

// embedDims is the dimension of the eval's embedders (nomic-embed-text's).
const embedDims = 768

// localEmbedder embeds in process with a deterministic function.
type localEmbedder struct {
	name string
	fn   llmtest.EmbedFunc
}

func (l localEmbedder) Model() string { return l.name }

func (l localEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = l.fn(t)
	}
	return out, nil
}

func embedderOf(kind string) (semantic.Embedder, error) {
	switch kind {
	case "random":
		return localEmbedder{"random-768", llmtest.RandomVectors(embedDims)}, nil
	case "words":
		return localEmbedder{"words-768", llmtest.WordVectors(embedDims, nil)}, nil
	}
	return nil, fmt.Errorf("--embed must be random or words, got %q", kind)
}

// RunVaultAgent opens (and syncs) vault-agent's index of the vault and runs
// every question through Index.Search with a limit of K.
func RunVaultAgent(ctx context.Context, opts Options, qs []Question) (*Engine, search.SyncStats, error) {
	opts.Embed = ""
	es, stats, err := RunVaultAgentModes(ctx, opts, qs)
	if err != nil {
		return nil, stats, err
	}
	return es[0], stats, nil
}

// RunVaultAgentModes is RunVaultAgent, then, with opts.Embed, the same
// questions in hybrid and semantic mode: the engines are lexical, hybrid
// and semantic, in that order.
func RunVaultAgentModes(ctx context.Context, opts Options, qs []Question) ([]*Engine, search.SyncStats, error) {
	var stats search.SyncStats
	var emb semantic.Embedder
	if opts.Embed != "" {
		var err error
		if emb, err = embedderOf(opts.Embed); err != nil {
			return nil, stats, err
		}
	}
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
	searchers := []struct {
		name string
		fn   func(context.Context, search.Request) (*search.Results, error)
	}{{"vault-agent", ix.Search}}
	if emb != nil {
		sem, err := semantic.Open(semantic.Options{Index: ix, Embedder: emb, Path: filepath.Clean(dir) + "-vectors-" + opts.Embed + ".db", Logger: opts.Logger})
		if err != nil {
			return nil, stats, err
		}
		defer sem.Close()
		st, err := sem.Sync(ctx, nil)
		if err != nil {
			return nil, stats, err
		}
		fmt.Fprintf(os.Stderr, "vectors (%s): %d notes, %d chunks, %d embedded now, %.1f MB\n", emb.Model(), st.Notes, st.Chunks, st.Embedded, float64(sem.MemoryBytes())/1e6)
		for _, mode := range []string{search.ModeHybrid, search.ModeSemantic} {
			searchers = append(searchers, struct {
				name string
				fn   func(context.Context, search.Request) (*search.Results, error)
			}{"vault-agent " + mode + " (" + opts.Embed + ")", func(ctx context.Context, r search.Request) (*search.Results, error) {
				r.Mode = mode
				return sem.Search(ctx, r)
			}})
		}
	}
	var engines []*Engine
	for _, s := range searchers {
		engines = append(engines, runEngine(ctx, s.name, ix.Count(), s.fn, qs))
	}
	if opts.Ask {
		if engines[0].Asks, err = RunAsks(ctx, ix, qs); err != nil {
			return nil, stats, err
		}
	}
	return engines, stats, nil
}

// runEngine runs every question through fn with a limit of K.
func runEngine(ctx context.Context, name string, notes int, fn func(context.Context, search.Request) (*search.Results, error), qs []Question) *Engine {
	e := &Engine{Name: name, Notes: notes}
	for _, q := range qs {
		start := time.Now()
		res, err := fn(ctx, search.Request{Query: q.Q, Limit: K})
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
	return e
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
