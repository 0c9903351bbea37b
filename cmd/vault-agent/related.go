package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

func newRelatedCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "related --vault DIR --embed-model MODEL [--limit N] [--json] NOTE",
		Short: "List the notes closest in meaning to a note",
		Long: `List the notes closest in meaning to a note (similar notes), by the embeddings of their
chunks. It needs an embedding model (--embed-model); the vectors are kept beside the index, so
only new or changed chunks are embedded. NOTE is a path, a title or a [[wikilink]].`,
		Example: `  vault-agent related --vault ~/Notes --embed-base-url http://localhost:11434/v1 --embed-model nomic-embed-text "Sourdough Starter"`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > 100 {
				return usageError(cmd, "--limit must be between 1 and 100, got %d", limit)
			}
			if strings.TrimSpace(vf.embedModel) == "" {
				return usageError(cmd, "%v", service.ErrNoEmbedder)
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			svc, err := vf.open(cmd, log, service.Options{}, false)
			if err != nil {
				return err
			}
			defer svc.Close()
			res, err := svc.Related(cmd.Context(), strings.Join(args, " "), limit)
			if errors.Is(err, vault.ErrNotFound) || errors.Is(err, vault.ErrAmbiguous) || errors.Is(err, semantic.ErrNotEmbedded) {
				return usageError(cmd, "%v", err)
			}
			if err != nil {
				return err
			}
			return writeResults(cmd.OutOrStdout(), res, asJSON)
		},
	}
	vf.add(cmd)
	cmd.Flags().IntVarP(&limit, "limit", "n", 10, "maximum number of notes (1-100)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print results as JSON")
	return cmd
}
