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

// PARPromptVersion is the version of the par loop's prompts (prompt_version
// of its events). Change it whenever a par prompt changes.
const PARPromptVersion = "par-1.1.0"

// Phases of the par loop, as recorded in ModelResponded events.
const (
	parPhasePlan      = "plan"
	parPhaseAct       = "act"
	parPhaseReflect   = "reflect"
	parPhaseSynthesis = "synthesis"
)

// maxStepAttempts bounds how often one step is tried again after a
// reflection that judged it unsatisfied without revising the plan.
const maxStepAttempts = 2

// parseTypedPlan reads a typed plan from a model reply: a JSON object,
// bare or in a fenced block, optionally wrapped as {"plan": {...}}.
func parseTypedPlan(text string, known []string) (planner.TypedPlan, error) {
	raw, _, ok := llm.JSONObject(text)
	if !ok {
		return planner.TypedPlan{}, errors.New(`the reply holds no JSON object; answer with {"steps": [...], "exit_criteria": "..."}`)
	}
	var wrapper struct {
		Plan  json.RawMessage `json:"plan"`
		Steps json.RawMessage `json:"steps"`
	}
	_ = json.Unmarshal(raw, &wrapper)
	if wrapper.Steps == nil && len(wrapper.Plan) > 0 && wrapper.Plan[0] == '{' {
		raw = wrapper.Plan
	}
	return planner.DecodeTypedPlan(raw, known)
}

// planSummary is a one-line description of plan version for the reasoning
// block.
func planSummary(p planner.TypedPlan, version int) string {
	var parts []string
	for _, s := range p.Steps {
		parts = append(parts, firstSentence(s.Description, 60))
	}
	return truncate.FirstLine(fmt.Sprintf("Plan v%d: %s", version, strings.Join(parts, " → ")), 200)
}

// toolGate restricts the tools offered to and run for the model: the
// intended tools of a par step, or the allowed tools of a stage.
type toolGate struct {
	allow  func(name string) bool
	refuse func(name string) error
}

// withSystem replaces the system message, building a new slice so that a
// request already handed to a model keeps the messages it was sent.
func (r *runState) withSystem(content string) {
	msgs := make([]llm.Message, 0, len(r.messages)+2)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: content})
	if len(r.messages) > 0 && r.messages[0].Role == llm.RoleSystem {
		msgs = append(msgs, r.messages[1:]...)
	} else {
		msgs = append(msgs, r.messages...)
	}
	r.messages = msgs
}

// loopTools lists the tools the par and staged loops may use: those of the
// run, without the write_todos planner (the typed plan or the policy is the
// plan in these modes).
func (r *runState) loopTools() []llm.ToolDef {
	var out []llm.ToolDef
	for _, d := range r.registry.Defs(nil) {
		if planner.IsPlannerTool(d.Name) {
			continue
		}
		if d.Name == ToolRequestInput && !r.cfg.RequestInput {
			continue
		}
		if IsEditTool(d.Name) && !r.editsOffered() {
			continue
		}
		out = append(out, d)
	}
	return out
}

func defNames(defs []llm.ToolDef) []string {
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return names
}

func pickDefs(defs []llm.ToolDef, names []string) []llm.ToolDef {
	var out []llm.ToolDef
	for _, d := range defs {
		if slices.Contains(names, d.Name) {
			out = append(out, d)
		}
	}
	return out
}

// parStepNote is what the par loop remembers of a finished step attempt.
type parStepNote struct {
	step, status, text string
}

