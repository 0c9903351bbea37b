package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

func newUndoCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var runID, journal string
	cmd := &cobra.Command{
		Use:   "undo --vault DIR [--run ID]",
		Short: "Undo the edits an agent run applied to the vault",
		Long: `Undo the edits an agent run applied (with allowEdits, after your approval): each note the run
changed gets its previous content back, and each note it created is removed. The edits are read
from the journal kept beside the index, outside the vault. Without --run the latest run with edits
not yet undone is undone. If a note changed since the run edited it, nothing is undone.

The journal keeps the latest runs: past 64 MiB (with the previous contents stored beside it) its
oldest runs are dropped and can no longer be undone.`,
		Example: `  vault-agent undo --vault ~/Notes
  vault-agent undo --vault ~/Notes --run run-1718000000000-3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			var o service.Options
			if err := vf.options(cmd, log, &o); err != nil {
				return err
			}
			o.Journal = journal
			done, jp, err := service.Undo(cmd.Context(), o, runID)
			switch {
			case errors.Is(err, vault.ErrNothingToUndo):
				return &exitError{code: 1, err: err}
			case err != nil:
				for _, u := range done {
					fmt.Fprintf(cmd.OutOrStdout(), "undid %s of %s\n", u.Op, u.Path)
				}
				return &exitError{code: 1, err: err}
			}
			for _, u := range done {
				switch {
				case u.Already:
					fmt.Fprintf(cmd.OutOrStdout(), "%s was already as before the run (its %s was not written)\n", u.Path, u.Op)
				case u.Removed:
					fmt.Fprintf(cmd.OutOrStdout(), "removed %s (created by the run)\n", u.Path)
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "restored %s (undid %s)\n", u.Path, u.Op)
				}
			}
			log.Debug("undo", "journal", jp)
			return nil
		},
	}
	vf.add(cmd)
	cmd.Flags().StringVar(&runID, "run", "", "the run whose edits to undo (default: the latest run with edits)")
	cmd.Flags().StringVar(&journal, "journal", "", "the edit journal (default: beside the index)")
	return cmd
}
