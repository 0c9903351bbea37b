// Command vault-agent is a stdio JSON-RPC sidecar and command-line tool for
// Obsidian-style markdown vaults: it indexes a vault, searches it, and runs
// an agent that answers questions about the notes.
//
// This file and its siblings only parse flags and wire packages together.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// No heap profile is ever taken of vault-agent, so its allocations are not
// sampled: the runtime's profiling records, one per sampled call stack,
// held 1.6 MB in a server that had answered 1,000 searches of a
// 100,000-note vault. Set in init, before main allocates, as the runtime
// asks (its package docs: "as early as possible").
func init() { runtime.MemProfileRate = 0 }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
			err = ee.err
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "vault-agent: %v\n", err)
		}
		os.Exit(code)
	}
}

type globalFlags struct {
	logLevel string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "vault-agent",
		Short: "Search and ask questions about a markdown vault; serve editors over stdio JSON-RPC",
		Long: `vault-agent indexes an Obsidian-style markdown vault with bleve, keeps the index fresh,
searches it, and runs an agent that answers questions about your notes with citations.

The agent answers with an offline extractive model unless a model is named: --model,
VAULT_AGENT_MODEL, OPENAI_MODEL or model in the config file (an API key alone chooses nothing);
OPENAI_API_KEY and --base-url/OPENAI_BASE_URL (Ollama, llama.cpp, vLLM, LM Studio) say how to reach
it. 'vault-agent config' shows the settings in effect and where each comes from; --vault defaults
to the current folder when it is a vault.
The vault is never modified, unless you allow the agent to propose edits (--allow-edits) and
approve each one; 'vault-agent undo' reverts them. The index lives in your user cache directory unless --index is given.`,
		Example: `  vault-agent ask --vault ~/Notes "what did I decide about the database migration?"
  vault-agent search --vault ~/Notes 'tag:#recipe "sourdough" -rye'
  vault-agent index --vault ~/Notes
  vault-agent config           # the settings in effect, from flags, environment and config file
  vault-agent serve            # for editor plugins, JSON-RPC over stdio
  vault-agent acp              # for ACP editors (Zed, Obsidian Agent Client)
  vault-agent mcp --vault ~/Notes   # for MCP clients: Claude Desktop, Claude Code, Cursor, VS Code`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate("vault-agent {{.Version}}\n")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	root.AddCommand(
		newIndexCmd(g), newSearchCmd(g), newExplainCmd(g), newRelatedCmd(g), newWatchCmd(g), newAskCmd(g), newServeCmd(g), newACPCmd(g), newMCPCmd(g), newReplayCmd(g), newUndoCmd(g), newConfigCmd(g), newStatusCmd(g),
		&cobra.Command{
			Use:   "version",
			Short: "Print the version",
			Args:  cobra.NoArgs,
			Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "vault-agent", version) },
		},
	)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{code: 2, err: fmt.Errorf("%v\nRun '%s --help' for usage", err, cmd.CommandPath())}
	})
	return root
}

// logger builds the stderr logger. Nothing is ever logged to stdout.
func (g *globalFlags) logger() (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(strings.ToLower(g.logLevel))); err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// usageError is a bad invocation: exit status 2.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf("%s\nRun '%s --help' for usage", fmt.Sprintf(format, args...), cmd.CommandPath())}
}
