package agent

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

// ROAPromptVersion is the version of the embedded roa prompt templates
// (prompts/*.md). Change it whenever a template changes. Runs that use a
// user override from Config.PromptDir report ROAPromptVersion+"+user".
const ROAPromptVersion = "roa-1.1.0"

//go:embed prompts/*.md
var promptFS embed.FS

// Phases of the roa loop, as recorded in ModelResponded events.
const (
	phaseReason  = "reason"
	phaseAct     = "act"
	phaseObserve = "observe"
)

// roaPhases lists each phase's template file name (embedded under prompts/
// and overridable in Config.PromptDir) and the tag its system message must
// carry: the offline model recognises the phase by it.
var roaPhases = []struct{ phase, file, tag string }{
	{phaseReason, "agent_reason_prompt.md", TagReason},
	{phaseAct, "agent_act_prompt.md", TagAct},
	{phaseObserve, "agent_observe_prompt.md", TagObserve},
}

// PromptData is what the roa prompt templates see (text/template syntax).
// Every field is available in every template; fields that do not apply to
// a phase are empty.
type PromptData struct {
	// Goal is the user's request.
	Goal string
	// Step is the 1-based step (iteration) number, MaxSteps its limit.
	Step, MaxSteps int
	// Plan is the reason phase's plan for this step (act and observe).
	Plan string
	// LastObservation is the previous step's observation (reason).
	LastObservation string
	// ToolSummaries describes this step's tool calls and results (observe).
	ToolSummaries string
	// Tools lists the tools offered in the act phase, one "- name: what it
	// does" line each.
	Tools string
	// Access says what the agent may do with the vault: only search and
	// read it, or also propose edits, each written only if the person
	// approves it.
	Access string
}

// roaPrompts are the parsed templates of one run.
type roaPrompts struct {
	byPhase map[string]*template.Template
	version string
}

// embeddedPrompts parses the embedded templates once; they are known to be
// valid (TestEmbeddedPromptsCarryTheirTags).
var embeddedPrompts = sync.OnceValues(func() (*roaPrompts, error) { return loadROAPrompts("") })

// CheckPromptDir reports whether the roa prompt overrides in dir parse and
// render. A host can call it when settings change, before any run; runs
// check again at their start.
func CheckPromptDir(dir string) error {
	_, err := loadROAPrompts(dir)
	return err
}

// loadROAPrompts parses the roa templates: a file of dir ("" for none)
// overrides the embedded template of the same name; a missing file falls back
// to it. A template that does not parse or fails to render sample data is an
// error naming the file.
func loadROAPrompts(dir string) (*roaPrompts, error) {
	p := &roaPrompts{byPhase: map[string]*template.Template{}, version: ROAPromptVersion}
	if dir != "" {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("prompt folder: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("prompt folder %s is not a folder", dir)
		}
	}
	for _, ph := range roaPhases {
		src, err := fs.ReadFile(promptFS, "prompts/"+ph.file)
		if err != nil {
			return nil, fmt.Errorf("embedded prompt %s: %w", ph.file, err)
		}
		name := "embedded " + ph.file
		if dir != "" {
			path := filepath.Join(dir, ph.file)
			user, err := os.ReadFile(path)
			switch {
			case err == nil:
				src, name = user, path
				p.version = ROAPromptVersion + "+user"
			case !errors.Is(err, fs.ErrNotExist):
				return nil, fmt.Errorf("prompt template: %w", err)
			}
		}
		t, err := template.New(ph.file).Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("prompt template %s: %w", name, err)
		}
		// Unknown fields ({{.Nope}}) only fail when executed: try it now, so
		// a broken override fails at the start of the run, not mid-way.
		sample := PromptData{Goal: "g", Step: 1, MaxSteps: 1, Plan: "p", LastObservation: "o", ToolSummaries: "s", Tools: "- t: d", Access: readOnlyAccess}
		if err := t.Execute(io.Discard, sample); err != nil {
			return nil, fmt.Errorf("prompt template %s: %w", name, err)
		}
		p.byPhase[ph.phase] = t
	}
	return p, nil
}

