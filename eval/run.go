package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/llm/llmtest"
	"github.com/vault-agent/vault-agent/scripts/embedserver"
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
	// EmbedMillis is the time of the embedding call of each question, for
	// the modes that make one.
	EmbedMillis []float64
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
	// Progress, when set, receives indexing progress; EmbedProgress the
	// progress of embedding the chunks.
	Progress      search.ProgressFunc
	EmbedProgress search.ProgressFunc
	// Embed, when set, also runs the questions in hybrid and semantic mode
	// with an embedding model: "use-lite" (Universal Sentence Encoder
	// lite, a real sentence encoder, served by scripts/embedserver, which
	// is started for the run), "random" (in process, a vector per text, no
	// signal at all: hybrid must then rank as lexical search does), "words"
	// (in process, the sum of a vector per word: lexical signal only), or,
	// with EmbedBaseURL, the name of a model on that endpoint. Its vectors
	// are kept beside the index.
	Embed string
	// EmbedBaseURL is an OpenAI-compatible endpoint (e.g. Ollama's
	// http://localhost:11434/v1) serving the model Embed names.
	EmbedBaseURL string
	// EmbedCache is where the use-lite server caches its vectors, by text,
	// so that a re-run embeds nothing new; "" is vault-agent-eval/embed
	// under the user cache dir.
	EmbedCache string
	// Ask also asks every question with the offline model (Engine.Asks).
	Ask bool
}

// embedDims is the dimension of the eval's in-process embedders
// (nomic-embed-text's).
const embedDims = 768

// timedEmbedder adds up the time its embedder takes, so that the time of
// the query's embedding call is reported apart.
type timedEmbedder struct {
	semantic.Embedder
	nanos atomic.Int64
}

func (t *timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	defer func() { t.nanos.Add(int64(time.Since(start))) }()
	return t.Embedder.Embed(ctx, texts)
}

