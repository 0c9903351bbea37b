// Command eval compares vault-agent's search with an SQLite FTS5 baseline on
// a question set over a vault (see the eval package). `make eval` runs it:
//
//	make eval VAULT=../vaults/obsidian-hub QUESTIONS=../shared/eval/hub-questions.json
//	go run ./scripts/eval --vault DIR --questions FILE [--verbose] [--index DIR] [--rebuild] [--embed use-lite] [--answers FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/vault-agent/vault-agent/eval"
	"github.com/vault-agent/vault-agent/search"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	vaultDir := fs.String("vault", "", "the vault folder (required)")
	questions := fs.String("questions", "", "the question file: a JSON array of {q, expect[], kind} (required)")
	index := fs.String("index", "", "vault-agent's index directory (default: one per vault under the user cache dir, vault-agent-eval/)")
	rebuild := fs.Bool("rebuild", false, "rebuild vault-agent's index from scratch first")
	verbose := fs.Bool("verbose", false, "print every question with the rank each engine gave its answer")
	embed := fs.String("embed", "", "also run hybrid and semantic search with an embedding model: use-lite (a real sentence encoder, Universal Sentence Encoder lite, served by scripts/embedserver, started for the run), random (in process, no signal) or words (in process, a vector per word); or a model name with --embed-base-url")
	embedBase := fs.String("embed-base-url", "", "an OpenAI-compatible endpoint serving the model --embed names, e.g. http://localhost:11434/v1 for Ollama")
	embedCache := fs.String("embed-cache", "", "where use-lite's vectors are cached by text, so a re-run embeds nothing new (default: vault-agent-eval/embed in the user cache dir)")
	ask := fs.Bool("ask", true, "also ask every question with the offline model and check that the answer cites an expected note")
	answers := fs.String("answers", "", "write every question's offline answer to this file (markdown), to read them side by side with another run's; with --embed, the answers made over hybrid search go to FILE-hybrid.md")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: eval --vault DIR --questions FILE [--verbose] [--index DIR] [--rebuild] [--embed use-lite|random|words]\n\n"+
			"Runs every question through vault-agent's search and an SQLite FTS5 baseline (python3's sqlite3:\n"+
			"OR of the words, bm25 with title 10, headings 5, body 1, tokenize 'porter unicode61') over the same\n"+
			"vault, and prints MRR@10, top-1 and recall@10 for both, by kind when the questions have one.\n"+
			"With --embed it runs vault-agent's search in its three modes, lexical, hybrid and semantic, side by\n"+
			"side, with the time of the query's embedding call apart.\n"+
			"With --ask (the default) it also asks every question with the offline model, as `vault-agent ask`\n"+
			"does with no key, and counts the answers that cite an expected note.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *vaultDir == "" || *questions == "" {
		fs.Usage()
		return errors.New("--vault and --questions are required")
	}
	qs, err := eval.LoadQuestions(*questions)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	fmt.Fprintf(os.Stderr, "indexing %s with vault-agent...\n", *vaultDir)
	ours, stats, err := eval.RunVaultAgentModes(ctx, eval.Options{Vault: *vaultDir, Index: *index, Rebuild: *rebuild, Logger: log, Embed: *embed, EmbedBaseURL: *embedBase, EmbedCache: *embedCache, EmbedProgress: embedProgress, Ask: *ask}, qs)
	if err != nil {
		return fmt.Errorf("vault-agent: %w", err)
	}
	fmt.Fprintf(os.Stderr, "running the FTS5 baseline...\n")
	base, err := eval.RunFTS5(ctx, *vaultDir, qs)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(*vaultDir)
	missing := eval.Missing(qs, func(p string) bool {
		st, err := os.Stat(filepath.Join(abs, filepath.FromSlash(p)))
		return err == nil && st.Mode().IsRegular()
	})
	fmt.Printf("Vault %s: %d notes indexed by vault-agent (%s, %s), %d by FTS5; %d questions from %s\n\n",
		*vaultDir, ours[0].Notes, syncSummary(stats), stats.Took.Round(1e6), base.Notes, len(qs), filepath.Base(*questions))
	if len(missing) > 0 {
		fmt.Printf("warning: %d expected notes are not in the vault: %v\n\n", len(missing), missing[:min(5, len(missing))])
	}
	eval.Report(os.Stdout, qs, append(ours, base), *verbose)
	if *answers != "" {
		for i, e := range ours {
			if e.Asks == nil {
				continue
			}
			path := *answers
			if i > 0 { // answers.md, answers-hybrid.md
				ext := filepath.Ext(path)
				path = strings.TrimSuffix(path, ext) + "-" + e.Name + ext
			}
			if err := writeAnswers(path, qs, e.Asks); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeAnswers writes every question with its offline answer and how the
// answer check judged it.
func writeAnswers(path string, qs []eval.Question, a *eval.Asks) error {
	var b strings.Builder
	for i, q := range qs {
		if i >= len(a.Outcomes) {
			break
		}
		o := a.Outcomes[i]
		fmt.Fprintf(&b, "## [%s] %s\n\nfirst line expected: %v; cited lines from expected notes: %d of %d; expected cited anywhere: %v\n\n%s\n\n",
			q.Kind, q.Q, o.FirstHit, o.Expected, o.Lines, o.Hit, o.Answer)
		if o.Err != "" {
			fmt.Fprintf(&b, "error: %s\n\n", o.Err)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write the answers: %w", err)
	}
	return nil
}

// embedProgress shows the first embedding of a vault, which takes a
// while with a real model.
func embedProgress(done, total int) {
	fmt.Fprintf(os.Stderr, "\rembedding: %d/%d chunks", done, total)
	if done == total {
		fmt.Fprintln(os.Stderr)
	}
}

func syncSummary(s search.SyncStats) string {
	if s.Rebuilt {
		return "built"
	}
	return fmt.Sprintf("synced: %d added, %d updated, %d removed", s.Added, s.Updated, s.Removed)
}
