package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
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
//     the most salient ones);
//  4. with a plan: plan_progress {step_id:"search", next_step:"read"}, alone;
//  5. readNote on the top 3 distinct notes found, in parallel, each at the
//     chunk the search matched;
//  6. with a plan: plan_progress {step_id, plan_status:"completed"}, alone;
//  7. the final answer: the 3-6 sentences of the notes read that best match
//     the goal's (stemmed) keywords, as bullets ending with [[Note]]
//     citations, then a "Sources:" line; or, when nothing matched, an
//     answer that says so and suggests other terms. It is streamed in
//     word-sized deltas.
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
	if onDelta != nil {
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

// Parsed tool results.

type searchRec struct {
	query   string
	total   int
	results []search.Result
	failed  bool
}

type readRec struct {
	path     string
	title    string
	heading  string
	content  string
	headings []string
	failed   bool
}

// convState is what the offline policy knows about a run.
type convState struct {
	goal     string
	terms    queryTerms
	timeExpr string
	offered  map[string]bool
	tools    bool // the request offered tools

	writeTodos   bool // write_todos was called
	planActive   bool // and it succeeded
	progressed   map[string]bool
	planDone     bool // a plan_progress with plan_status completed was made
	timeCalled   bool
	timeRange    *search.DateRange
	searches     []searchRec
	readAsked    map[string]bool
	reads        []readRec
	lastResults  []string // tool names of the last batch, for observations
	lastFailures int
}

var (
	reFeedback = regexp.MustCompile(`(?s)<` + planner.TagFeedback + `>.*?</` + planner.TagFeedback + `>`)
	// system-reminder blocks are what other agents' hosts inject.
	reReminder = regexp.MustCompile(`(?s)<(` + planner.TagReminder + `|system-reminder)>.*?</(` + planner.TagReminder + `|system-reminder)>`)
)

func injected(content string) bool {
	t := strings.TrimSpace(content)
	return strings.HasPrefix(t, "<"+planner.TagContinuation+">") || strings.HasPrefix(t, "<system-reminder>")
}

func cleanGoal(content string) string {
	s := reFeedback.ReplaceAllString(content, " ")
	s = reReminder.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}

// readConversation extracts the run state from the request.
func readConversation(req llm.Request) *convState {
	st := &convState{offered: map[string]bool{}, progressed: map[string]bool{}, readAsked: map[string]bool{}}
	for _, t := range req.Tools {
		st.offered[t.Name] = true
	}
	st.tools = len(req.Tools) > 0
	msgs := req.Messages
	goalAt := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && !injected(msgs[i].Content) {
			goalAt = i
			break
		}
	}
	if goalAt >= 0 {
		st.goal = cleanGoal(msgs[goalAt].Content)
		// A feedback-only message (plan review) keeps the earlier goal.
		for j := goalAt - 1; j >= 0 && extractTerms(st.goal, false).empty(); j-- {
			if msgs[j].Role == llm.RoleUser && !injected(msgs[j].Content) {
				st.goal = strings.TrimSpace(cleanGoal(msgs[j].Content) + " " + st.goal)
			}
		}
	}
	expr, rest := findTimeExpression(st.goal)
	st.timeExpr = expr
	st.terms = extractTerms(rest, expr != "")

	type pending struct{ name, args string }
	calls := map[string]pending{}
	var order []pending
	for _, m := range msgs[goalAt+1:] {
		switch m.Role {
		case llm.RoleAssistant:
			if len(m.ToolCalls) > 0 {
				st.lastResults = nil
				st.lastFailures = 0
			}
			for _, tc := range m.ToolCalls {
				p := pending{tc.Name, tc.Arguments}
				calls[tc.ID] = p
				order = append(order, p)
				st.noteCall(tc.Name, tc.Arguments)
			}
		case llm.RoleTool:
			p, ok := calls[m.ToolCallID]
			if !ok && m.Name != "" {
				p = pending{name: m.Name}
			}
			if p.name == "" && len(order) > 0 {
				p = order[len(order)-1]
			}
			st.noteResult(p.name, p.args, m.Content)
		}
	}
	return st
}

// noteCall records a call when it is made, so a call whose result is lost
// is not repeated forever.
func (st *convState) noteCall(name, args string) {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a)
	switch name {
	case planner.ToolWriteTodos:
		st.writeTodos = true
	case agent.ToolTimeRange:
		st.timeCalled = true
	case planner.ToolPlanProgress:
		if id, _ := a["step_id"].(string); id != "" {
			st.progressed[id] = true
		}
		if s, _ := a["plan_status"].(string); s == "completed" {
			st.planDone = true
		}
	case agent.ToolReadNote:
		if p, _ := a["notePath"].(string); p != "" {
			st.readAsked[p] = true
		}
	}
}

