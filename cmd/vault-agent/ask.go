package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/reasoning"
	"github.com/vault-agent/vault-agent/service"
)

// modelFlags select and configure the model.
type modelFlags struct {
	provider, model, baseURL, script string
}

func (f *modelFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.provider, "provider", "", "model provider: offline, openai or scripted (default: openai when a model is named, else offline)")
	cmd.Flags().StringVar(&f.model, "model", "", "chat model, e.g. gpt-4o-mini or llama3.1; naming one turns the language model on (default $VAULT_AGENT_MODEL, $OPENAI_MODEL, model in the config file; none: the offline model)")
	cmd.Flags().StringVar(&f.baseURL, "base-url", "", "OpenAI-compatible endpoint of the model, e.g. http://localhost:11434/v1 (default $VAULT_AGENT_BASE_URL, $OPENAI_BASE_URL, base-url in the config file; none: OpenAI)")
	cmd.Flags().StringVar(&f.script, "script", "", "fixture file of model turns for --provider scripted")
}

// check refuses a provider flag that names no provider: a typo on the
// command line is said at once (the model itself is only built by a run).
func (f *modelFlags) check(cmd *cobra.Command) error {
	if err := f.settings().Validate(""); err != nil {
		return usageError(cmd, "--provider: %v", err)
	}
	return nil
}

// settings are the model settings of the flags, named by their flags.
func (f *modelFlags) settings() service.Settings {
	return service.Settings{Provider: f.provider, Model: f.model, BaseURL: f.baseURL, Script: f.script}.Named(service.FlagName)
}

// runFlags are the run flags ask, acp and mcp share: each counts only when
// given, so the environment and the config file fill in the others.
type runFlags struct {
	mode          string
	planner       bool
	maxIterations int
	timeout       time.Duration
}

// add adds the flags; planner is the front-end's default for --planner
// (below the environment and the config file).
func (f *runFlags) add(cmd *cobra.Command, modeHelp, plannerHelp, iterHelp, timeoutHelp string) {
	cmd.Flags().StringVar(&f.mode, "mode", agent.ModeReact, modeHelp)
	cmd.Flags().BoolVar(&f.planner, "planner", false, plannerHelp)
	cmd.Flags().IntVar(&f.maxIterations, "max-iterations", 10, iterHelp)
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, timeoutHelp)
}

// settings are the run flags given, named by their flags; a bad value is
// a usage error.
func (f *runFlags) settings(cmd *cobra.Command) (service.Settings, error) {
	var s service.Settings
	fl := cmd.Flags()
	if fl.Changed("mode") {
		if !slices.Contains(service.Modes, f.mode) {
			return s, usageError(cmd, "--mode must be react, roa, par or staged, got %q", f.mode)
		}
		s.Mode = f.mode
	}
	if fl.Changed("max-iterations") {
		if f.maxIterations < 1 || f.maxIterations > 50 {
			return s, usageError(cmd, "--max-iterations must be between 1 and 50, got %d", f.maxIterations)
		}
		s.MaxIterations = f.maxIterations
	}
	if fl.Changed("timeout") {
		if f.timeout <= 0 || f.timeout > 24*time.Hour {
			return s, usageError(cmd, "--timeout must be more than 0 and at most 24h, got %s", f.timeout)
		}
		s.Timeout = f.timeout
	}
	if fl.Changed("planner") {
		p := f.planner
		s.Planner = &p
	}
	return s.Named(service.FlagName), nil
}

// modelLine says which model answered and what chose it.
func modelLine(c service.ModelChoice, name string) string {
	if name == "" {
		name = c.Name()
	}
	return fmt.Sprintf("model: %s (%s)", name, c.Why())
}

func newAskCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var mf modelFlags
	var rf runFlags
	var run service.Settings // the run flags without a counterpart in the environment
	var asJSON, quiet, allowEdits, yes bool
	cmd := &cobra.Command{
		Use:   "ask [--vault DIR] [flags] QUESTION",
		Short: "Ask the agent a question about your notes",
		Long: `Ask the agent a question about your notes. It searches the vault, reads the most relevant notes
and answers with [[note]] citations. Reasoning steps are printed to stderr as they happen, the
answer to stdout (its markdown rendered when stdout is a terminal, as written otherwise), then
which model answered on stderr.

The offline extractive model answers, quoting your notes, unless a model is named: --model,
VAULT_AGENT_MODEL, OPENAI_MODEL or model in the config file (see 'vault-agent config'). An API
key alone chooses nothing.

Flags go before the question: from its first word on, every argument is the question's text,
dashes included. Quote the question when it holds characters the shell treats specially (? * #).`,
		Example: `  vault-agent ask --vault testdata/vault "how do I keep a sourdough starter alive?"
  vault-agent ask --vault ~/Notes --planner "compare what I wrote about Postgres and SQLite"
  OPENAI_API_KEY=... vault-agent ask --vault ~/Notes --model gpt-4o-mini "what did I do last week?"
  vault-agent ask --vault ~/Notes --base-url http://localhost:11434/v1 --model llama3.1 "..."
  vault-agent ask --vault ~/Notes --allow-edits --model gpt-4o-mini "add a summary section to my weekly review"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			question, err := queryText(cmd, args)
			if err != nil {
				return err
			}
			if question == "" {
				return usageError(cmd, "a question is required, e.g. vault-agent ask --vault DIR \"what did I decide about X?\"")
			}
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
			var approver service.Approver
			if allowEdits {
				run.AllowEdits = &allowEdits
				approver = newTerminalApprover(os.Stdin, os.Stderr,
					term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())), yes)
			} else if yes {
				return usageError(cmd, "--yes applies edits without asking; it needs --allow-edits")
			}
			if err := vf.resolveVault(cmd); err != nil {
				return err
			}
			settings := mf.settings().Merge(flags).Merge(run.Named(service.FlagName))
			// Said here, plainly, rather than as a log line while the vault
			// opens.
			env := service.ProcessEnv()
			if c := service.ChooseModel(env.Settings(vf.vault).Merge(settings), env); c.Notice != "" && service.TakeNotice(c.Notice) {
				fmt.Fprintln(os.Stderr, "vault-agent:", c.Notice)
			}
			svc, err := vf.open(cmd, log, service.Options{Settings: settings, Agent: true}, true)
			if err != nil {
				return err
			}
			defer svc.Close()
			choice := svc.ModelChoice(service.Settings{})
			planner := svc.Settings().RunConfig().Planner

			out := cmd.OutOrStdout()
			tty := term.IsTerminal(int(os.Stdout.Fd()))
			out, flush := answerWriter(out, !asJSON && tty && markdownOn(os.LookupEnv), markdownStyle(os.LookupEnv), termWidth(os.Stdout))
			defer flush()
			var sink agent.Sink
			var mu sync.Mutex
			// On a terminal the answer streams as it is written; piped output
			// gets only the final answer, once.
			stream := !asJSON && !quiet && tty
			lines := &terminalLines{out: out, err: stepWriter(colourOn(os.Stderr, os.LookupEnv)), flush: flush}
			if stream && term.IsTerminal(int(os.Stderr.Fd())) {
				// One screen: a step or "Thought for" on stderr starts
				// on a line of its own, after the answer streamed so far.
				lines.shared = true
			}
			var streamed strings.Builder
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
				sink = stepSink(lines, planner, stream, &streamed)
			}
			var answeredBy string // the model's name as the run started it
			sink = agent.Tee(sink, agent.SinkFunc(func(ev agent.Event) {
				if p, ok := ev.Payload.(agent.RunStartedPayload); ok {
					answeredBy = p.Model
				}
			}))
			res, err := svc.Run(cmd.Context(), service.RunRequest{Message: question, Approver: approver}, sink)
			if err != nil {
				return err
			}
			if asJSON {
				mu.Lock()
				defer mu.Unlock()
				if err := json.NewEncoder(out).Encode(map[string]any{"type": "result", "result": res,
					"model": map[string]any{"name": nameOr(answeredBy, choice.Name()), "chosenBy": choice.Why(), "offline": choice.Offline()}}); err != nil {
					return err
				}
			} else {
				printAnswer(lines.stdout(), streamed.String(), res.Answer, lines.endLine)
			}
			flush()
			if !quiet {
				fmt.Fprintln(lines.stderr(), modelLine(choice, answeredBy))
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
	cmd.Flags().SetInterspersed(false)
	vf.add(cmd)
	mf.add(cmd)
	rf.add(cmd, "agent loop: react, roa (reason-act-observe), par (plan-act-reflect) or staged (default react, or mode in the environment or config file)",
		"enable the write_todos planner (enableAgentPlannerV0; default $VAULT_AGENT_PLANNER, planner in the config file, else off)",
		"maximum agent iterations (1-50)", "maximum time for the whole run (at most 24h)")
	cmd.Flags().StringVar(&run.Trace, "trace", "", "append the run's typed events to this JSONL file, outside the vault (replayable; replay takes the last run)")
	cmd.Flags().StringVar(&run.Policy, "policy", "", "stage policy file (JSON or YAML) for --mode staged")
	cmd.Flags().BoolVar(&allowEdits, "allow-edits", false, "let the agent propose edits (create, append, replace, set properties); each diff is shown and applied only if you answer y")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --allow-edits, apply every proposed edit without asking (needed to apply edits without a terminal)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print events and the final result (with the model that answered) as JSON lines on stdout")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the answer: no steps or model line on stderr, no streaming")
	return cmd
}

// termWidth is the width to wrap the answer at: the terminal's, at most
// 100 columns.
func termWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return 80
	}
	return min(w, 100)
}

func nameOr(name, other string) string {
	if name != "" {
		return name
	}
	return other
}

// stepSink prints the run's steps and "Thought for" on stderr and, when
// stream, the answer as it is written on stdout, collected in streamed.
func stepSink(lines *terminalLines, planner, stream bool, streamed *strings.Builder) agent.Sink {
	lp := reasoning.NewLinePrinter(lines.stderr())
	// The answer is whole when the run completes: its last block is
	// rendered before "Thought for".
	done := func(elapsed int) {
		if lines.flush != nil {
			lines.flush()
		}
		lp.Done(elapsed)
	}
	var sink agent.Sink = reasoning.NewObserver(reasoning.Config{Planner: planner, OnStep: lp.Step, OnComplete: done})
	if stream {
		out := lines.stdout()
		sink = agent.Tee(sink, agent.SinkFunc(func(ev agent.Event) {
			if p, ok := ev.Payload.(agent.TextPayload); ok && ev.EventType == agent.EventAnswerDelta {
				fmt.Fprint(out, p.Text)
				streamed.WriteString(p.Text)
			}
		}))
	}
	return sink
}

// terminalLines writes the answer (stdout) and the steps (stderr). When
// both are one terminal (shared), what goes to stderr starts on a line of
// its own: a streamed answer is not left with "Thought for 0s" glued to
// its last line.
type terminalLines struct {
	out, err io.Writer
	shared   bool
	// flush writes what the answer's writer holds (a markdown block not
	// rendered yet); nil when it holds nothing.
	flush func()

	mu      sync.Mutex // guards midLine and orders the writes
	midLine bool       // stdout's last byte is not a newline
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (l *terminalLines) stdout() io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(b) > 0 {
			l.midLine = b[len(b)-1] != '\n'
		}
		return l.out.Write(b)
	})
}

func (l *terminalLines) stderr() io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.shared && l.midLine {
			l.midLine = false
			if _, err := l.out.Write([]byte{'\n'}); err != nil {
				return 0, err
			}
		}
		return l.err.Write(b)
	})
}

// endLine ends stdout's line unless it is already ended.
func (l *terminalLines) endLine() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.midLine {
		l.midLine = false
		_, _ = l.out.Write([]byte{'\n'})
	}
}

// printAnswer ends the answer on stdout. When the answer was streamed and
// the final one is the same text, only the end of its line may be
// missing; when the stream was partial or withdrawn, the final answer
// follows in full after a blank line.
func printAnswer(w io.Writer, streamed, answer string, endLine func()) {
	answer = strings.TrimSpace(answer)
	switch {
	case streamed == "":
		fmt.Fprintln(w, answer)
	case strings.TrimSpace(streamed) == answer:
		endLine()
	default:
		endLine()
		fmt.Fprintf(w, "\n%s\n", answer)
	}
}
