package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/reasoning"
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

func (f *modelFlags) build(log any) (llm.Model, error) {
	return llm.New(llm.Config{Provider: f.provider, Model: f.model, BaseURL: f.baseURL, ScriptPath: f.script})
}

func newAskCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var mf modelFlags
	var cfg agent.Config
	var asJSON bool
	var trace string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ask --vault DIR [flags] QUESTION",
		Short: "Ask the agent a question about your notes",
		Long: `Ask the agent a question about your notes. It searches the vault, reads the most relevant notes
and answers with [[note]] citations. Reasoning steps are printed to stderr as they happen, the
answer to stdout. With no API key the offline extractive model answers by quoting your notes.`,
		Example: `  vault-agent ask --vault testdata/vault "how do I keep a sourdough starter alive?"
  vault-agent ask --vault ~/Notes --planner "compare what I wrote about Postgres and SQLite"
  OPENAI_API_KEY=... vault-agent ask --vault ~/Notes --model gpt-4o-mini "what did I do last week?"
  vault-agent ask --vault ~/Notes --provider openai --base-url http://localhost:11434/v1 --model llama3.1 "..."`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			question := strings.TrimSpace(strings.Join(args, " "))
			if question == "" {
				return usageError(cmd, "a question is required, e.g. vault-agent ask --vault DIR \"what did I decide about X?\"")
			}
			if err := checkRunFlags(cmd, cfg); err != nil {
				return err
			}
			cfg.Timeout = timeout
			log, err := g.logger()
			if err != nil {
				return err
			}
			model, err := mf.build(log)
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			ix, _, err := vf.openIndex(cmd.Context(), cmd, log, false, true)
			if err != nil {
				return err
			}
			defer ix.Close()
			ag, err := agent.New(agent.Deps{Model: model, Index: ix, Logger: log})
			if err != nil {
				return err
			}
			defer ag.Close()

			out := cmd.OutOrStdout()
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
			} else {
				lp := reasoning.NewLinePrinter(os.Stderr)
				obs = reasoning.NewObserver(reasoning.Config{Planner: cfg.Planner, OnStep: lp.Step, OnComplete: lp.Done})
				sink = obs
			}
			// On a terminal the answer streams as it is written; piped output
			// gets only the final answer, once.
			var streamed strings.Builder
			if !asJSON && term.IsTerminal(int(os.Stdout.Fd())) {
				sink = agent.Tee(sink, agent.SinkFunc(func(ev agent.Event) {
					if p, ok := ev.Payload.(agent.TextPayload); ok && ev.EventType == agent.EventAnswerDelta {
						fmt.Fprint(out, p.Text)
						streamed.WriteString(p.Text)
					}
				}))
			}
			if trace != "" {
				tw, err := agent.CreateTrace(trace)
				if err != nil {
					return err
				}
				defer tw.Close()
				sink = agent.Tee(sink, tw)
			}
			res, err := ag.Run(cmd.Context(), agent.RunRequest{Message: question, Config: cfg}, sink)
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
	cmd.Flags().StringVar(&cfg.Mode, "mode", agent.ModeReact, "agent loop: react, roa (reason-act-observe), par (plan-act-reflect) or staged")
	cmd.Flags().BoolVar(&cfg.Planner, "planner", false, "enable the write_todos planner (enableAgentPlannerV0)")
	cmd.Flags().IntVar(&cfg.MaxIterations, "max-iterations", 10, "maximum agent iterations (1-50)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "maximum time for the whole run")
	cmd.Flags().StringVar(&trace, "trace", "", "write the run's typed events to this JSONL file (replayable)")
	cmd.Flags().StringVar(&cfg.PolicyPath, "policy", "", "stage policy file (JSON or YAML) for --mode staged")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print events and the final result as JSON lines on stdout")
	return cmd
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