// par is the Plan → Act → Reflect loop:
//
//   - Plan: a plain call ([phase:plan]) authors a typed plan before any
//     tool call. It is validated; an invalid plan is sent back once with the
//     error, a second invalid plan ends the run with stop reason error.
//     PlanAuthored carries it as plan.v1.
//   - Act: each step gets one tool-calling call ([phase:act]) offering only
//     the step's intended tools; every tool event carries the step id and
//     the plan id. A call to another tool is refused with a tool error.
//   - Reflect: a plain call ([phase:observe]) judges the step against its
//     exit criteria: ReflectionAdded with control {step_id, satisfied,
//     revise, plan?}. A revised plan becomes the next version (PlanUpdated
//     with its diff), a rollback_to re-adds an earlier version; the loop goes
//     on with the first step of the current plan not yet satisfied. An
//     unsatisfied step is tried again (at most maxStepAttempts times in a
//     row); done (or should_continue false) skips the remaining steps.
//   - Synthesis: a plain call without a tag writes the final answer, which
//     is streamed.
//
// An iteration is one attempt at one step (its act call, tools and
// reflection); the plan and synthesis calls are not iterations. Stop,
// timeout and max iterations are honoured before every model call.
func (r *runState) par(runCtx, timeoutCtx context.Context, user string) *Result {
	var hist planner.PlanHistory
	res := r.parLoop(runCtx, timeoutCtx, user, &hist)
	if p, v := hist.Latest(); v > 0 && res.Plan == nil {
		res.Plan = p
	}
	return res
}

