package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

func newWatchCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var limit int
	cmd := &cobra.Command{
		Use:   "watch --vault DIR [QUERY]",
		Short: "Keep the index fresh as notes change; optionally re-run a search after each change",
		Long: `Index the vault, then watch it for changes (edits, atomic saves, renames, deletes, new folders)
and apply them to the index as they happen, printing a line per update. With a QUERY, the search
is re-run and printed after every update, so you can see an edit become searchable. Ctrl-C stops.`,
		Example: `  vault-agent watch --vault ~/Notes
  vault-agent watch --vault ~/Notes "tag:#todo"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			svc, err := vf.open(cmd, log, service.Options{}, false)
			if err != nil {
				return err
			}
			defer svc.Close()
			ix, stats := svc.Index(), svc.Synced()
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, summary(stats, ix.Count()))
			updates, unsubscribe := ix.Subscribe()
			defer unsubscribe()
			if err := ix.Watch(ctx); err != nil {
				return err
			}
			query := strings.TrimSpace(strings.Join(args, " "))
			show := func() {
				if query == "" {
					return
				}
				res, err := ix.Search(ctx, search.Request{Query: query, Limit: limit})
				if err != nil {
					fmt.Fprintf(out, "search: %v\n", err)
					return
				}
				printResults(out, res)
			}
			show()
			fmt.Fprintf(out, "watching %s (Ctrl-C to stop)\n", ix.Vault().Root())
			for {
				select {
				case <-ctx.Done():
					return nil
				case _, ok := <-updates:
					if !ok {
						return nil
					}
					fmt.Fprintf(out, "[%s] index updated: %d notes\n", time.Now().Format("15:04:05"), ix.Count())
					show()
				}
			}
		},
	}
	vf.add(cmd)
	cmd.Flags().IntVarP(&limit, "limit", "n", 5, "maximum number of results when a query is given")
	return cmd
}
