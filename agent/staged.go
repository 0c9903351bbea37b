package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
)

// Outcomes of a stage attempt (StagePayload.Outcome).
const (
	StageOK        = "ok"
	StageRetry     = "retry"
	StageFallback  = "fallback"
	StageTerminate = "terminate"
)

// staged runs the stages of a policy in order. The
// policy is Config.PolicyPath, or the embedded default.
//
// A PlanAuthored event (plan.v1) records the stage sequence with each
// stage's guardrails. Each stage attempt is one iteration: StageStarted,
// then model calls whose system message holds [stage:NAME], the stage
// prompt and its output schema, offering only the stage's allowed tools (a
// call to another tool is refused with a tool error naming them), with at
// most max_turns tool turns. The stage's final text must contain a JSON
// object valid against the output schema; a violation (or token usage above
// token_budget, as reported by the provider) follows on_invalid: retry up
// to max_retries, then fallback_stage if set, else terminate (stop reason
// error). StageCompleted records the attempt, its output and its outcome;
// a fallback or termination also adds a ReflectionAdded with the reason.
// on_success picks the next stage. The final answer is the "answer" field
// of the last stage's output, or its text.
//
// Tool calls and results stay in the conversation across stages (a later
// stage sees what an earlier one read); the outputs of earlier stages are
// given in the system message.
func (r *runState) staged(runCtx, timeoutCtx context.Context, user string) *Result {
	pol, err := planner.LoadPolicy(r.cfg.PolicyPath, r.registry.Names())
	if err != nil {
		return r.finish(StopError, "", err)
	}
	r.messages = buildMessages("", r.history, user)
	r.readNamed(timeoutCtx)
	defer func() { r.gate, r.stepRef = nil, "" }()
	version := pol.PromptVersion()
	all := r.loopTools()

	r.planRefs = planner.PlanID(1)
	names := pol.StageNames()
	r.emit(EventPlanAuthored, PlanPayload{Revision: 1, Plan: pol.Outline(), Summary: truncate.FirstLine("Stages: "+strings.Join(names, " → "), 200)},
		References{PlanID: r.planRefs, PromptVersion: version, SectionKey: "planning"})

	var done []stageResult
	idx, attempt := 0, 1
	var rejected *stageResult
	for {
		if runCtx.Err() != nil {
			return r.finish(stopReasonOf(runCtx), "", nil)
		}
		if r.iteration >= r.cfg.MaxIterations {
			return r.finish(StopMaxIterations, "", nil)
		}
		st := &pol.Stages[idx]
		r.iteration++
		r.stepRef = st.Name
		refs := References{PlanID: r.planRefs, StepID: st.Name, PromptVersion: version, SectionKey: "planning", Namespace: "stage:" + st.Name}
		r.emit(EventStageStarted, StagePayload{Stage: st.Name, Attempt: attempt}, refs)

		res, end := r.stageAttempt(runCtx, timeoutCtx, pol, idx, attempt, rejected, done, all)
		if end != nil {
			return end
		}
		if res.err == nil {
			r.emit(EventStageCompleted, StagePayload{Stage: st.Name, Attempt: attempt, Output: res.output, Outcome: StageOK}, refs)
			done = append(done, res)
			rejected = nil
			attempt = 1
			switch next := st.Transitions.OnSuccess; next {
			case planner.OnSuccessTerminate:
				return r.finish(StopFinalAnswer, res.answer(), nil)
			case planner.OnSuccessNext:
				if idx+1 == len(pol.Stages) {
					return r.finish(StopFinalAnswer, res.answer(), nil)
				}
				idx++
			default:
				idx = pol.StageIndex(next)
			}
			continue
		}

		// An invalid output or a guardrail violation.
		t := st.Transitions
		completed := StagePayload{Stage: st.Name, Attempt: attempt, Output: res.output, Error: res.err.Error()}
		switch {
		case t.OnInvalid == planner.OnInvalidRetry && attempt <= t.MaxRetries:
			completed.Outcome = StageRetry
			r.emit(EventStageCompleted, completed, refs)
			attempt++
			rejected = &res
		case t.OnInvalid != planner.OnInvalidTerminate && t.FallbackStage != "":
			completed.Outcome = StageFallback
			r.emit(EventStageCompleted, completed, refs)
			r.emit(EventReflectionAdded, TextPayload{
				Text:    fmt.Sprintf("Stage %s failed after %d attempt(s) (%v); falling back to %s.", st.Name, attempt, res.err, t.FallbackStage),
				Control: map[string]any{"stage": st.Name, "outcome": StageFallback, "next_stage": t.FallbackStage},
			}, References{PlanID: r.planRefs, StepID: st.Name, PromptVersion: version, SectionKey: "reflection"})
			idx, attempt, rejected = pol.StageIndex(t.FallbackStage), 1, nil
		default:
			completed.Outcome = StageTerminate
			r.emit(EventStageCompleted, completed, refs)
			r.emit(EventReflectionAdded, TextPayload{
				Text:    fmt.Sprintf("Stage %s failed after %d attempt(s) (%v); terminating.", st.Name, attempt, res.err),
				Control: map[string]any{"stage": st.Name, "outcome": StageTerminate},
			}, References{PlanID: r.planRefs, StepID: st.Name, PromptVersion: version, SectionKey: "reflection"})
			return r.finish(StopError, "", fmt.Errorf("stage %s failed after %d attempt(s): %w", st.Name, attempt, res.err))
		}
	}
}

