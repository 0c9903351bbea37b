package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/agent/replay"
	"github.com/vault-agent/vault-agent/service"
)

func newReplayCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var show bool
	cmd := &cobra.Command{
		Use:   "replay FILE [--vault DIR] [--index DIR] [--show]",
		Short: "Re-execute a recorded run trace and check that it is deterministic",
		Long: `Replay a JSONL trace written by 'vault-agent ask --trace FILE': the run is executed again with the
recorded model outputs, against the vault, with the same run id, config and clock, and its events are
compared with the recorded ones (timestamps and latencies aside). Prints "identical (N events)" and
exits 0, or prints the first divergence and exits 1.

The trace does not record the vault, so replaying needs --vault. --show prints a readable timeline
of the trace (time offset, iteration, event type, summary) and works without a vault.`,
		Example: `  vault-agent ask --vault ~/Notes --mode par --trace run.jsonl "what did I decide about X?"
  vault-agent replay run.jsonl --vault ~/Notes
  vault-agent replay run.jsonl --show`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			events, err := replay.ReadTrace(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if show {
				if err := replay.WriteTimeline(out, events); err != nil {
					return err
				}
				if vf.vault == "" {
					return nil
				}
			}
			if vf.vault == "" {
				return usageError(cmd, "--vault is required to replay a trace (the trace does not record the vault); use --show to only print its timeline")
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			svc, err := vf.open(cmd, log, service.Options{}, true)
			if err != nil {
				return err
			}
			defer svc.Close()
			rep, err := replay.Run(cmd.Context(), events, svc.Index())
			if err != nil {
				return err
			}
			if rep.Identical {
				fmt.Fprintf(out, "identical (%d events)\n", rep.Events)
				return nil
			}
			d := rep.Divergence
			fmt.Fprintf(out, "diverged at event %d of %d (%s)\n  field: %s\n  want:  %s\n  got:   %s\n",
				d.Index+1, rep.Events, d.EventID, d.Field, d.Want, d.Got)
			return &exitError{code: 1}
		},
	}
	vf.addWithVault(cmd, "the vault to replay the run against (not needed with --show)")
	cmd.Flags().BoolVar(&show, "show", false, "print a readable timeline of the trace")
	return cmd
}
