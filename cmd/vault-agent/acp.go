package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/acp"
	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/service"
)

func newACPCmd(g *globalFlags) *cobra.Command {
	var mf modelFlags
	var vf vaultFlags // no --vault: each session's cwd is its vault
	var planner, allowEdits bool
	var run service.Settings // the session defaults
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Run as an Agent Client Protocol agent (Zed, Obsidian's Agent Client plugin, ...)",
		Long: `Run as an Agent Client Protocol (ACP v1) agent over stdio, for editors that host agents:
Zed, Obsidian's Agent Client plugin, JetBrains, Neovim and Emacs clients. The editor starts
'vault-agent acp' and talks JSON-RPC, one message per line; only protocol bytes go to stdout,
logs go to stderr. No --vault is needed: each session's working directory (cwd) is its vault,
indexed on first use into the per-vault index in your user cache dir (or --index, which then
serves that one vault), and closed when its last session closes.

The model is chosen as for 'ask': offline (no key, no network) unless OPENAI_API_KEY or
--base-url/OPENAI_BASE_URL is set; OPENAI_MODEL or --model names the model. Sessions start in
--mode with the planner --planner and --max-iterations; the editor can change them per session
(session modes and config options). The vault is never modified, unless --allow-edits lets the
agent propose edits: each one is a session/request_permission (allow once or reject) with its diff,
written through the editor's fs/write_text_file when it offers it; 'vault-agent undo' reverts them.`,
		Example: `  vault-agent acp                                   # offline model
  OPENAI_API_KEY=... OPENAI_MODEL=gpt-4o-mini vault-agent acp
  vault-agent acp --base-url http://localhost:11434/v1 --model llama3.1   # Ollama`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkRunFlags(cmd, run); err != nil {
				return err
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			run.Planner = &planner
			if allowEdits {
				run.AllowEdits = &allowEdits
			}
			vaultSettings := mf.settings()
			vf.settings(&vaultSettings)
			model, _, err := mf.build(cmd, vaultSettings, log)
			if err != nil {
				return err
			}
			backend := acp.NewBackend(service.Options{
				Index: vf.index, Settings: vaultSettings, Model: model, Logger: log,
				Watch: true, Agent: true, Sessions: true,
			})
			return acp.Serve(cmd.Context(), acp.Config{
				Backend: backend, Defaults: run, Logger: log, Version: version,
			}, os.Stdin, os.Stdout)
		},
	}
	mf.add(cmd)
	addEmbedFlags(cmd, &vf.embedModel, &vf.embedBaseURL)
	cmd.Flags().StringVar(&vf.index, "index", "", "index folder (default: per-vault folder in the user cache dir); serves one vault only")
	cmd.Flags().StringSliceVar(&vf.excludes, "exclude", nil, "glob of vault paths to skip, e.g. 'Archive/**' (repeatable)")
	cmd.Flags().BoolVar(&vf.noObsidian, "no-obsidian-excludes", false, "index notes that Obsidian's \"Excluded files\" setting (.obsidian/app.json) hides")
	cmd.Flags().StringVar(&run.Mode, "mode", agent.ModeReact, "initial session mode: react, roa (reason-act-observe), par (plan-act-reflect) or staged")
	cmd.Flags().BoolVar(&planner, "planner", true, "start sessions with the write_todos planner on (shown as the editor's plan)")
	cmd.Flags().IntVar(&run.MaxIterations, "max-iterations", 10, "initial maximum agent iterations per turn (1-50)")
	cmd.Flags().DurationVar(&run.Timeout, "timeout", 5*time.Minute, "maximum time for one prompt turn")
	cmd.Flags().BoolVar(&allowEdits, "allow-edits", false, "let the agent propose edits; each is asked with session/request_permission and applied only if allowed")
	return cmd
}