func (r *runState) parLoop(runCtx, timeoutCtx context.Context, user string, hist *planner.PlanHistory) *Result {
	r.messages = buildMessages("", r.history, user)
	r.readNamed(timeoutCtx)
	defer func() { r.gate, r.stepRef = nil, "" }()
	all := r.loopTools()
	known := defNames(all)
	stopped := func() *Result { return r.ended(runCtx) }
	failed := func(phase string, err error) *Result { return r.failed(runCtx, phase, err) }

	// Plan.
	var plan planner.TypedPlan
	var planErr error
	var previous string
	for attempt := 1; attempt <= 2; attempt++ {
		if res := stopped(); res != nil {
			return res
		}
		r.withSystem(parPlanPrompt(r.preamble(parMode), all, previous, planErr))
		resp, err := r.modelCall(runCtx, callSpec{phase: parPhasePlan,
			refs: References{PromptVersion: PARPromptVersion, SectionKey: "planning"}})
		if err != nil {
			return failed(parPhasePlan, err)
		}
		plan, planErr = parseTypedPlan(resp.Content, known)
		if planErr == nil {
			break
		}
		previous = resp.Content
		r.logger.Info("par: plan rejected", "attempt", attempt, "err", planErr)
	}
	if planErr != nil {
		return r.finish(StopError, "", fmt.Errorf("the model did not produce a valid plan: %w", planErr))
	}
	version := hist.Add(plan)
	r.planRefs = planner.PlanID(version)
	r.emit(EventPlanAuthored, PlanPayload{Revision: version, Plan: plan, Summary: planSummary(plan, version)},
		References{PlanID: r.planRefs, PromptVersion: PARPromptVersion, SectionKey: "planning"})

	// Act and reflect, step by step.
	satisfied := map[string]bool{}
	attempts := map[string]int{}
	var notes []parStepNote
	for {
		step, ok := nextStep(plan, satisfied)
		if !ok {
			break
		}
		if res := stopped(); res != nil {
			return res
		}
		if r.iteration >= r.cfg.MaxIterations {
			return r.finish(StopMaxIterations, "", nil)
		}
		r.iteration++
		attempts[step.ID]++
		r.stepRef = step.ID
		r.emit(EventTurnStarted, TurnStartedPayload{Iteration: r.iteration}, References{PlanID: r.planRefs, StepID: step.ID})
		stepTools := step.ToolNames()
		r.gate = parStepGate(step, r.planRefs)
		refs := References{PlanID: r.planRefs, StepID: step.ID, PromptVersion: PARPromptVersion}

		refs.SectionKey = "action"
		r.withSystem(parActPrompt(r.preamble(parMode), plan, version, step, attempts[step.ID], notes))
		resp, err := r.modelCall(runCtx, callSpec{phase: parPhaseAct, tools: pickDefs(all, stepTools), refs: refs})
		if err != nil {
			return failed(parPhaseAct, err)
		}
		actText := strings.TrimSpace(resp.Content)
		if actText != "" {
			r.lastText = actText
		}
		if len(resp.ToolCalls) > 0 {
			r.messages = append(r.messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
			r.runTools(timeoutCtx, resp.ToolCalls)
			if r.endReason != "" {
				return r.finish(r.endReason, "", nil)
			}
		}
		r.gate = nil
		if res := stopped(); res != nil {
			return res
		}

		refs.SectionKey = "reflection"
		r.withSystem(parReflectPrompt(r.preamble(parMode), plan, version, step, actText, len(resp.ToolCalls)))
		resp, err = r.modelCall(runCtx, callSpec{phase: parPhaseReflect, refs: refs})
		if err != nil {
			return failed(parPhaseReflect, err)
		}
		refl := parseReflection(resp.Content, step.ID)
		if refl.text != "" {
			r.lastText = refl.text
		}

		// A revision or rollback becomes a new plan version.
		var update *PlanPayload
		switch {
		case refl.rollbackTo != "":
			n, perr := planner.ParsePlanID(refl.rollbackTo)
			if perr == nil {
				var d planner.PlanDiff
				if version, d, perr = hist.Rollback(n); perr == nil {
					plan, _ = hist.Latest()
					update = &PlanPayload{Revision: version, Plan: plan, Diff: d, Summary: planSummary(plan, version) + " (rollback to " + planner.PlanID(n) + ")"}
				}
			}
			if perr != nil {
				refl.control["error"] = perr.Error()
			}
		case refl.revise && refl.plan != nil:
			revised, perr := planner.DecodeTypedPlan(refl.plan, known)
			if perr != nil {
				refl.control["error"] = perr.Error()
				break
			}
			refl.control["plan"] = revised
			prev := version
			version = hist.Add(revised)
			plan = revised
			d, _ := hist.Diff(prev, version)
			update = &PlanPayload{Revision: version, Plan: plan, Diff: d, Summary: planSummary(plan, version)}
		}
		r.emit(EventReflectionAdded, TextPayload{Text: refl.text, Control: refl.control}, refs)
		status := "unsatisfied"
		if refl.satisfied {
			status = "satisfied"
			satisfied[step.ID] = true
		} else if attempts[step.ID] >= maxStepAttempts {
			status = fmt.Sprintf("unsatisfied after %d attempts; moving on", attempts[step.ID])
			satisfied[step.ID] = true
		}
		notes = append(notes, parStepNote{step: step.ID, status: status, text: refl.text})
		if update != nil {
			r.planRefs = planner.PlanID(version)
			r.emit(EventPlanUpdated, *update, References{PlanID: r.planRefs, StepID: step.ID, PromptVersion: PARPromptVersion, SectionKey: "planning"})
		}
		if refl.done && update == nil {
			break
		}
	}
	r.stepRef = ""

	// Synthesis.
	if res := stopped(); res != nil {
		return res
	}
	r.withSystem(parSynthesisPrompt(r.preamble(parMode), plan, version, notes))
	resp, err := r.modelCall(runCtx, callSpec{phase: parPhaseSynthesis, stream: true,
		refs: References{PlanID: r.planRefs, PromptVersion: PARPromptVersion, SectionKey: "action"}})
	if err != nil {
		return failed(parPhaseSynthesis, err)
	}
	answer := strings.TrimSpace(resp.Content)
	if answer == "" {
		return r.finish(StopError, "", errors.New("the synthesis call returned no text"))
	}
	return r.finish(StopFinalAnswer, answer, nil)
}

// nextStep is the first step of plan not yet satisfied.
func nextStep(plan planner.TypedPlan, satisfied map[string]bool) (planner.PlanStep, bool) {
	for _, s := range plan.Steps {
		if !satisfied[s.ID] {
			return s, true
		}
	}
	return planner.PlanStep{}, false
}

// parStepGate offers only the step's intended tools and refuses others.
func parStepGate(step planner.PlanStep, planID string) *toolGate {
	names := step.ToolNames()
	return &toolGate{
		allow: func(name string) bool { return slices.Contains(names, name) },
		refuse: func(name string) error {
			list := strings.Join(names, ", ")
			if list == "" {
				list = "(none)"
			}
			return toolErrorf("tool %q is not declared for step %s of %s; this step's tools: %s. Revise the plan to use it.",
				name, step.ID, planID, list)
		},
	}
}

// parReflection is a parsed reflection.
type parReflection struct {
	text       string
	satisfied  bool
	revise     bool
	done       bool
	plan       json.RawMessage
	rollbackTo string
	control    map[string]any
}

// parseReflection reads a reflection reply: prose, then a JSON control
// block {"satisfied", "revise", "plan", "rollback_to", "done"}. A missing
// "satisfied" means the reflection raised no objection (satisfied); the
// observe-style fields of the offline model are understood too
// (observation as text, should_continue false as done). Malformed control
// JSON is treated as text.
func parseReflection(content, stepID string) parReflection {
	raw, prose, ok := llm.JSONObject(content)
	var c map[string]json.RawMessage
	if ok {
		_ = json.Unmarshal(raw, &c)
	}
	refl := parReflection{text: prose, satisfied: true}
	boolOf := func(key string) (bool, bool) {
		var b bool
		if v, ok := c[key]; ok && json.Unmarshal(v, &b) == nil {
			return b, true
		}
		return false, false
	}
	strOf := func(key string) string {
		var s string
		if v, ok := c[key]; ok && json.Unmarshal(v, &s) == nil {
			return strings.TrimSpace(s)
		}
		return ""
	}
	if b, ok := boolOf("satisfied"); ok {
		refl.satisfied = b
	}
	refl.revise, _ = boolOf("revise")
	if v, ok := c["plan"]; ok && len(v) > 0 && v[0] == '{' {
		refl.plan = v
		if _, set := c["revise"]; !set {
			refl.revise = true
		}
	}
	if b, ok := boolOf("done"); ok {
		refl.done = b
	} else if b, ok := boolOf("should_continue"); ok {
		refl.done = !b
	}
	if v, ok := c["rollback_to"]; ok {
		var n int
		if json.Unmarshal(v, &n) == nil {
			refl.rollbackTo = planner.PlanID(n)
		} else {
			refl.rollbackTo = strOf("rollback_to")
		}
	}
	if refl.text == "" {
		for _, k := range []string{"reflection", "observation", "text"} {
			if s := strOf(k); s != "" {
				refl.text = s
				break
			}
		}
	}
	refl.control = map[string]any{"step_id": stepID, "satisfied": refl.satisfied, "revise": refl.revise}
	if refl.done {
		refl.control["done"] = true
	}
	if refl.rollbackTo != "" {
		refl.control["rollback_to"] = refl.rollbackTo
	}
	return refl
}

// The par prompts. Each carries the tag the offline model keys on.

const parMode = "You work in Plan → Act → Reflect mode."

func parPlanPrompt(preamble string, tools []llm.ToolDef, previous string, prevErr error) string {
	var b strings.Builder
	b.WriteString(preamble)
	b.WriteString("\n\n" + TagPlan + " Write the plan for the user's request before any tool is used.\n")
	b.WriteString(`Reply with only a JSON object:
{"steps": [{"id": "s1", "description": "what this step does", "tools": ["localSearch"], "exit_criteria": "when the step is done"}],
 "exit_criteria": "when the whole request is answered"}
Rules: 1 to 8 steps in order; unique short ids; "tools" lists the tools the step will call (may be empty for a reasoning step);
the last step usually answers with [[Note]] citations.`)
	b.WriteString("\n\nAvailable tools:\n")
	for _, d := range tools {
		fmt.Fprintf(&b, "- %s: %s\n", d.Name, firstSentence(d.Description, 160))
	}
	if prevErr != nil {
		fmt.Fprintf(&b, "\nYour previous plan was rejected: %v\nPrevious reply:\n%s\nWrite a corrected plan.\n", prevErr, truncate.FirstLine(strings.ReplaceAll(previous, "\n", " "), 2000))
	}
	return strings.TrimRight(b.String(), "\n")
}

func planJSON(p planner.TypedPlan) string {
	b, _ := json.MarshalIndent(p, "", "  ")
	return string(b)
}

func writeNotes(b *strings.Builder, notes []parStepNote) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\n\nProgress so far:\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s (%s): %s\n", n.step, n.status, firstSentence(n.text, 300))
	}
}

