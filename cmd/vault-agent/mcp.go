package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/mcp"
	"github.com/vault-agent/vault-agent/service"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var mf modelFlags
	var rf runFlags // ask_vault's run flags
	var httpAddr, tokenFile string
	var allowRemote, noAsk, allowEdits bool
	cmd := &cobra.Command{
		Use:   "mcp [--vault DIR] [--http 127.0.0.1:PORT]",
		Short: "Serve the vault to MCP clients (Claude Desktop, Claude Code, Cursor, VS Code)",
		Long: `Serve the vault over the Model Context Protocol: ranked search, chunked reading, notes listed by folder,
tag or period, links and backlinks, and an agent that answers with citations (ask_vault); notes are
resources that follow the changes on disk. Obsidian need not be running. Nothing is ever written
to the vault.

By default the client starts this command and talks over stdin/stdout (stdout carries protocol
messages only; logs go to stderr). With --http it serves Streamable HTTP at http://ADDR/mcp instead,
on a loopback address unless --allow-remote is given. With --allow-remote every request needs the
header "Authorization: Bearer <token>": the token is read from --token-file, or made at start and
printed once on stderr (--token-file works on a loopback address too). At most 64 sessions are kept
(the one idle the longest is closed for a new one), a session idle for 10 minutes is closed, and a
client must send a request within 30 seconds and use a kept-alive connection within 60.

The index is the one the other commands use (or --index); it is brought up to date in the
background, so the client connects at once. When another vault-agent process holds it, this one
uses it through that process (and takes it over if that one exits); only an index held by a process
that does not share it (an older vault-agent) makes it keep a private index in memory. ask_vault uses the offline extractive model unless a model is
named as for 'ask' (--model, VAULT_AGENT_MODEL, OPENAI_MODEL or model in the config file; an API
key alone chooses nothing); a model that cannot be reached fails that ask_vault call only.
Without --vault the vault is the current folder, when it holds .obsidian/ or markdown notes.`,
		Example: `  vault-agent mcp --vault ~/Notes
  claude mcp add vault -- vault-agent mcp --vault ~/Notes
  vault-agent mcp --vault ~/Notes --base-url http://localhost:11434/v1 --model llama3.1
  vault-agent mcp --vault ~/Notes --http 127.0.0.1:8765     # then connect to http://127.0.0.1:8765/mcp
  vault-agent mcp --vault ~/Notes --http 0.0.0.0:8765 --allow-remote --token-file ~/.config/vault-agent/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := vf.resolveVault(cmd); err != nil {
				return err
			}
			flags, err := rf.settings(cmd)
			if err != nil {
				return err
			}
			if err := mf.check(cmd); err != nil {
				return err
			}
			var token string
			if httpAddr != "" {
				if err := mcp.CheckListenAddr(httpAddr, allowRemote); err != nil {
					return usageError(cmd, "--http: %v", err)
				}
			}
			if tokenFile != "" {
				if httpAddr == "" {
					return usageError(cmd, "--token-file needs --http")
				}
				t, err := mcp.ReadTokenFile(tokenFile)
				if err != nil {
					return usageError(cmd, "--token-file: %v", err)
				}
				token = t
			}
			madeToken := false
			if httpAddr != "" && allowRemote && token == "" {
				t, err := mcp.NewToken()
				if err != nil {
					return err
				}
				token, madeToken = t, true
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			releaseWhenIdle(cmd.Context(), log)
			settings := mf.settings().Merge(flags)
			// The reconcile runs in the background: the client connects at
			// once and the tools wait for the index.
			opening, err := vf.start(cmd, log, service.Options{
				Settings: settings, Agent: !noAsk, Watch: true, PrivateIndexIfLocked: true,
			})
			if err != nil {
				return err
			}
			defer opening.Close()
			root, _ := filepath.Abs(vf.vault)
			choice := opening.ModelChoice(service.Settings{})
			srv := mcp.New(mcp.Config{
				Vault: opening, Ask: !noAsk, Model: mcp.ModelInfo{Name: choice.Name(), Offline: choice.Offline()}, AllowEdits: allowEdits,
				Semantic:  strings.TrimSpace(vf.embedModel) != "",
				VaultName: filepath.Base(root), Version: version, Logger: log,
				HTTP: mcp.HTTP{Token: token},
			})
			ctx := cmd.Context()
			if httpAddr == "" {
				err := srv.Run(ctx, &sdk.IOTransport{Reader: os.Stdin, Writer: stdout})
				if ctx.Err() != nil || errors.Is(err, sdk.ErrConnectionClosed) {
					return nil
				}
				return err
			}
			ln, err := net.Listen("tcp", httpAddr)
			if err != nil {
				return fmt.Errorf("--http %s: %w", httpAddr, err)
			}
			if madeToken {
				// Said once, here, and never logged.
				fmt.Fprintf(os.Stderr, "vault-agent: MCP clients must send the header \"Authorization: Bearer %s\" (made for this run; give --token-file to keep one)\n", token)
			}
			fmt.Fprintf(os.Stderr, "vault-agent: serving MCP (Streamable HTTP) for %s at http://%s/mcp\n", root, ln.Addr())
			return srv.ServeHTTP(ctx, ln)
		},
	}
	vf.add(cmd)
	mf.add(cmd)
	rf.add(cmd, "ask_vault's default agent loop: react, roa, par or staged", "let ask_vault's agent plan with write_todos",
		"maximum agent iterations per ask_vault (1-50)", "maximum time of one ask_vault run (at most 24h)")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow --http on a non-loopback address; every request then needs a bearer token (--token-file, or one made and printed at start)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "with --http, require the bearer token in this file (at least 16 characters) of every request")
	cmd.Flags().BoolVar(&allowEdits, "allow-edits", false, "offer create_note, append_to_note, replace_in_note and set_properties, annotated destructive so the client asks before each call (journaled; vault-agent undo reverts)")
	cmd.Flags().BoolVar(&noAsk, "no-ask", false, "leave out the ask_vault tool (the client's own model then does all the reading)")
	return cmd
}