// render executes the template of phase and makes sure the result carries
// the phase tag (a user override may leave it out).
func (p *roaPrompts) render(phase string, data PromptData) (string, error) {
	var b bytes.Buffer
	if err := p.byPhase[phase].Execute(&b, data); err != nil {
		return "", fmt.Errorf("render %s prompt: %w", phase, err)
	}
	out := strings.TrimSpace(b.String())
	for _, ph := range roaPhases {
		if ph.phase == phase && !strings.Contains(out, ph.tag) {
			out = ph.tag + "\n" + out
		}
	}
	return out, nil
}

// roa is the strict reason -> act -> observe loop. Each step is
// one iteration of three model calls:
//
//   - Reason: a plain call (no tools) with the reason template; its text is
//     emitted as ReasonEmitted with the parsed control block {plan,
//     tools_to_consider, finish}.
//   - Act: a tool-calling call with the act template; its tool calls run
//     through runTools, so tool events flow as in react. When the reason
//     control block says finish:true, Act is skipped and Observe is told so:
//     the observe phase writes the final answer, since only its control
//     block carries one.
//   - Observe: a plain call with the observe template and a summary of this
//     step's tool results; emitted as ObserveEmitted with {observation,
//     should_continue, final_answer}. should_continue:false (or a
//     final_answer without should_continue) ends the run with stop reason
//     final_answer and the final_answer (or else the observation) as the
//     answer.
//
// Malformed or missing control JSON is treated as text: the loop goes on.
// The stop request is checked at every phase boundary; a model call in
// flight is cancelled by it, a tool in flight finishes first.
//
// The conversation the model sees in every phase is the phase's system
// message, the user's message, and the tool calls and results of all
// steps so far; reason and observe texts reach later phases through the
// templates (Plan, LastObservation), never as assistant messages, so the
// conversation always ends with a user or tool message.
func (r *runState) roa(runCtx, timeoutCtx context.Context, user string) *Result {
	prompts, err := embeddedPrompts()
	if r.cfg.PromptDir != "" {
		prompts, err = loadROAPrompts(r.cfg.PromptDir)
	}
	if err != nil {
		return r.finish(StopError, "", err)
	}
	r.promptVersion = prompts.version
	r.messages = buildMessages("", r.history, user)
	r.readNamed(timeoutCtx)
	tools := r.toolDefs()
	toolList := describeTools(tools)
	var lastObservation string

	stopped := func() *Result { return r.ended(runCtx) }
	failed := func(phase string, err error) *Result { return r.failed(runCtx, phase, err) }

	for r.iteration < r.cfg.MaxIterations {
		if res := stopped(); res != nil {
			return res
		}
		r.iteration++
		r.emit(EventTurnStarted, TurnStartedPayload{Iteration: r.iteration}, References{})
		data := PromptData{
			Goal: r.goal, Step: r.iteration, MaxSteps: r.cfg.MaxIterations,
			LastObservation: lastObservation, Tools: toolList, Access: r.access(),
		}

		// Reason.
		resp, err := r.phaseCall(runCtx, prompts, phaseReason, data)
		if err != nil {
			return failed(phaseReason, err)
		}
		prose, control := llm.TrailingJSONObject(resp.Content)
		r.emit(EventReasonEmitted, TextPayload{Text: phaseText(prose, control, "plan", resp.Content), Control: control},
			References{PromptVersion: prompts.version, SectionKey: "planning"})
		data.Plan = controlString(control, "plan")
		if data.Plan == "" {
			data.Plan = truncate.Runes(prose, 1000)
		}
		finishNow, _ := controlBool(control, "finish")
		if res := stopped(); res != nil {
			return res
		}

		// Act.
		if finishNow {
			data.ToolSummaries = "No tools were run in this step: the reason phase judged that the goal can be answered from what was already gathered."
		} else {
			system, err := prompts.render(phaseAct, data)
			if err != nil {
				return r.finish(StopError, "", err)
			}
			if r.plan != nil {
				system += "\n\n" + planner.PromptGuidance
			}
			r.setSystem(system)
			resp, err := r.callModel(runCtx, phaseAct, tools)
			if err != nil {
				return failed(phaseAct, err)
			}
			text := strings.TrimSpace(resp.Content)
			if text != "" {
				r.lastText = text
			}
			if len(resp.ToolCalls) == 0 {
				data.ToolSummaries = "No tools were called in this step."
				if text != "" {
					data.ToolSummaries += " The act phase replied:\n" + truncate.Runes(text, 2000)
				}
			} else {
				r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
				start := len(r.messages)
				r.runTools(timeoutCtx, resp.ToolCalls)
				data.ToolSummaries = summarizeToolMessages(r.messages[start:])
				if r.endReason != "" {
					return r.finish(r.endReason, "", nil)
				}
				if r.reviewPending {
					return r.finish(StopAwaitUserInput, "", nil)
				}
			}
		}
		if res := stopped(); res != nil {
			return res
		}

		// Observe.
		resp, err = r.phaseCall(runCtx, prompts, phaseObserve, data)
		if err != nil {
			return failed(phaseObserve, err)
		}
		prose, control = llm.TrailingJSONObject(resp.Content)
		r.emit(EventObserveEmitted, TextPayload{Text: phaseText(prose, control, "observation", resp.Content), Control: control},
			References{PromptVersion: prompts.version, SectionKey: "reflection"})
		observation := controlString(control, "observation")
		if observation == "" {
			observation = prose
		}
		if observation != "" {
			lastObservation = truncate.Runes(observation, 2000)
			r.lastText = observation
		}
		if observeEnds(control) {
			answer := controlString(control, "final_answer")
			if answer == "" {
				answer = observation
			}
			return r.finish(StopFinalAnswer, answer, nil)
		}
	}
	return r.finish(StopMaxIterations, "", nil)
}