// stageResult is the outcome of one stage attempt.
type stageResult struct {
	stage  string
	text   string
	output map[string]any
	err    error // invalid output or guardrail violation
}

// answer is the final answer when this stage ends the run.
func (s stageResult) answer() string {
	if a, ok := s.output["answer"].(string); ok && strings.TrimSpace(a) != "" {
		return strings.TrimSpace(a)
	}
	return strings.TrimSpace(s.text)
}

// stageAttempt runs one attempt of stage idx. A non-nil *Result ends the
// run (stop, timeout, model failure).
func (r *runState) stageAttempt(runCtx, timeoutCtx context.Context, pol *planner.Policy, idx, attempt int, rejected *stageResult, done []stageResult, all []llm.ToolDef) (stageResult, *Result) {
	st := &pol.Stages[idx]
	g := st.Guardrails
	res := stageResult{stage: st.Name}
	allowed := pickDefs(all, g.AllowedTools)
	turns, used := 0, 0
	r.gate = &toolGate{
		allow: func(name string) bool { return slices.Contains(g.AllowedTools, name) && turns < g.MaxTurns },
		refuse: func(name string) error {
			if slices.Contains(g.AllowedTools, name) {
				return toolErrorf("stage %q has used its %d tool turn(s); reply with the stage's JSON output now", st.Name, g.MaxTurns)
			}
			list := strings.Join(g.AllowedTools, ", ")
			if list == "" {
				list = "(none)"
			}
			return toolErrorf("tool %q is not allowed in stage %q; allowed tools: %s", name, st.Name, list)
		},
	}
	defer func() { r.gate = nil }()
	refs := References{PlanID: r.planRefs, StepID: st.Name, PromptVersion: pol.PromptVersion(), SectionKey: "action", Namespace: "stage:" + st.Name}
	system := stagePrompt(r.preamble(stagedMode), pol, idx, attempt, rejected, done)
	for calls := 0; ; calls++ {
		if runCtx.Err() != nil {
			return res, r.finish(stopReasonOf(runCtx), "", nil)
		}
		offer := allowed
		if turns >= g.MaxTurns {
			offer = nil
		}
		maxTokens := 0
		if g.TokenBudget > 0 {
			maxTokens = max(g.TokenBudget-used, 1)
		}
		r.withSystem(system)
		resp, err := r.modelCall(runCtx, callSpec{phase: "stage:" + st.Name, tools: offer, maxTokens: maxTokens, refs: refs})
		if err != nil {
			if runCtx.Err() != nil {
				return res, r.finish(stopReasonOf(runCtx), "", nil)
			}
			return res, r.finish(StopError, "", fmt.Errorf("stage %s: model call failed: %w", st.Name, err))
		}
		used += resp.Usage.CompletionTokens
		if text := strings.TrimSpace(resp.Content); text != "" {
			r.lastText = text
		}
		if g.TokenBudget > 0 && used > g.TokenBudget {
			res.text = resp.Content
			res.err = fmt.Errorf("guardrail violation: the stage used %d completion tokens, over its token_budget of %d", used, g.TokenBudget)
			return res, nil
		}
		if len(resp.ToolCalls) > 0 {
			if calls > g.MaxTurns {
				res.text = resp.Content
				res.err = fmt.Errorf("guardrail violation: the stage kept calling tools after its %d tool turn(s)", g.MaxTurns)
				return res, nil
			}
			r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
			r.runTools(timeoutCtx, resp.ToolCalls)
			turns++
			if r.endReason != "" {
				return res, r.finish(r.endReason, "", nil)
			}
			continue
		}
		res.text = resp.Content
		res.output, res.err = stageOutput(st, resp.Content)
		return res, nil
	}
}

