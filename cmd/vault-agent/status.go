package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/service"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --vault DIR",
		Short: "Show which process holds a vault's index, whom it serves, and how fresh it is",
		Long: `Show who holds the index of a vault: every vault-agent process of a vault (an MCP server, an
editor's sidecar, an ACP agent, a search in a terminal) shares one index. The first one to open it
holds it, keeps it fresh and serves it to the others on a socket private to you; when it exits, one
of the others takes it over. This shows the holder (its pid, its front-end and since when), how
many other processes it serves, and the index's notes, size and freshness. It opens nothing.`,
		Example: "  vault-agent status --vault ~/Notes\n  vault-agent status --vault ~/Notes --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			var o service.Options
			if err := vf.options(cmd, log, &o); err != nil {
				return err
			}
			st, err := service.Status(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printStatus(cmd.OutOrStdout(), st, time.Now())
			return nil
		},
	}
	vf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// printStatus writes st for a person.
func printStatus(w io.Writer, st *service.IndexStatus, now time.Time) {
	fmt.Fprintf(w, "index     %s\n", st.Index)
	h := st.Holder
	switch {
	case h != nil:
		front := h.FrontEnd
		if h.Version != "" {
			front += " " + h.Version
		}
		fmt.Fprintf(w, "held by   pid %d (%s), since %s (%s ago)\n", h.PID, front, h.Since.Local().Format("2006-01-02 15:04:05"), ago(now.Sub(h.Since)))
		fmt.Fprintf(w, "serves    %d other process%s\n", h.Clients, plural(h.Clients, "", "es"))
		fresh := "not watching the vault"
		if h.Watching {
			fresh = "watching the vault"
		}
		if h.Indexing || !h.Ready {
			fresh += ", indexing now"
		}
		if !h.LastIndexedAt.IsZero() {
			fresh += fmt.Sprintf(", last change indexed %s ago", ago(now.Sub(h.LastIndexedAt)))
		}
		fmt.Fprintf(w, "notes     %d, %s\n", h.Notes, fresh)
		size := fmt.Sprintf("%s on disk", megabytes(h.IndexBytes))
		if h.EmbedModel != "" {
			size += fmt.Sprintf("; vectors %s (%s)", megabytes(h.VectorsBytes), h.EmbedModel)
		}
		fmt.Fprintf(w, "size      %s\n", size)
	case st.Locked:
		who := "a process"
		if st.LockedBy > 0 {
			who = fmt.Sprintf("pid %d", st.LockedBy)
		}
		fmt.Fprintf(w, "held by   %s, which does not share it (an older vault-agent, one still opening it, or a hung one)\n", who)
		if st.Problem != "" {
			fmt.Fprintf(w, "          %s\n", st.Problem)
		}
		fmt.Fprintf(w, "size      %s on disk, last written %s ago\n", megabytes(st.OnDisk), ago(now.Sub(st.Modified)))
	default:
		fmt.Fprintln(w, "held by   no process: the next vault-agent command on this vault opens it and brings it up to date")
		fmt.Fprintf(w, "size      %s on disk, last written %s ago\n", megabytes(st.OnDisk), ago(now.Sub(st.Modified)))
	}
}

func ago(d time.Duration) string {
	switch {
	case d < time.Second:
		return "less than a second"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 24*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
