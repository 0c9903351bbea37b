package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/search"
)

func newExplainCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "explain QUERY",
		Short: "Say how a search query is read",
		Long: `Say how a search query is read, part by part, as Obsidian's "Explain search term" does: which
words rank the notes, what each operator keeps or leaves out. It needs no vault. A query with an
error is shown with a mark under the column of the error.

The query language is Obsidian's: free words (ranked), "phrases", -exclusions, OR, (groups),
tag:, path:, file:, content:, match-case:, ignore-case:, line:, block:, section:, task:,
task-todo:, task-done:, [property], [property:value], [property:null], [property:>5] and
/regular expressions/ (see 'vault-agent search --help').`,
		Example: `  vault-agent explain 'meeting (work OR meetup) -personal'
  vault-agent explain 'launch task-todo: [status:active]'
  vault-agent explain 'line:(mix flour) -section:(rye)'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.TrimSpace(strings.Join(args, " "))
			q, err := search.ParseQuery(query)
			var qe *search.QueryError
			switch {
			case errors.As(err, &qe):
				return usageError(cmd, "%v\n  %s\n  %s^", err, query, strings.Repeat(" ", max(0, qe.Pos-1)))
			case err != nil:
				return usageError(cmd, "%v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\n\n%s", q, search.Explain(q))
			return nil
		},
	}
}
