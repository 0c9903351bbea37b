package main

import (
	"os"

	"github.com/spf13/cobra"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var codec string
	cmd := &cobra.Command{
		Use:   "serve [--vault DIR] [--index DIR] [--codec header|line]",
		Short: "Serve an editor or plugin host over stdio JSON-RPC",
		Long: `Serve an editor or plugin host over stdio JSON-RPC (see PROTOCOL.md). Messages use
Content-Length framing (as vscode-jsonrpc and LSP clients speak) or, with --codec line,
newline-delimited JSON. Only protocol bytes are written to stdout; logs go to stderr.
The vault and index given in 'initialize' win over --vault and --index.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if codec != "header" && codec != "line" {
				return usageError(cmd, "--codec must be header or line, got %q", codec)
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			releaseWhenIdle(cmd.Context(), log)
			return serve(cmd.Context(), log, vf, codec, os.Stdin, stdout)
		},
	}
	vf.addWithVault(cmd, "the vault folder, when 'initialize' names none")
	cmd.Flags().StringVar(&codec, "codec", "header", "message framing: header (Content-Length) or line")
	return cmd
}