func resultError(content string) (string, bool) {
	var e struct {
		Error any `json:"error"`
	}
	if json.Unmarshal([]byte(content), &e) == nil && e.Error != nil {
		if s, ok := e.Error.(string); ok {
			return s, true
		}
		b, _ := json.Marshal(e.Error)
		return string(b), true
	}
	return "", false
}

func (st *convState) noteResult(name, args, content string) {
	st.lastResults = append(st.lastResults, name)
	_, failed := resultError(content)
	if failed || !json.Valid([]byte(strings.TrimSpace(stripReminder(content)))) {
		st.lastFailures++
		failed = true
	}
	content = stripReminder(content)
	switch name {
	case planner.ToolWriteTodos:
		var r struct {
			OK bool `json:"ok"`
		}
		if !failed && json.Unmarshal([]byte(content), &r) == nil && r.OK {
			st.planActive = true
		}
	case agent.ToolTimeRange:
		var r search.DateRange
		if !failed && json.Unmarshal([]byte(content), &r) == nil && r.EndTime > r.StartTime {
			st.timeRange = &r
		}
	case agent.ToolLocalSearch:
		rec := searchRec{failed: failed}
		var a struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		rec.query = a.Query
		var r agent.LocalSearchResult
		if !failed && json.Unmarshal([]byte(content), &r) == nil {
			rec.results = r.Results
			rec.total = max(r.Total, len(r.Results))
		}
		st.searches = append(st.searches, rec)
	case agent.ToolReadNote:
		var a struct {
			NotePath string `json:"notePath"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		rec := readRec{path: a.NotePath, failed: failed}
		var r struct {
			Path     string            `json:"path"`
			Title    string            `json:"title"`
			Heading  string            `json:"heading"`
			Content  string            `json:"content"`
			Headings []json.RawMessage `json:"headings"`
		}
		if !failed && json.Unmarshal([]byte(content), &r) == nil {
			if r.Path != "" {
				rec.path = r.Path
				st.readAsked[r.Path] = true
			}
			rec.title, rec.heading, rec.content = r.Title, r.Heading, r.Content
			for _, h := range r.Headings {
				var s string
				var obj struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(h, &s) == nil {
					rec.headings = append(rec.headings, s)
				} else if json.Unmarshal(h, &obj) == nil && obj.Text != "" {
					rec.headings = append(rec.headings, obj.Text)
				}
			}
		}
		st.reads = append(st.reads, rec)
	}
}

// stripReminder removes a reminder the agent appended to a tool result.
func stripReminder(content string) string {
	return strings.TrimSpace(reReminder.ReplaceAllString(content, ""))
}

// available reports whether a tool can be used: offered by the request, or,
// for plain calls (reason/observe), one of the standard vault tools.
func (st *convState) available(name string) bool {
	if st.tools {
		return st.offered[name]
	}
	return name == agent.ToolLocalSearch || name == agent.ToolReadNote || name == agent.ToolTimeRange
}

func (st *convState) hits() []search.Result {
	// The latest search first: a retry replaces a fruitless first search.
	var out []search.Result
	seen := map[string]bool{}
	for i := len(st.searches) - 1; i >= 0; i-- {
		for _, h := range st.searches[i].results {
			if h.Path != "" && !seen[h.Path] {
				seen[h.Path] = true
				out = append(out, h)
			}
		}
	}
	return out
}

func (st *convState) keywordText() string {
	if st.terms.empty() {
		return short(st.goal, 60)
	}
	return short(strings.Join(st.terms.all(), " "), 80)
}

// step is the policy's next move.
type step struct {
	text  string
	calls []llm.ToolCall
	tools []string // for reason: tools to consider
	final bool
}

func call(i int, name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: "call_" + strconv.Itoa(i), Name: name, Arguments: string(b)}
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
		return step{text: "I'll plan this first: search, read the best notes, then answer.",
			calls: []llm.ToolCall{call(0, planner.ToolWriteTodos, map[string]any{"todos": todos})}, tools: []string{planner.ToolWriteTodos}}
	}
	if st.timeExpr != "" && st.available(agent.ToolTimeRange) && !st.timeCalled {
		return step{text: fmt.Sprintf("Working out the dates for %q.", st.timeExpr),
			calls: []llm.ToolCall{call(0, agent.ToolTimeRange, map[string]any{"timeExpression": st.timeExpr})},
			tools: []string{agent.ToolTimeRange}}
	}
	if st.available(agent.ToolLocalSearch) && len(st.searches) == 0 && strings.TrimSpace(st.goal) != "" {
		q := st.terms.query()
		if q == "" {
			q = short(st.goal, 200)
		}
		return step{text: "Searching the vault for " + kw + ".",
			calls: []llm.ToolCall{call(0, agent.ToolLocalSearch, st.searchArgs(q))}, tools: []string{agent.ToolLocalSearch}}
	}
	if st.available(agent.ToolLocalSearch) && len(st.searches) == 1 && len(st.hits()) == 0 {
		if loose := st.looseQuery(); loose != "" && loose != st.searches[0].query {
			return step{text: "Nothing matched, so I'm trying looser terms: " + loose + ".",
				calls: []llm.ToolCall{call(0, agent.ToolLocalSearch, st.searchArgs(loose))}, tools: []string{agent.ToolLocalSearch}}
		}
	}
	hits := st.hits()
	var toRead []search.Result
	if st.available(agent.ToolReadNote) && len(st.reads) == 0 {
		for _, h := range hits {
			if !st.readAsked[h.Path] {
				toRead = append(toRead, h)
			}
			if len(toRead) == 3 {
				break
			}
		}
	}
	planning := st.planActive && st.available(planner.ToolPlanProgress)
	if len(toRead) > 0 {
		if planning && !st.progressed["search"] && !st.planDone {
			return step{text: fmt.Sprintf("Search done: %s found; reading next.", plural(len(hits), "note")),
				calls: []llm.ToolCall{call(0, planner.ToolPlanProgress, map[string]any{
					"step_id": "search", "step_summary": fmt.Sprintf("Found %s.", plural(len(hits), "matching note")),
					"next_step": "read"})},
				tools: []string{planner.ToolPlanProgress}}
		}
		var calls []llm.ToolCall
		paths := make([]string, 0, len(toRead))
		for i, h := range toRead {
			calls = append(calls, call(i, agent.ToolReadNote, map[string]any{"notePath": h.Path, "chunkIndex": h.ChunkIndex}))
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
		return step{text: text,
			calls: []llm.ToolCall{call(0, planner.ToolPlanProgress, map[string]any{
				"step_id": id, "step_summary": summary, "plan_status": "completed"})},
			tools: []string{planner.ToolPlanProgress}}
	}
	return step{final: true, text: "Answering from the notes read."}
}

func (st *convState) searchArgs(q string) map[string]any {
	args := map[string]any{"query": q}
	if s := st.terms.salient(5); len(s) > 0 {
		args["salientTerms"] = s
	}
	if st.timeRange != nil {
		args["timeRange"] = map[string]any{"startTime": st.timeRange.StartTime, "endTime": st.timeRange.EndTime}
	}
	return args
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

// Answer composition.

// source is a note the answer may quote.
type source struct {
	path     string
	title    string
	heading  string
	headings []string
	content  string
	rank     int
}

func (st *convState) sources() []source {
	var out []source
	seen := map[string]bool{}
	snippets := map[string]search.Result{}
	for _, h := range st.hits() {
		if _, ok := snippets[h.Path]; !ok {
			snippets[h.Path] = h
		}
	}
	for _, r := range st.reads {
		if r.path == "" || seen[r.path] {
			continue
		}
		seen[r.path] = true
		s := source{path: r.path, title: r.title, heading: r.heading, headings: r.headings, content: r.content}
		if r.failed || strings.TrimSpace(r.content) == "" {
			h, ok := snippets[r.path]
			if !ok {
				continue
			}
			s.content, s.heading, s.title = h.Snippet, h.Heading, h.Title
		}
		out = append(out, s)
	}
	if len(out) == 0 { // no notes read (readNote not offered): quote snippets
		for i, h := range st.hits() {
			if i == 3 {
				break
			}
			out = append(out, source{path: h.Path, title: h.Title, heading: h.Heading, content: h.Snippet})
		}
	}
	for i := range out {
		out[i].rank = i
		if out[i].title == "" {
			out[i].title = noteName(out[i].path)
		}
	}
	return out
}

var reHighlight = regexp.MustCompile(`</?mark>|</?em>|\*\*`)

type pick struct {
	src  int
	sent sentence
}

// answer renders the final answer from the notes read.
func (st *convState) answer() string {
	srcs := st.sources()
	if len(srcs) == 0 {
		return st.noNotesAnswer()
	}
	groups := termStems(st.terms)
	var cands []pick
	for i, s := range srcs {
		bonus := 0.0
		meta := stemSet(s.title + " " + s.heading + " " + noteName(s.path) + " " + strings.Join(s.headings, " "))
		for _, g := range groups {
			for _, u := range g {
				if meta[u] {
					bonus += 0.25
					break
				}
			}
		}
		for j, text := range splitSentences(reHighlight.ReplaceAllString(s.content, "")) {
			sc := scoreSentence(text, groups)
			if sc > 0 {
				sc += bonus
			}
			cands = append(cands, pick{src: i, sent: sentence{text: text, pos: j, score: sc}})
		}
	}
	if len(cands) == 0 {
		names := make([]string, len(srcs))
		for i := range srcs {
			names[i] = st.cite(srcs, i)
		}
		return "I found " + joinAnd(names) + ", but could not extract readable text from them. Open them to check."
	}
	ranked := append([]pick(nil), cands...)
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].sent.score > ranked[b].sent.score })
	var chosen []pick
	seen := map[string]bool{}
	take := func(p pick) {
		key := strings.ToLower(p.sent.text)
		if seen[key] || len(chosen) >= 6 {
			return
		}
		seen[key] = true
		chosen = append(chosen, p)
	}
	for _, p := range ranked {
		if p.sent.score > 0 {
			take(p)
		}
	}
	// Fewer than 3 matching sentences: add the opening sentences of the
	// best-ranked notes, which usually say what a note is about.
	for pos := 0; len(chosen) < 3 && pos < 3; pos++ {
		for _, p := range cands {
			if p.sent.pos == pos && len(chosen) < 3 {
				take(p)
			}
		}
	}
	sort.SliceStable(chosen, func(a, b int) bool {
		if chosen[a].src != chosen[b].src {
			return chosen[a].src < chosen[b].src
		}
		return chosen[a].sent.pos < chosen[b].sent.pos
	})
	var b strings.Builder
	b.WriteString("From your notes:\n\n")
	var cited []string
	citedSet := map[string]bool{}
	for _, p := range chosen {
		c := st.cite(srcs, p.src)
		fmt.Fprintf(&b, "- %s %s\n", p.sent.text, c)
		if !citedSet[c] {
			citedSet[c] = true
			cited = append(cited, c)
		}
	}
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	return b.String()
}

// cite returns the [[wikilink]] of source i: the basename without .md, or
// the path without .md when two sources share a basename.
func (st *convState) cite(srcs []source, i int) string {
	name := noteName(srcs[i].path)
	for j, s := range srcs {
		if j != i && strings.EqualFold(noteName(s.path), name) {
			return "[[" + strings.TrimSuffix(srcs[i].path, ".md") + "]]"
		}
	}
	return "[[" + name + "]]"
}

// citations returns the wikilinks the answer cites.
func (st *convState) citations() []string {
	ans := st.answer()
	var out []string
	for _, m := range regexp.MustCompile(`\[\[[^\]]+\]\]`).FindAllString(ans, -1) {
		if !containsString(out, m) {
			out = append(out, m)
		}
	}
	return nonNil(out)
}

func (st *convState) noNotesAnswer() string {
	kw := st.keywordText()
	var b strings.Builder
	if !st.available(agent.ToolLocalSearch) && len(st.searches) == 0 {
		return "I could not search the vault in this step, so I have no notes to answer from."
	}
	fmt.Fprintf(&b, "I couldn't find any notes in your vault matching %q", kw)
	if st.timeExpr != "" {
		fmt.Fprintf(&b, " from %s", st.timeExpr)
	}
	b.WriteString(".")
	var queries []string
	for _, s := range st.searches {
		if s.query != "" {
			queries = append(queries, "`"+s.query+"`")
		}
	}
	if len(queries) > 0 {
		b.WriteString(" I searched for " + joinAnd(queries) + ".")
	}
	b.WriteString("\n\nYou could try other terms: a synonym or a more general word, a tag (tag:#name), a folder (path:folder/)")
	if st.timeExpr != "" {
		b.WriteString(", or a wider time range")
	}
	b.WriteString(".")
	return b.String()
}

// displayNames names notes by basename, or by path where basenames clash.
func displayNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = noteName(p)
		for j, q := range paths {
			if j != i && strings.EqualFold(noteName(q), out[i]) {
				out[i] = strings.TrimSuffix(p, ".md")
				break
			}
		}
	}
	return out
}

// noteName is the basename of a vault path without .md.
func noteName(p string) string {
	return strings.TrimSuffix(path.Base(p), ".md")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// short is s on one line, cut to n runes.
func short(s string, n int) string {
	return truncate.Runes(strings.Join(strings.Fields(s), " "), n)
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
