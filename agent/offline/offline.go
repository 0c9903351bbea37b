package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/search"
)

// Model is the offline extractive model, the default when no provider is
// configured. It needs no network and no key. It is a deterministic policy:
// each Chat call inspects the conversation (the goal, the tools offered, the
// tool calls made so far and their results) and produces the next turn; the
// agent executes the real tools. The same request always gives the same
// response. It is stateless and safe for concurrent use.
//
// # The react policy (native tool calling)
//
// The goal is the last user message, without <plan_feedback>,
// <goal_plan_reminder> and <system-reminder> blocks; user messages that are
// <plan-continuation> (or <system-reminder>) injections are not goals. Only
// the tool calls after the goal count. Each turn is the first step not yet
// done, using only the tools offered:
//
//  1. write_todos (when offered and not called): a 3-todo plan, ids
//     "search" (in_progress), "read" and "answer" (pending);
//  2. getTimeRangeMs, when the goal names a period ("last week",
//     "yesterday", "in March", "2026-03", "last 30 days"...);
//  3. localSearch with the goal's keywords (stop words and question words
//     removed, "quoted phrases" kept, salientTerms, the timeRange found);
//     a search with no results is retried once with looser terms (an OR of
//     the most salient ones); when the searches within the goal's time
//     range find nothing, the goal is searched once more over notes of any
//     date (the time may be when something happened, not when a note was
//     written), and the answer says its notes are from other dates;
//  4. with a plan: plan_progress {step_id:"search", next_step:"read"}, alone;
//  5. readNote on the top 6 distinct notes found (maxReads), in parallel,
//     each at the chunk the search matched;
//  6. with a plan: plan_progress {step_id, plan_status:"completed"}, alone;
//  7. the final answer (see compose.go): the passage of the best note that
//     answers, as the note has it (a paragraph, a list, numbered steps),
//     with its [[Note#Heading]] citation; a point from another note only
//     when it answers a part of the question the first does not; "See
//     also" for the other notes that touch on it, and for the search's
//     best hit when another note leads; then a "Sources:" line.
//     When no note read holds the question, an answer that says so and
//     lists the nearest notes. Only this turn streams, in word-sized
//     deltas; a tool turn's sentence is a step, not answer text.
//
// That is at most 8 turns, within the default 10 iterations. Each tool turn
// carries one short operational sentence as text ("Searching the vault for
// sourdough starter."), usable as a [Reflect] step. Tool results are read
// defensively: JSON, {"error": "..."} for failures.
//
// # Phase and stage tags
//
// Other loops mark their prompts with a tag in a system message; the first
// system message holding one decides the mode:
//
//   - [phase:reason]  text, then a ```json block {"plan": "...",
//     "tools_to_consider": [...], "finish": bool}; finish is true once the
//     notes were read (or nothing was found) and the answer is ready.
//   - [phase:act]     one step of the react policy.
//   - [phase:observe] text, then a ```json block {"observation": "...",
//     "should_continue": bool, "final_answer": "..."}; should_continue is
//     false, with the answer, once the notes were read.
//   - [phase:plan]    a JSON typed plan {"steps": [{"id", "description",
//     "tools", "exit_criteria"}], "exit_criteria"}.
//   - [stage:NAME]    a JSON object for the stage's output schema (the
//     first JSON schema object in the system message): goal_framing
//     {"goal", "constraints"}, decomposition {"subtasks"}, synthesis
//     {"answer", "citations"}; tool_routing behaves like react and, once
//     done, fills its schema. Other required fields get short extracted
//     text (strings), [] (arrays), false, 0 or {}.
//
// The policy reads the run's progress from assistant tool_calls and tool
// result messages, so every phase must be sent a conversation that keeps
// them. Plain calls (no tools) without a tag answer from what was read.
type Model struct{}

// New returns the offline model.
func New() *Model { return &Model{} }

// Name returns "offline".
func (*Model) Name() string { return "offline" }

