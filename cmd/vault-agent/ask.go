package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/reasoning"
	"github.com/vault-agent/vault-agent/service"
)

// modelFlags select and configure the model.
type modelFlags struct {
	provider, model, baseURL, script string
}

func (f *modelFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.provider, "provider", "", "model provider: offline, openai or scripted (default: openai when OPENAI_API_KEY or --base-url is set, else offline)")
	cmd.Flags().StringVar(&f.model, "model", "", "model name for the openai provider, e.g. gpt-4o-mini or llama3.1 (default $OPENAI_MODEL, else the first model a --base-url server lists)")
	cmd.Flags().StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (default $OPENAI_BASE_URL)")
	cmd.Flags().StringVar(&f.script, "script", "", "fixture file of model turns for --provider scripted")
}

// settings are the model settings of the flags.
func (f *modelFlags) settings() service.Settings {
	return service.Settings{Provider: f.provider, Model: f.model, BaseURL: f.baseURL, Script: f.script}
}

// build builds, once, the model that s (the model flags, over the
// environment) chooses, for a command that serves several vaults with it
// or describes it before a vault is open; it also says whether that is the
// offline model. Settings or a model that cannot be used are usage errors.
func (f *modelFlags) build(cmd *cobra.Command, s service.Settings, log *slog.Logger) (llm.Model, bool, error) {
	if err := s.Validate(""); err != nil {
		return nil, false, usageError(cmd, "%v", err)
	}
	env := service.ProcessEnv()
	m, err := service.NewModel(cmd.Context(), s, env, log)
	if err != nil {
		return nil, false, usageError(cmd, "%v", err)
	}
	return m, service.ProviderOf(s, env) == service.ProviderOffline, nil
}

func newAskCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var mf modelFlags
	var run service.Settings // the run flags
	var planner, asJSON, quiet, allowEdits, yes bool
	cmd := &cobra.Command{
		Use:   "ask --vault DIR [flags] QUESTION",
		Short: "Ask the agent a question about your notes",
		Long: `Ask the agent a question about your notes. It searches the vault, reads the most relevant notes
and answers with [[note]] citations. Reasoning steps are printed to stderr as they happen, the
answer to stdout. With no API key the offline extractive model answers by quoting your notes.`,
		Example: `  vault-agent ask --vault testdata/vault "how do I keep a sourdough starter alive?"
  vault-agent ask --vault ~/Notes --planner "compare what I wrote about Postgres and SQLite"
  OPENAI_API_KEY=... vault-agent ask --vault ~/Notes --model gpt-4o-mini "what did I do last week?"
  vault-agent ask --vault ~/Notes --provider openai --base-url http://localhost:11434/v1 --model llama3.1 "..."
  vault-agent ask --vault ~/Notes --allow-edits --model gpt-4o-mini "add a summary section to my weekly review"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			question := strings.TrimSpace(strings.Join(args, " "))
			if question == "" {
				return usageError(cmd, "a question is required, e.g. vault-agent ask --vault DIR \"what did I decide about X?\"")
			}
			if err := checkRunFlags(cmd, run); err != nil {
				return err
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			run.Planner = &planner
			var approver service.Approver
			if allowEdits {
				run.AllowEdits = &allowEdits
				approver = newTerminalApprover(os.Stdin, os.Stderr,
					term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())), yes)
			} else if yes {
				return usageError(cmd, "--yes applies edits without asking; it needs --allow-edits")
			}
			svc, err := vf.open(cmd, log, service.Options{Settings: mf.settings().Merge(run), Agent: true}, true)
			if err != nil {
				return err
			}
			defer svc.Close()

			out := cmd.OutOrStdout()
			out, flush := answerWriter(out, !asJSON && colourOn(os.Stdout, os.LookupEnv))
			defer flush()
			var sink agent.Sink
			var obs *reasoning.Observer
			var mu sync.Mutex
			if asJSON {
				enc := json.NewEncoder(out)
				sink = agent.SinkFunc(func(ev agent.Event) {
					if ev.Transient() {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					_ = enc.Encode(map[string]any{"type": "event", "event": ev})
				})
			} else if quiet {
				sink = agent.SinkFunc(func(agent.Event) {})
			} else {
				lp := reasoning.NewLinePrinter(stepWriter(colourOn(os.Stderr, os.LookupEnv)))
				obs = reasoning.NewObserver(reasoning.Config{Planner: planner, OnStep: lp.Step, OnComplete: lp.Done})
				sink = obs
			}
			// On a terminal the answer streams as it is written; piped output
			// gets only the final answer, once.
			var streamed strings.Builder
			if !asJSON && !quiet && term.IsTerminal(int(os.Stdout.Fd())) {
				sink = agent.Tee(sink, agent.SinkFunc(func(ev agent.Event) {
					if p, ok := ev.Payload.(agent.TextPayload); ok && ev.EventType == agent.EventAnswerDelta {
						fmt.Fprint(out, p.Text)
						streamed.WriteString(p.Text)
					}
				}))
			}
			res, err := svc.Run(cmd.Context(), service.RunRequest{Message: question, Approver: approver}, sink)
			if err != nil {
				return err
			}
			if asJSON {
				mu.Lock()
				defer mu.Unlock()
				if err := json.NewEncoder(out).Encode(map[string]any{"type": "result", "result": res}); err != nil {
					return err
				}
			} else {
				printAnswer(out, streamed.String(), res.Answer)
			}
			switch res.StopReason {
			case agent.StopFinalAnswer, agent.StopAwaitUserInput:
				return nil
			case agent.StopError:
				return &exitError{code: 1, err: fmt.Errorf("the run failed: %s", res.Error)}
			default:
				return &exitError{code: 3, err: fmt.Errorf("the run ended early: %s", res.StopReason)}
			}
		},
	}
	vf.add(cmd)
	mf.add(cmd)
	cmd.Flags().StringVar(&run.Mode, "mode", agent.ModeReact, "agent loop: react, roa (reason-act-observe), par (plan-act-reflect) or staged")
	cmd.Flags().BoolVar(&planner, "planner", false, "enable the write_todos planner (enableAgentPlannerV0)")
	cmd.Flags().IntVar(&run.MaxIterations, "max-iterations", 10, "maximum agent iterations (1-50)")
	cmd.Flags().DurationVar(&run.Timeout, "timeout", 5*time.Minute, "maximum time for the whole run")
	cmd.Flags().StringVar(&run.Trace, "trace", "", "write the run's typed events to this JSONL file, outside the vault (replayable)")
	cmd.Flags().StringVar(&run.Policy, "policy", "", "stage policy file (JSON or YAML) for --mode staged")
	cmd.Flags().BoolVar(&allowEdits, "allow-edits", false, "let the agent propose edits (create, append, replace, set properties); each diff is shown and applied only if you answer y")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --allow-edits, apply every proposed edit without asking (needed to apply edits without a terminal)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print events and the final result as JSON lines on stdout")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the answer: no steps on stderr, no streaming")
	return cmd
}

// checkRunFlags checks --mode and --max-iterations, which ask, acp and mcp
// share.
func checkRunFlags(cmd *cobra.Command, run service.Settings) error {
	if run.MaxIterations < 1 || run.MaxIterations > 50 {
		return usageError(cmd, "--max-iterations must be between 1 and 50, got %d", run.MaxIterations)
	}
	if !slices.Contains(service.Modes, run.Mode) {
		return usageError(cmd, "--mode must be react, roa, par or staged, got %q", run.Mode)
	}
	return nil
}

// printAnswer ends the answer on stdout. When the answer was streamed and
// the final one is the same text, only the newline is missing; when the
// stream was partial or withdrawn, the final answer follows in full.
func printAnswer(w io.Writer, streamed, answer string) {
	answer = strings.TrimSpace(answer)
	switch {
	case streamed == "":
		fmt.Fprintln(w, answer)
	case strings.TrimSpace(streamed) == answer:
		fmt.Fprintln(w)
	default:
		fmt.Fprintf(w, "\n\n%s\n", answer)
	}
}
