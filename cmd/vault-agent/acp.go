package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/vault-agent/vault-agent/acp"
	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/service"
)

func newACPCmd(g *globalFlags) *cobra.Command {
	var mf modelFlags
	var vf vaultFlags // no --vault: each session's cwd is its vault
	var rf runFlags
	var allowEdits bool
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Run as an Agent Client Protocol agent (Zed, Obsidian's Agent Client plugin, ...)",
		Long: `Run as an Agent Client Protocol (ACP v1) agent over stdio, for editors that host agents:
Zed, Obsidian's Agent Client plugin, JetBrains, Neovim and Emacs clients. The editor starts
'vault-agent acp' and talks JSON-RPC, one message per line; only protocol bytes go to stdout,
logs go to stderr. No --vault is needed: each session's working directory (cwd) is its vault,
indexed on first use into the per-vault index in your user cache dir (or --index, which then
serves that one vault), and closed when its last session closes. A session whose folder does
not look like a vault (no .obsidian folder and few notes) is warned in its first update.

The model is chosen as for 'ask': the offline model (no key, no network) unless a model is
named (--model, VAULT_AGENT_MODEL, OPENAI_MODEL or model in the config file); --base-url or
OPENAI_BASE_URL says where it is served. A model that cannot be reached fails that prompt turn
only. Sessions start in --mode with the planner --planner and --max-iterations (or mode and
planner from the environment and the config file); the editor can change them per session
(session modes and config options). The vault is never modified, unless --allow-edits lets the
agent propose edits: each one is a session/request_permission (allow once or reject) with its diff,
written through the editor's fs/write_text_file when it offers it; 'vault-agent undo' reverts them.`,
		Example: `  vault-agent acp                                   # offline model
  OPENAI_API_KEY=... OPENAI_MODEL=gpt-4o-mini vault-agent acp
  vault-agent acp --base-url http://localhost:11434/v1 --model llama3.1   # Ollama`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags, err := rf.settings(cmd)
			if err != nil {
				return err
			}
			if err := mf.check(cmd); err != nil {
				return err
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			releaseWhenIdle(cmd.Context(), log)
			vaultSettings := mf.settings()
			vf.settings(&vaultSettings)
			if allowEdits {
				flags.AllowEdits = &allowEdits
			}
			backend := acp.NewBackend(service.Options{
				Index: vf.index, Settings: vaultSettings, Logger: log,
				Watch: true, Agent: true, Sessions: true,
			})
			return acp.Serve(cmd.Context(), acp.Config{
				Backend: backend, Defaults: sessionDefaults(flags), Logger: log, Version: version, Home: service.ProcessEnv().Home,
			}, os.Stdin, stdout)
		},
	}
	mf.add(cmd)
	addEmbedFlags(cmd, &vf.embedModel, &vf.embedBaseURL)
	cmd.Flags().StringVar(&vf.index, "index", "", "index folder (default: per-vault folder in the user cache dir); serves one vault only")
	cmd.Flags().StringSliceVar(&vf.excludes, "exclude", nil, "glob of vault paths to skip, e.g. 'Archive/**' (repeatable)")
	cmd.Flags().BoolVar(&vf.noObsidian, "no-obsidian-excludes", false, "index notes that Obsidian's \"Excluded files\" setting (.obsidian/app.json) hides")
	rf.add(cmd, "initial session mode: react, roa (reason-act-observe), par (plan-act-reflect) or staged",
		"start sessions with the write_todos planner on (shown as the editor's plan; default on, or planner in the environment or config file)",
		"initial maximum agent iterations per turn (1-50)", "maximum time for one prompt turn (at most 24h)")
	cmd.Flags().Lookup("planner").DefValue = "true"
	cmd.Flags().BoolVar(&allowEdits, "allow-edits", false, "let the agent propose edits; each is asked with session/request_permission and applied only if allowed")
	return cmd
}

// sessionDefaults are the settings a new ACP session starts with: ACP's own
// defaults (the planner on), under the mode and planner of the environment
// and the config file's top level, under the flags given.
func sessionDefaults(flags service.Settings) service.Settings {
	on := true
	s := service.Settings{Mode: agent.ModeReact, MaxIterations: 10, Planner: &on}
	top := service.ProcessEnv().Settings("")
	s = s.Merge(service.Settings{Mode: top.Mode, Planner: top.Planner, Sources: top.Sources})
	return s.Merge(flags)
}