// Chat produces the next turn for req.
func (o *Model) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline model: %w", err)
	}
	st := readConversation(req)
	var resp *llm.Response
	kind, name := detectPhase(req.Messages)
	st.phase = kind
	switch kind {
	case "reason":
		resp = st.reasonTurn()
	case "observe":
		resp = st.observeTurn()
	case "plan":
		resp = &llm.Response{Content: st.typedPlan()}
	case "stage":
		resp = st.stageTurn(name, req.Messages)
	default: // react, act and untagged calls
		resp = st.actTurn()
	}
	if resp.FinishReason == "" {
		resp.FinishReason = "stop"
		if len(resp.ToolCalls) > 0 {
			resp.FinishReason = "tool_calls"
		}
	}
	// Only a turn without tool calls is an answer. The sentence a tool
	// turn carries ("Reading the most relevant notes: ...") is a step: the
	// agent holds streamed text back only up to a few hundred bytes, so a
	// long one (note paths) streamed here would be shown as the answer.
	if onDelta != nil && len(resp.ToolCalls) == 0 {
		for _, d := range wordChunks(resp.Content) {
			onDelta(d)
		}
	}
	return resp, nil
}

var reChunk = regexp.MustCompile(`\S+\s*`)

// wordChunks splits text into word-sized deltas that join back to it.
func wordChunks(s string) []string {
	lead := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
	out := reChunk.FindAllString(s[lead:], -1)
	if lead > 0 && len(out) > 0 {
		out[0] = s[:lead] + out[0]
	}
	return out
}

// detectPhase finds the phase tag (agent.FindTag) of the first system
// message that has one.
func detectPhase(msgs []llm.Message) (kind, name string) {
	for _, m := range msgs {
		if m.Role != llm.RoleSystem {
			continue
		}
		if phase, stage, ok := agent.FindTag(m.Content); ok {
			return phase, stage
		}
	}
	return "", ""
}

// maxReads is how many of the notes found are read: the answer leads with
// the first of them that holds the question, and names the others that
// touch on it.
const maxReads = 6

// step is the policy's next move.
type step struct {
	text  string
	calls []llm.ToolCall
	tools []string // for reason: tools to consider
	final bool
}

// callStep is a step that makes one call, of the tool it considers.
func callStep(text, tool string, args any) step {
	return step{text: text, calls: []llm.ToolCall{call(0, tool, args)}, tools: []string{tool}}
}

func call(i int, name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: "call_" + strconv.Itoa(i), Name: name, Arguments: string(b)}
}

// listing is a kind of question answered by a listing rather than a
// passage: its next step, and its answer (false: not such a question, or
// its listing found nothing and the question is searched as any other).
type listing struct {
	step   func() (step, bool)
	answer func() (string, bool)
}

// listings are the kinds of listing questions, in the order they are
// recognised.
func (st *convState) listings() []listing {
	return []listing{
		{st.taskStep, st.taskAnswer},         // one's tasks (tasks.go)
		{st.tagStep, st.tagAnswer},           // a tag's notes (tags.go)
		{st.propertyStep, st.propertyAnswer}, // notes by property (properties.go)
		{st.linkStep, st.linkAnswer},         // a note's links (links.go)
		{st.folderStep, st.folderAnswer},     // a folder's notes, or how many (folders.go)
	}
}

