package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// vaultFlags are the flags every vault command shares.
type vaultFlags struct {
	vault    string
	index    string
	excludes []string
	// noObsidian turns off Obsidian's "Excluded files" setting.
	noObsidian bool
	// embedModel and embedBaseURL turn on semantic search.
	embedModel, embedBaseURL string
}

func (f *vaultFlags) add(cmd *cobra.Command) {
	f.addWithVault(cmd, "the vault folder (default: the current folder, when it holds .obsidian/ or markdown notes)")
}

// addWithVault adds the flags with vaultUsage as --vault's help, for a
// command that does not always need a vault.
func (f *vaultFlags) addWithVault(cmd *cobra.Command, vaultUsage string) {
	cmd.Flags().StringVar(&f.vault, "vault", "", vaultUsage)
	cmd.Flags().StringVar(&f.index, "index", "", "index folder (default: per-vault folder in the user cache dir)")
	cmd.Flags().StringSliceVar(&f.excludes, "exclude", nil, "glob of vault paths to skip, e.g. 'Archive/**' (repeatable)")
	cmd.Flags().BoolVar(&f.noObsidian, "no-obsidian-excludes", false, "index notes that Obsidian's \"Excluded files\" setting (.obsidian/app.json) hides")
	addEmbedFlags(cmd, &f.embedModel, &f.embedBaseURL)
}

// addEmbedFlags adds the flags that turn on semantic search.
func addEmbedFlags(cmd *cobra.Command, model, baseURL *string) {
	cmd.Flags().StringVar(model, "embed-model", "", "embedding model for semantic and hybrid search, e.g. nomic-embed-text (Ollama) or text-embedding-3-small (OpenAI); default: none, search is lexical")
	cmd.Flags().StringVar(baseURL, "embed-base-url", "", "OpenAI-compatible endpoint of the embedding model, e.g. http://localhost:11434/v1 (default $OPENAI_BASE_URL, else OpenAI); key: $VAULT_AGENT_EMBED_API_KEY, or $OPENAI_API_KEY without this flag")
}

// open opens the vault (service.Open, with these flags' vault, index and
// excludes) with its index reconciled with the disk, showing progress on
// stderr unless quiet. Settings that cannot be used, a model among them,
// are usage errors.
func (f *vaultFlags) open(cmd *cobra.Command, log *slog.Logger, o service.Options, quiet bool) (*service.Service, error) {
	if err := f.options(cmd, log, &o); err != nil {
		return nil, err
	}
	progress := newProgress(os.Stderr, quiet)
	o.Progress = progress.update
	embedding := newProgress(os.Stderr, quiet)
	embedding.what, embedding.unit = "embedding", "chunks"
	o.EmbedProgress = func(done, total int) {
		progress.finish()
		embedding.update(done, total)
	}
	svc, err := service.Open(cmd.Context(), o)
	progress.finish()
	embedding.finish()
	if err != nil && cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
		// An interrupted sync keeps what it indexed (search.Index.Sync).
		return nil, errors.New("interrupted: the notes indexed so far are kept, and the next run goes on from there")
	}
	return svc, openError(cmd, err)
}

// start is open with the reconcile in the background (service.Start), for
// a server that answers its client at once.
func (f *vaultFlags) start(cmd *cobra.Command, log *slog.Logger, o service.Options) (*service.Opening, error) {
	if err := f.options(cmd, log, &o); err != nil {
		return nil, err
	}
	opening, err := service.Start(cmd.Context(), o)
	return opening, openError(cmd, err)
}

// options puts the flags' vault, index and excludes into o. Without
// --vault the vault is the current folder, when it looks like one.
func (f *vaultFlags) options(cmd *cobra.Command, log *slog.Logger, o *service.Options) error {
	if err := f.resolveVault(cmd); err != nil {
		return err
	}
	o.Vault, o.Index, o.Logger = f.vault, f.index, log
	if o.FrontEnd == "" {
		o.FrontEnd = cmd.Name() // who holds the index, in vault-agent status
	}
	f.settings(&o.Settings)
	return nil
}

