package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/service"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var mf modelFlags
	var run service.Settings // ask_vault's run flags
	var planner bool
	var httpAddr string
	var allowRemote, noAsk, allowEdits bool
	cmd := &cobra.Command{
		Use:   "mcp --vault DIR [--http 127.0.0.1:PORT]",
		Short: "Serve the vault to MCP clients (Claude Desktop, Claude Code, Cursor, VS Code)",
		Long: `Serve the vault over the Model Context Protocol: ranked search, chunked reading, notes listed by folder,
tag or period, links and backlinks, and an agent that answers with citations (ask_vault); notes are
resources that follow the changes on disk. Obsidian need not be running. Nothing is ever written
to the vault.

By default the client starts this command and talks over stdin/stdout (stdout carries protocol
messages only; logs go to stderr). With --http it serves Streamable HTTP at http://ADDR/mcp instead,
on a loopback address unless --allow-remote is given (there is no authentication).

The index is the one the other commands use (or --index); it is brought up to date in the
background, so the client connects at once. When another vault-agent process holds it, this one
keeps a private index in memory. ask_vault uses the offline extractive model unless a model is
configured as for 'ask' (OPENAI_API_KEY, --base-url/OPENAI_BASE_URL, --model).`,
		Example: `  vault-agent mcp --vault ~/Notes
  claude mcp add vault -- vault-agent mcp --vault ~/Notes
  vault-agent mcp --vault ~/Notes --base-url http://localhost:11434/v1 --model llama3.1
  vault-agent mcp --vault ~/Notes --http 127.0.0.1:8765     # then connect to http://127.0.0.1:8765/mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(vf.vault) == "" {
				return usageError(cmd, "--vault is required: the folder of your markdown notes")
			}
			if err := checkRunFlags(cmd, run); err != nil {
				return err
			}
			if httpAddr != "" {
				if err := mcp.CheckListenAddr(httpAddr, allowRemote); err != nil {
					return usageError(cmd, "--http: %v", err)
				}
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			run.Planner = &planner
			settings := mf.settings().Merge(run)
			model, offline, err := mf.build(cmd, settings, log)
			if err != nil {
				return err
			}
			// The reconcile runs in the background: the client connects at
			// once and the tools wait for the index.
			opening, err := vf.start(cmd, log, service.Options{
				Settings: settings, Model: model, Agent: !noAsk, Watch: true, PrivateIndexIfLocked: true,
			})
			if err != nil {
				return err
			}
			defer opening.Close()
			root, _ := filepath.Abs(vf.vault)
			srv := mcp.New(mcp.Config{
				Vault: opening, Ask: !noAsk, Model: mcp.ModelInfo{Name: model.Name(), Offline: offline}, AllowEdits: allowEdits,
				Semantic:  strings.TrimSpace(vf.embedModel) != "",
				VaultName: filepath.Base(root), Version: version, Logger: log,
			})
			ctx := cmd.Context()
			if httpAddr == "" {
				err := srv.Run(ctx, &sdk.StdioTransport{})
				if ctx.Err() != nil || errors.Is(err, sdk.ErrConnectionClosed) {
					return nil
				}
				return err
			}
			ln, err := net.Listen("tcp", httpAddr)
			if err != nil {
				return fmt.Errorf("--http %s: %w", httpAddr, err)
			}
			fmt.Fprintf(os.Stderr, "vault-agent: serving MCP (Streamable HTTP) for %s at http://%s/mcp\n", root, ln.Addr())
			return srv.ServeHTTP(ctx, ln)
		},
	}
	vf.add(cmd)
	mf.add(cmd)
	cmd.Flags().StringVar(&run.Mode, "mode", agent.ModeReact, "ask_vault's default agent loop: react, roa, par or staged")
	cmd.Flags().BoolVar(&planner, "planner", false, "let ask_vault's agent plan with write_todos")
	cmd.Flags().IntVar(&run.MaxIterations, "max-iterations", 10, "maximum agent iterations per ask_vault (1-50)")
	cmd.Flags().DurationVar(&run.Timeout, "timeout", 5*time.Minute, "maximum time of one ask_vault run")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow --http on a non-loopback address (no authentication: protect it yourself)")
	cmd.Flags().BoolVar(&allowEdits, "allow-edits", false, "offer create_note, append_to_note, replace_in_note and set_properties, annotated destructive so the client asks before each call (journaled; vault-agent undo reverts)")
	cmd.Flags().BoolVar(&noAsk, "no-ask", false, "leave out the ask_vault tool (the client's own model then does all the reading)")
	return cmd
}