// next is the react policy: the first step not yet done.
func (st *convState) next() step {
	kw := st.keywordText()
	if st.available(planner.ToolWriteTodos) && !st.writeTodos {
		todos := []map[string]string{
			{"id": "search", "content": short("Search the vault for "+kw, 140), "status": "in_progress"},
			{"id": "read", "content": "Read the most relevant notes", "status": "pending"},
			{"id": "answer", "content": "Answer with citations", "status": "pending"},
		}
		return callStep("I'll plan this first: search, read the best notes, then answer.", planner.ToolWriteTodos, map[string]any{"todos": todos})
	}
	// A property's value is not a period ("notes whose year is 2017").
	if st.timeExpr != "" && st.available(agent.ToolTimeRange) && !st.timeCalled && st.propertyQuery() == "" {
		return callStep(fmt.Sprintf("Working out the dates for %q.", st.timeExpr), agent.ToolTimeRange, map[string]any{"timeExpression": st.timeExpr})
	}
	for _, l := range st.listings() {
		if s, ok := l.step(); ok {
			return s
		}
	}
	// A goal only about the notes it names needs no search: they are read.
	if st.available(agent.ToolLocalSearch) && len(st.searches) == 0 && st.timeOnly() && st.timeRange != nil {
		return callStep(fmt.Sprintf("Listing the notes from %s.", st.timeExpr), agent.ToolLocalSearch, st.searchArgs(listQuery))
	}
	if st.available(agent.ToolLocalSearch) && len(st.searches) == 0 && strings.TrimSpace(st.goal) != "" && !st.namedRead() {
		q := st.searchQuery()
		return callStep("Searching the vault for "+kw+".", agent.ToolLocalSearch, st.searchArgs(q))
	}
	if st.available(agent.ToolLocalSearch) && len(st.searches) == 1 && len(st.hits()) == 0 && !st.timeOnly() {
		if loose := st.looseQuery(); loose != "" && loose != st.searches[0].query {
			return callStep("Nothing matched, so I'm trying looser terms: "+loose+".", agent.ToolLocalSearch, st.searchArgs(loose))
		}
	}
	if st.available(agent.ToolLocalSearch) && st.undatedRetry() {
		q := st.searchQuery()
		return callStep(fmt.Sprintf("Nothing from %s matched, so I'm searching notes of any date for %s.", st.timeExpr, kw), agent.ToolLocalSearch, st.searchArgsIn(q, nil))
	}
	hits := st.hits()
	var toRead []search.Result
	if st.available(agent.ToolReadNote) && st.ownReads() == 0 && st.timeOnly() && st.timeRange != nil {
		toRead = st.timeReads()
	} else if st.available(agent.ToolReadNote) && st.ownReads() == 0 {
		// A follow-up reads the note the previous answer was from first.
		for _, name := range st.prevCited[:min(1, len(st.prevCited))] {
			if !st.readAsked[name] && !st.askedAs(name, hits) {
				toRead = append(toRead, search.Result{Path: name})
			}
		}
		for _, h := range hits {
			if !st.readAsked[h.Path] {
				toRead = append(toRead, h)
			}
			if len(toRead) == maxReads {
				break
			}
		}
	}
	planning := st.planActive && st.available(planner.ToolPlanProgress)
	// The answer may run on into the next chunk of its note (or begin in
	// the one before): that chunk is read too. Only the plain react loop
	// with native tools does this: a planned run spends two turns on
	// progress reports and the phased loops several calls per step, so
	// they skip this read to stay within a small iteration budget.
	if len(toRead) == 0 && !planning && st.phase == "" && st.tools && st.offered[agent.ToolReadNote] && st.ownReads() > 0 && !st.timeOnly() {
		if p, chunk, ok := st.neighbourChunk(); ok {
			return callStep("The answer runs past the part read; reading the neighbouring part of "+noteName(p)+".", agent.ToolReadNote, map[string]any{"notePath": p, "chunkIndex": chunk})
		}
	}
	if len(toRead) > 0 {
		if planning && !st.progressed["search"] && !st.planDone {
			return callStep(fmt.Sprintf("Search done: %s found; reading next.", plural(len(hits), "note")), planner.ToolPlanProgress, map[string]any{
				"step_id": "search", "step_summary": fmt.Sprintf("Found %s.", plural(len(hits), "matching note")),
				"next_step": "read"})
		}
		var calls []llm.ToolCall
		paths := make([]string, 0, len(toRead))
		for i, h := range toRead {
			args := map[string]any{"notePath": h.Path, "chunkIndex": h.ChunkIndex}
			if h.Title == "" && h.Score == 0 && !strings.HasSuffix(h.Path, ".md") {
				args = map[string]any{"notePath": h.Path} // a note cited before, by name
			}
			calls = append(calls, call(i, agent.ToolReadNote, args))
			paths = append(paths, h.Path)
		}
		return step{text: "Reading the most relevant notes: " + joinAnd(displayNames(paths)) + ".", calls: calls,
			tools: []string{agent.ToolReadNote}}
	}
	if planning && !st.planDone {
		id, summary := "search", "No notes matched."
		if len(st.reads) > 0 {
			id, summary = "read", fmt.Sprintf("Read %s.", plural(len(st.reads), "note"))
		}
		text := "Everything needed is read; closing the plan before answering."
		if len(st.reads) == 0 {
			text = "Nothing matched; closing the plan before answering."
		}
		return callStep(text, planner.ToolPlanProgress, map[string]any{
			"step_id": id, "step_summary": summary, "plan_status": "completed"})
	}
	return step{final: true, text: "Answering from the notes read."}
}