// resolveVault sets --vault to the current folder when it was not given
// and the folder looks like a vault, and is a usage error otherwise.
func (f *vaultFlags) resolveVault(cmd *cobra.Command) error {
	if strings.TrimSpace(f.vault) != "" {
		return nil
	}
	dir, err := service.ProcessEnv().DefaultVault()
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	f.vault = dir
	return nil
}

// settings puts the flags' excludes and embedding model into s, each
// named by its flag.
func (f *vaultFlags) settings(s *service.Settings) {
	var v service.Settings
	v.Excludes = f.excludes
	v.EmbedModel, v.EmbedBaseURL = f.embedModel, f.embedBaseURL
	if f.noObsidian {
		off := false
		v.ObsidianExcludes = &off
	}
	*s = s.Merge(v.Named(service.FlagName))
}

// openError makes settings that cannot be used, a model among them, usage
// errors.
func openError(cmd *cobra.Command, err error) error {
	var se *service.SettingError
	var oe *service.OpenError
	if errors.As(err, &se) || errors.As(err, &oe) && oe.Part == service.PartModel {
		return usageError(cmd, "%v", err)
	}
	return err
}

// progress draws an index progress bar on stderr when it is a terminal,
// and otherwise stays quiet except for a line every 10%.
type progress struct {
	w       io.Writer
	bar     *progressbar.ProgressBar
	tty     bool
	quiet   bool
	lastPct int
	// what is done to units: "indexing" notes, "embedding" chunks.
	what, unit string
}

func newProgress(w *os.File, quiet bool) *progress {
	return &progress{w: w, tty: term.IsTerminal(int(w.Fd())), quiet: quiet, lastPct: -1, what: "indexing", unit: "notes"}
}

func (p *progress) update(done, total int) {
	if p.quiet || total <= 0 {
		return
	}
	if p.tty {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.what),
				progressbar.OptionShowCount(),
				progressbar.OptionSetItsString(p.unit),
				progressbar.OptionShowIts(),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
		}
		_ = p.bar.Set(done)
		return
	}
	if total < 200 {
		return
	}
	pct := done * 100 / total
	if pct/10 != p.lastPct/10 || done == total && p.lastPct != pct {
		p.lastPct = pct
		fmt.Fprintf(p.w, "%s: %d/%d %s (%d%%)\n", p.what, done, total, p.unit, pct)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

func summary(stats search.SyncStats, notes int) string {
	s := fmt.Sprintf("%d notes indexed (%d added, %d updated, %d removed, %d unchanged", notes,
		stats.Added, stats.Updated, stats.Removed, stats.Unchanged)
	if stats.Failed > 0 {
		s += fmt.Sprintf(", %d failed", stats.Failed)
	}
	s += fmt.Sprintf(") in %s", stats.Took.Round(time.Millisecond))
	if stats.Rebuilt && stats.Reason != "" {
		s += "; rebuilt: " + stats.Reason
	}
	return s
}

func newIndexCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var full, asJSON bool
	cmd := &cobra.Command{
		Use:   "index --vault DIR",
		Short: "Build or update the search index of a vault",
		Long: `Build or update the search index of a vault. Only notes that changed since the last run are
re-indexed; --full rebuilds everything. Progress goes to stderr, a one-line summary to stdout.`,
		Example: "  vault-agent index --vault ~/Notes\n  vault-agent index --vault ~/Notes --full",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			svc, err := vf.open(cmd, log, service.Options{Rebuild: full}, false)
			if err != nil {
				return err
			}
			defer svc.Close()
			ix, stats := svc.Index(), svc.Synced()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{
					"notes": ix.Count(), "added": stats.Added, "updated": stats.Updated, "removed": stats.Removed,
					"unchanged": stats.Unchanged, "failed": stats.Failed, "tookMs": stats.Took.Milliseconds(),
					"rebuilt": stats.Rebuilt, "reason": stats.Reason,
				})
			}
			fmt.Fprintln(cmd.OutOrStdout(), summary(stats, ix.Count()))
			return nil
		},
	}
	vf.add(cmd)
	cmd.Flags().BoolVar(&full, "full", false, "rebuild the whole index")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}