// embedderOf returns the embedder opts.Embed names and what stops it.
func embedderOf(ctx context.Context, opts Options) (semantic.Embedder, func(), error) {
	none := func() {}
	switch {
	case opts.Embed == "random":
		return llmtest.LocalEmbedder{Name: "random-768", Fn: llmtest.RandomVectors(embedDims)}, none, nil
	case opts.Embed == "words":
		return llmtest.LocalEmbedder{Name: "words-768", Fn: llmtest.WordVectors(embedDims, nil)}, none, nil
	case opts.EmbedBaseURL != "":
		e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: opts.EmbedBaseURL, Model: opts.Embed, Logger: opts.Logger})
		return e, none, err
	case opts.Embed == embedserver.Model:
		cache := opts.EmbedCache
		if cache == "" {
			dir, err := os.UserCacheDir()
			if err != nil {
				return nil, none, fmt.Errorf("no user cache dir for the vectors of %s (give --embed-cache): %w", embedserver.Model, err)
			}
			cache = filepath.Join(dir, "vault-agent-eval", "embed")
		}
		srv, err := embedserver.Start(ctx, embedserver.Options{CacheDir: cache, Stderr: os.Stderr})
		if err != nil {
			return nil, none, fmt.Errorf("start the %s embeddings server: %w", embedserver.Model, err)
		}
		e, err := llm.NewEmbedder(llm.EmbedderConfig{BaseURL: srv.BaseURL, Model: embedserver.Model, Logger: opts.Logger})
		if err != nil {
			srv.Close()
			return nil, none, err
		}
		return e, func() { srv.Close() }, nil
	}
	return nil, none, fmt.Errorf("--embed must be %s, random or words, or a model name with --embed-base-url; got %q", embedserver.Model, opts.Embed)
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
	var emb *timedEmbedder
	if opts.Embed != "" {
		e, stop, err := embedderOf(ctx, opts)
		if err != nil {
			return nil, stats, err
		}
		defer stop()
		emb = &timedEmbedder{Embedder: e}
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
	defer func() {
		if ix != nil {
			ix.Close()
		}
	}()
	if opts.Rebuild {
		stats, err = ix.Rebuild(ctx, opts.Progress)
	} else {
		stats, err = ix.Sync(ctx, opts.Progress)
	}
	if err != nil {
		return nil, stats, err
	}
	if stats.Added+stats.Updated+stats.Removed > 0 || stats.Rebuilt {
		// The questions are asked of the index as a later run opens it
		// from the disk, not as the run that wrote it holds it, which is
		// what a person searches nearly every time.
		if ix, err = reopen(ctx, ix, search.Options{Path: dir, Vault: v, Logger: opts.Logger}); err != nil {
			return nil, stats, err
		}
	}
	searchers := []searcher{{"vault-agent", ix.Search}}
	var hybrid askIndex // the index the answer check's hybrid run searches
	if emb != nil {
		sem, err := semantic.Open(semantic.Options{Index: ix, Embedder: emb, Path: filepath.Clean(dir) + "-vectors-" + fileSafe(opts.Embed) + ".db", Logger: opts.Logger})
		if err != nil {
			return nil, stats, err
		}
		defer sem.Close()
		st, err := sem.Sync(ctx, opts.EmbedProgress)
		if err != nil {
			return nil, stats, err
		}
		fmt.Fprintf(os.Stderr, "vectors (%s): %d notes, %d chunks, %d embedded now, %.1f MB\n", emb.Model(), st.Notes, st.Chunks, st.Embedded, float64(sem.MemoryBytes())/1e6)
		searchers[0].name = search.ModeLexical
		hybrid = hybridIndex{Index: ix, sem: sem}
		for _, mode := range []string{search.ModeHybrid, search.ModeSemantic} {
			searchers = append(searchers, searcher{mode, func(ctx context.Context, r search.Request) (*search.Results, error) {
				r.Mode = mode
				return sem.Search(ctx, r)
			}})
		}
	}
	var engines []*Engine
	for _, s := range searchers {
		engines = append(engines, runEngine(ctx, s.name, ix.Count(), s.fn, emb, qs))
	}
	if opts.Ask {
		if engines[0].Asks, err = RunAsks(ctx, ix, qs); err != nil {
			return nil, stats, err
		}
		if hybrid != nil {
			// As `vault-agent ask` does with an embedding model: the
			// agent's searches are hybrid.
			if engines[1].Asks, err = RunAsks(ctx, hybrid, qs); err != nil {
				return nil, stats, err
			}
		}
	}
	return engines, stats, nil
}

// hybridIndex is the index with its searches made by the semantic engine,
// in the mode each request names (hybrid when none).
type hybridIndex struct {
	*search.Index
	sem *semantic.Engine
}

func (h hybridIndex) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	return h.sem.Search(ctx, req)
}

// searcher is one way of searching: a mode of vault-agent's search.
type searcher struct {
	name string
	fn   func(context.Context, search.Request) (*search.Results, error)
}

// fileSafe is name with every character but letters, digits, dots and
// dashes replaced, for a file name.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

// runEngine runs every question through fn with a limit of K. The time
// the embedder emb (nil: none) takes during a search is also kept apart
// (Engine.EmbedMillis): hybrid search makes that call while it searches
// the words, so the search's time holds only what is not overlapped.
func runEngine(ctx context.Context, name string, notes int, fn func(context.Context, search.Request) (*search.Results, error), emb *timedEmbedder, qs []Question) *Engine {
	e := &Engine{Name: name, Notes: notes}
	for _, q := range qs {
		var embedBefore int64
		if emb != nil {
			embedBefore = emb.nanos.Load()
		}
		start := time.Now()
		res, err := fn(ctx, search.Request{Query: q.Q, Limit: K})
		took := time.Since(start)
		if emb != nil {
			if spent := time.Duration(emb.nanos.Load() - embedBefore); spent > 0 {
				e.EmbedMillis = append(e.EmbedMillis, float64(spent.Microseconds())/1000)
			}
		}
		e.Millis = append(e.Millis, float64(took.Microseconds())/1000)
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

// reopen closes ix and opens and syncs its index again.
func reopen(ctx context.Context, ix *search.Index, o search.Options) (*search.Index, error) {
	if err := ix.Close(); err != nil {
		return nil, fmt.Errorf("close the index: %w", err)
	}
	ix, err := search.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(ctx, nil); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
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