// searchQuery is the first search of a goal: the question as typed (less
// its time expression), or its keywords when nothing else is left.
func (st *convState) searchQuery() string {
	if (!st.terms.empty() || len(st.refs) > 0) && st.text != "" {
		return st.text
	}
	if q := st.terms.query(); q != "" {
		return q
	}
	return short(st.goal, 200)
}

// askedAs reports whether a hit of the search is the note a name cites
// (same basename), so a follow-up does not read it twice.
func (st *convState) askedAs(name string, hits []search.Result) bool {
	for _, h := range hits[:min(3, len(hits))] {
		if strings.EqualFold(noteName(h.Path), noteName(name)) || strings.EqualFold(strings.TrimSuffix(h.Path, ".md"), name) {
			return true
		}
	}
	return false
}

// ownReads counts the policy's reads: those of the notes the goal names
// were made by the agent before.
func (st *convState) ownReads() int {
	n := 0
	for _, r := range st.reads {
		if !r.named {
			n++
		}
	}
	return n
}

// namedRead reports whether the goal is only about the notes it names and
// every one of them was read.
func (st *convState) namedRead() bool {
	if !st.namedOnly() {
		return false
	}
	n := 0
	for _, r := range st.reads {
		if r.named {
			if r.failed {
				return false
			}
			n++
		}
	}
	return n > 0
}

func (st *convState) searchArgs(q string) map[string]any {
	return st.searchArgsIn(q, st.timeRange)
}

// searchArgsIn is searchArgs over the time range r (nil: any date).
func (st *convState) searchArgsIn(q string, r *search.DateRange) map[string]any {
	args := map[string]any{"query": q}
	if s := st.terms.salient(5); len(s) > 0 {
		args["salientTerms"] = s
	}
	if r != nil {
		args["timeRange"] = map[string]any{"startTime": r.StartTime, "endTime": r.EndTime}
	}
	return args
}

// undatedRetry reports whether the question is searched again over notes
// of any date: it names a time ("the text I deleted yesterday") and words
// to look for, and the searches limited to that time found nothing. The
// time may be when something happened rather than when a note was
// written, and a note that answers is worth more than "nothing from
// yesterday"; the answer says the notes are from other dates.
func (st *convState) undatedRetry() bool {
	if st.timeRange == nil || st.timeOnly() || len(st.searches) == 0 || len(st.hits()) > 0 || strings.TrimSpace(st.goal) == "" {
		return false
	}
	for _, s := range st.searches {
		if !s.dated || s.failed {
			// Done already; or a search was refused, as a typed
			// plan refuses a tool its step does not declare: the
			// run answers from what it has.
			return false
		}
	}
	// The looser retry within the time range comes first, when there is one.
	loose := st.looseQuery()
	return len(st.searches) >= 2 || loose == "" || loose == st.searches[0].query
}

// undated reports whether the notes found come from a search of any date
// after the searches within the question's time range found nothing.
func (st *convState) undated() bool {
	if st.timeRange == nil || len(st.searches) < 2 {
		return false
	}
	last := st.searches[len(st.searches)-1]
	return !last.dated && st.searches[0].dated
}

// looseQuery is the retry after a fruitless search: an OR of the most
// salient terms.
func (st *convState) looseQuery() string {
	s := st.terms.salient(3)
	if len(s) < 2 {
		return ""
	}
	return strings.Join(s, " OR ")
}