// observeEnds reads the observe control block: should_continue false ends
// the run; without should_continue, a non-empty final_answer does.
func observeEnds(control map[string]any) bool {
	if cont, ok := controlBool(control, "should_continue"); ok {
		return !cont
	}
	return controlString(control, "final_answer") != ""
}

// setSystem replaces the system message. It builds a new slice so that a
// request already handed to a model keeps the messages it was sent.
func (r *runState) setSystem(content string) {
	msgs := make([]llm.Message, 0, len(r.messages)+2)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: content})
	r.messages = append(msgs, r.messages[1:]...)
}

// phaseCall makes the plain (tool-less) call of the reason or observe phase
// and records it as ModelResponded. Unlike callModel it streams nothing:
// reason and observe texts are not the answer, and arrive whole in their
// ReasonEmitted and ObserveEmitted events.
func (r *runState) phaseCall(ctx context.Context, prompts *roaPrompts, phase string, data PromptData) (*llm.Response, error) {
	system, err := prompts.render(phase, data)
	if err != nil {
		return nil, err
	}
	r.setSystem(system)
	section := "planning"
	if phase == phaseObserve {
		section = "reflection"
	}
	return r.modelCall(ctx, callSpec{phase: phase, refs: References{PromptVersion: prompts.version, SectionKey: section}})
}

// describeTools renders the Tools field of the templates.
func describeTools(defs []llm.ToolDef) string {
	if len(defs) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, d := range defs {
		fmt.Fprintf(&b, "- %s: %s\n", d.Name, firstSentence(d.Description, 160))
	}
	return strings.TrimRight(b.String(), "\n")
}

// summarizeToolMessages renders the ToolSummaries field of the observe
// template from one step's tool messages.
func summarizeToolMessages(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Role != llm.RoleTool {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "### %s\n%s", m.Name, truncate.Runes(m.Content, 1500))
	}
	if b.Len() == 0 {
		return "No tool results."
	}
	return b.String()
}

// phaseText is the text of a ReasonEmitted or ObserveEmitted event: the
// prose around the control block, else the control block's main field,
// else the raw model text.
func phaseText(prose string, control map[string]any, key, raw string) string {
	if prose != "" {
		return prose
	}
	if s := controlString(control, key); s != "" {
		return s
	}
	return strings.TrimSpace(raw)
}

// controlString reads a string field of a control block; a list of strings
// is joined with "; ".
func controlString(control map[string]any, key string) string {
	switch v := control[key].(type) {
	case string:
		return strings.TrimSpace(v)
	case []any:
		var parts []string
		for _, x := range v {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, strings.TrimSpace(s))
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// controlBool reads a boolean field of a control block, accepting the
// strings "true" and "false" too; ok is false when it is absent or neither.
func controlBool(control map[string]any, key string) (value, ok bool) {
	switch v := control[key].(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes":
			return true, true
		case "false", "no":
			return false, true
		}
	}
	return false, false
}