func parActPrompt(preamble string, plan planner.TypedPlan, version int, step planner.PlanStep, attempt int, notes []parStepNote) string {
	var b strings.Builder
	b.WriteString(preamble)
	fmt.Fprintf(&b, "\n\n%s Carry out step %s of plan %s now.\n", TagAct, step.ID, planner.PlanID(version))
	fmt.Fprintf(&b, "Current step: %s: %s\n", step.ID, step.Description)
	tools := strings.Join(step.ToolNames(), ", ")
	if tools == "" {
		tools = "(none: this step is reasoning only; reply with a short note of what you concluded)"
	}
	fmt.Fprintf(&b, "Intended tools for this step: %s\n", tools)
	fmt.Fprintf(&b, "Exit criteria of this step: %s\n", step.ExitCriteria)
	if attempt > 1 {
		fmt.Fprintf(&b, "This is attempt %d at this step: the last attempt did not meet its exit criteria.\n", attempt)
	}
	b.WriteString("Call the tools this step needs (other tools are refused). Do not repeat a search you already made.\n\nPlan:\n")
	b.WriteString(planJSON(plan))
	writeNotes(&b, notes)
	return strings.TrimRight(b.String(), "\n")
}

func parReflectPrompt(preamble string, plan planner.TypedPlan, version int, step planner.PlanStep, actText string, calls int) string {
	var b strings.Builder
	b.WriteString(preamble)
	fmt.Fprintf(&b, "\n\n%s Reflect on step %s of plan %s: judge its outcome against its exit criteria.\n", TagObserve, step.ID, planner.PlanID(version))
	fmt.Fprintf(&b, "Step %s: %s\nExit criteria: %s\n", step.ID, step.Description, step.ExitCriteria)
	if calls > 0 {
		fmt.Fprintf(&b, "The step made %d tool call(s); their results are the last messages of the conversation.\n", calls)
	} else if actText != "" {
		fmt.Fprintf(&b, "The step called no tool; it concluded: %s\n", truncate.FirstLine(actText, 1000))
	}
	b.WriteString(`Reply with one or two sentences, then a ` + "```json" + ` block:
{"step_id": "` + step.ID + `", "satisfied": true, "revise": false, "done": false}
- satisfied: the step met its exit criteria;
- revise: true with "plan": {a complete new plan, same format} when the plan must change (keep the ids of steps already done);
- rollback_to: "plan.vN" to go back to an earlier version of the plan;
- done: true when the whole plan's exit criteria are already met and the remaining steps can be skipped.

Plan:
`)
	b.WriteString(planJSON(plan))
	return b.String()
}

func parSynthesisPrompt(preamble string, plan planner.TypedPlan, version int, notes []parStepNote) string {
	var b strings.Builder
	b.WriteString(preamble)
	fmt.Fprintf(&b, "\n\nAll steps of plan %s are done. Write the final answer to the user's request now, from the tool results in the conversation.\n", planner.PlanID(version))
	b.WriteString("Answer from the notes only and cite every note you use as [[Note Name]]. If the notes do not contain the answer, say so plainly.\n")
	fmt.Fprintf(&b, "The plan's exit criteria: %s", plan.ExitCriteria)
	writeNotes(&b, notes)
	return strings.TrimRight(b.String(), "\n")
}