// actTurn is one react step.
func (st *convState) actTurn() *llm.Response {
	s := st.next()
	if s.final {
		return &llm.Response{Content: st.answer()}
	}
	return &llm.Response{Content: s.text, ToolCalls: s.calls}
}

func (st *convState) reasonTurn() *llm.Response {
	s := st.next()
	ctl := map[string]any{"plan": s.text, "tools_to_consider": nonNil(s.tools), "finish": s.final}
	if s.final {
		ctl["plan"] = "The notes are read; answer from them with citations."
		if len(st.reads) == 0 {
			ctl["plan"] = "No notes matched; say so and suggest other terms."
		}
	}
	text := "Next: " + strings.TrimSuffix(ctl["plan"].(string), ".") + "."
	return &llm.Response{Content: text + "\n\n" + fencedJSON(ctl)}
}

func (st *convState) observeTurn() *llm.Response {
	obs := st.observation()
	s := st.next()
	ctl := map[string]any{"observation": obs, "should_continue": !s.final, "final_answer": ""}
	if s.final {
		ctl["final_answer"] = st.answer()
	}
	return &llm.Response{Content: obs + "\n\n" + fencedJSON(ctl)}
}

// observation summarizes the last batch of tool results.
func (st *convState) observation() string {
	if len(st.lastResults) == 0 {
		return "No tool results yet."
	}
	var parts []string
	seen := map[string]bool{}
	for _, name := range st.lastResults {
		if seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case agent.ToolLocalSearch:
			last := st.searches[len(st.searches)-1]
			if len(last.results) == 0 {
				parts = append(parts, "The search found no notes.")
			} else {
				var names []string
				for i, h := range last.results {
					if i == 3 {
						break
					}
					names = append(names, noteName(h.Path))
				}
				parts = append(parts, fmt.Sprintf("The search found %s; the best are %s.",
					plural(last.total, "note"), joinAnd(names)))
			}
		case agent.ToolReadNote:
			var names []string
			for _, r := range st.reads {
				if !r.failed {
					names = append(names, noteName(r.path))
				}
			}
			if len(names) > 0 {
				parts = append(parts, "Read "+joinAnd(names)+".")
			}
		case agent.ToolTimeRange:
			if st.timeRange != nil {
				parts = append(parts, fmt.Sprintf("The time range for %q is known.", st.timeExpr))
			}
		case planner.ToolWriteTodos:
			parts = append(parts, "The plan is recorded.")
		case planner.ToolPlanProgress:
			parts = append(parts, "Plan progress recorded.")
		default:
			parts = append(parts, name+" returned.")
		}
	}
	if st.lastFailures > 0 {
		parts = append(parts, plural(st.lastFailures, "tool call")+" failed.")
	}
	return strings.Join(parts, " ")
}

func (st *convState) typedPlan() string {
	kw := st.keywordText()
	type planStep struct {
		ID           string   `json:"id"`
		Description  string   `json:"description"`
		Tools        []string `json:"tools"`
		ExitCriteria string   `json:"exit_criteria"`
	}
	var steps []planStep
	add := func(desc string, tools []string, exit string) {
		steps = append(steps, planStep{ID: "s" + strconv.Itoa(len(steps)+1), Description: desc, Tools: tools, ExitCriteria: exit})
	}
	if st.timeExpr != "" {
		add(fmt.Sprintf("Work out the dates for %q", st.timeExpr), []string{agent.ToolTimeRange}, "A start and end time are known")
	}
	add("Search the vault for "+kw, []string{agent.ToolLocalSearch}, "Relevant notes found, or two searches returned nothing")
	add("Read the most relevant notes", []string{agent.ToolReadNote}, "The top 3 notes have been read")
	add("Answer with citations", []string{}, "The answer quotes the notes and cites them as [[Note]]")
	b, _ := json.Marshal(map[string]any{
		"steps":         steps,
		"exit_criteria": "The question is answered from the notes with [[Note]] citations, or it is clear the notes do not cover it.",
	})
	return string(b)
}

func fencedJSON(v any) string {
	b, _ := json.Marshal(v)
	return "```json\n" + string(b) + "\n```"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