// stageOutput extracts the JSON object of a stage's reply and validates it
// against the stage's output schema.
func stageOutput(st *planner.Stage, text string) (map[string]any, error) {
	raw, _, ok := llm.JSONObject(text)
	if !ok {
		return nil, errors.New("the output holds no JSON object")
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("the output is not a JSON object: %v", err)
	}
	if err := st.Validate(out); err != nil {
		return out, fmt.Errorf("the output does not match the stage's output_schema: %v", err)
	}
	return out, nil
}

const stagedMode = "You work in stages; do only the current stage's job."

// stagePrompt is the system message of a stage attempt. The output schema
// comes before any other JSON (the offline model takes the first schema it
// finds).
func stagePrompt(preamble string, pol *planner.Policy, idx, attempt int, rejected *stageResult, done []stageResult) string {
	st := &pol.Stages[idx]
	var b strings.Builder
	b.WriteString(preamble)
	fmt.Fprintf(&b, "\n\n%s Stage %d of %d (%s).\n", StageTag(st.Name), idx+1, len(pol.Stages), strings.Join(pol.StageNames(), " → "))
	b.WriteString(strings.TrimSpace(st.Prompt))
	b.WriteString("\n\nEnd the stage by replying with only a JSON object matching this schema:\n")
	b.Write(st.OutputSchema)
	b.WriteString("\n\n")
	if len(st.Guardrails.AllowedTools) > 0 {
		fmt.Fprintf(&b, "Tools allowed in this stage: %s (at most %d tool turn(s)).\n", strings.Join(st.Guardrails.AllowedTools, ", "), st.Guardrails.MaxTurns)
	} else {
		b.WriteString("No tools are allowed in this stage.\n")
	}
	if st.Guardrails.TokenBudget > 0 {
		fmt.Fprintf(&b, "Token budget: %d completion tokens.\n", st.Guardrails.TokenBudget)
	}
	if rejected != nil && rejected.err != nil {
		fmt.Fprintf(&b, "\nThis is attempt %d. Your previous output was rejected: %v\nPrevious output: %s\n",
			attempt, rejected.err, truncate.FirstLine(strings.ReplaceAll(rejected.text, "\n", " "), 1500))
	}
	if len(done) > 0 {
		b.WriteString("\nOutputs of the earlier stages:\n")
		for _, d := range done {
			out, _ := json.Marshal(d.output)
			fmt.Fprintf(&b, "- %s: %s\n", d.stage, truncate.FirstLine(string(out), 3000))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
