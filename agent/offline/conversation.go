package offline

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/planner"
	"github.com/vault-agent/vault-agent/search"
)

// Reading the conversation: what the run has done so far, from the
// assistant tool calls and the tool results after the goal.

type searchRec struct {
	query   string
	dated   bool // it was limited to a time range
	total   int
	results []search.Result
	terms   []search.TermWeight // the words searched for, weighed over the vault
	failed  bool
	err     string // the search's error, when it failed
}

type readRec struct {
	path       string
	link       string // the note's own [[link]] target, when the result gives it
	asked      string // the notePath asked for
	title      string
	heading    string
	content    string
	headings   []string
	firstLevel int // the level of headings[0]; 0 when not known
	chunk      int
	chunkCount int
	mtime      int64
	err        string // the tool's error, when it failed
	failed     bool
	named      bool // read by the agent because the goal names the note
}

// convState is what the offline policy knows about a run.
type convState struct {
	phase string // the loop's phase tag (detectPhase), "" for plain react
	goal  string
	// text is the goal as a person typed it, less its time expression:
	// what the search is given, since search ranks natural questions
	// itself (filler words weigh little, no word is required).
	text  string
	terms queryTerms
	refs  []agent.NoteRef // the notes the goal names
	// prevCited are the notes the previous answer cited, when the goal is
	// a follow-up (see elliptic).
	prevCited []string
	timeExpr  string
	offered   map[string]bool
	tools     bool // the request offered tools

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

	weighing *weighing     // the notes read, weighed once (weighed)
	tasks    *taskList     // the last listTasks result (tasks.go)
	props    *propertyList // the last listNotesByProperty result (properties.go)
	links    *linkList     // the last getNoteLinks result (links.go)
	tree     *fileTreeRec  // the last getFileTree result (folders.go)
}

var (
	reFeedback = regexp.MustCompile(`(?s)<` + planner.TagFeedback + `>.*?</` + planner.TagFeedback + `>`)
	// system-reminder blocks are what other agents' hosts inject.
	reReminder = regexp.MustCompile(`(?s)<(` + planner.TagReminder + `|system-reminder)>.*?</(` + planner.TagReminder + `|system-reminder)>`)
)

// reContextBlock is a message that is one tagged block of context a host
// adds (the notes a person attached, a reminder), not a person's words.
var reContextBlock = regexp.MustCompile(`(?s)^<([a-zA-Z][\w-]*)(?:\s[^>]*)?>.*</([a-zA-Z][\w-]*)>$`)

// injected reports whether a user message was added by the agent or the
// host rather than typed: a continuation, a reminder, a block of context.
func injected(content string) bool {
	t := strings.TrimSpace(content)
	if strings.HasPrefix(t, "<"+planner.TagContinuation+">") || strings.HasPrefix(t, "<system-reminder>") {
		return true
	}
	// Plan feedback carries the person's reply to a plan: it is theirs.
	m := reContextBlock.FindStringSubmatch(t)
	return m != nil && m[1] == m[2] && m[1] != planner.TagFeedback
}

// reAttachedList is the list of notes a host appends to a question it
// remembers ("(attached: a.md, b.md)"): not words of the question.
var reAttachedList = regexp.MustCompile(`(?s)\s*\(attached: [^()]*\)\s*$`)

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
	st.refs = agent.NamedNotes(st.goal)
	expr, rest := findTimeExpression(agent.WithoutNamedNotes(st.goal))
	st.timeExpr = expr
	st.terms = extractTerms(rest, expr != "")
	_, plain := findTimeExpression(agent.PlainNamedNotes(st.goal))
	st.text = searchText(plain)
	if goalAt > 0 && expr == "" && len(st.refs) == 0 && elliptic(st.goal, st.terms) {
		st.inherit(msgs[:goalAt])
	}

	type pending struct{ id, name, args string }
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
				p := pending{tc.ID, tc.Name, tc.Arguments}
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
			st.noteResult(p.id, p.name, p.args, m.Content)
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

func (st *convState) noteResult(id, name, args, content string) {
	st.lastResults = append(st.lastResults, name)
	errText, failed := resultError(content)
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
	case agent.ToolListTasks:
		st.noteTasks(args, content, failed)
	case agent.ToolNotesByProperty:
		st.noteProperties(args, content, failed)
	case agent.ToolNoteLinks:
		st.noteLinks(args, content, failed)
	case agent.ToolFileTree:
		st.noteFileTree(content, failed)
	case agent.ToolLocalSearch:
		rec := searchRec{failed: failed, err: errText}
		var a struct {
			Query     string           `json:"query"`
			TimeRange *json.RawMessage `json:"timeRange"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		rec.query = a.Query
		rec.dated = a.TimeRange != nil && string(*a.TimeRange) != "null"
		var r agent.LocalSearchResult
		if !failed && json.Unmarshal([]byte(content), &r) == nil {
			rec.results = r.Results
			rec.total = max(r.Total, len(r.Results))
			rec.terms = r.Terms
		}
		st.searches = append(st.searches, rec)
	case agent.ToolReadNote:
		var a struct {
			NotePath string `json:"notePath"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		rec := readRec{path: a.NotePath, asked: a.NotePath, failed: failed, named: strings.HasPrefix(id, agent.NamedCallPrefix)}
		if failed {
			rec.err, _ = resultError(content)
		}
		var r struct {
			Path       string            `json:"path"`
			Link       string            `json:"link"`
			Title      string            `json:"title"`
			Heading    string            `json:"heading"`
			Content    string            `json:"content"`
			Headings   []json.RawMessage `json:"headings"`
			ChunkIndex int               `json:"chunkIndex"`
			ChunkCount int               `json:"chunkCount"`
			MTime      int64             `json:"mtime"`
		}
		if !failed && json.Unmarshal([]byte(content), &r) == nil {
			if r.Path != "" {
				rec.path = r.Path
				st.readAsked[r.Path] = true
			}
			rec.link, rec.title, rec.heading, rec.content = r.Link, r.Title, r.Heading, r.Content
			rec.chunk, rec.chunkCount, rec.mtime = r.ChunkIndex, r.ChunkCount, r.MTime
			for _, h := range r.Headings {
				var s string
				var obj struct {
					Text  string `json:"text"`
					Level int    `json:"level"`
				}
				if json.Unmarshal(h, &s) == nil {
					rec.headings = append(rec.headings, s)
				} else if json.Unmarshal(h, &obj) == nil && obj.Text != "" {
					if len(rec.headings) == 0 {
						rec.firstLevel = obj.Level
					}
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

// hits are the notes the searches found, the latest search's first (a
// retry replaces a fruitless first search), each once, less copies: a hit
// with the name and the matching passage of one before it (the same page
// kept for each version of a product, a note duplicated into another
// folder) would only be read, quoted and named again.
func (st *convState) hits() []search.Result {
	var out []search.Result
	seen := map[string]bool{}
	type copyKey struct{ title, snippet string }
	copies := map[copyKey]bool{}
	for i := len(st.searches) - 1; i >= 0; i-- {
		for _, h := range st.searches[i].results {
			if h.Path == "" || seen[h.Path] {
				continue
			}
			seen[h.Path] = true
			if h.Snippet != "" {
				k := copyKey{strings.ToLower(h.Title), h.Snippet}
				if copies[k] {
					continue
				}
				copies[k] = true
			}
			out = append(out, h)
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

// A follow-up inherits the topic of the question before it only when it
// is elliptic: it leans on that question for its subject. "And on iOS?",
// "what about Android?", "how do I install it?", "why?" and "iOS?" are;
// "What is the Obsidian Hub?" names its own subject and starts afresh,
// even right after a question about something else.

// reAboutStart opens a message that is elliptic by its form.
var reAboutStart = regexp.MustCompile(`(?i)^\s*(?:and\s+)?(?:what about|how about|what of|same for|same with|same thing for)\b`)

// continuationWords open a message that goes on from the one before.
var continuationWords = toSet(`and also but so then ok okay or plus`)

// questionWords open a question or request that can name its own subject.
var questionWords = toSet(`what what's whats how how's why where where's when who who's whom whose which is are was were do does did can could should would will shall may might has have had tell show list find explain summarize summarise describe define compare give search look`)

// pronouns refer back to what the conversation was about.
var pronouns = toSet(`it its it's itself they them their theirs themselves same one ones`)

// demonstratives refer back when they end the question ("what is that?",
// "how do I set this up?"), not when a noun follows ("notes that mention
// kanban").
var demonstratives = toSet(`this that these those there`)

// elliptic reports whether goal leans on the conversation before it for
// its subject: it opens like "what about ...", refers back with a pronoun
// and has at most three words of its own, has no word of its own ("why?",
// "tell me more"), or is a fragment of one or two words, or opens with
// "and", "also", "but"... without being a question of its own.
func elliptic(goal string, terms queryTerms) bool {
	words := tokenize(goal)
	if len(words) == 0 {
		return false
	}
	if reAboutStart.MatchString(goal) {
		return true
	}
	n := len(terms.all())
	if n == 0 {
		return true
	}
	for i, w := range words {
		last := i == len(words)-1 || i == len(words)-2 && (words[i+1] == "up" || words[i+1] == "out" || words[i+1] == "on")
		if (pronouns[w] || demonstratives[w] && last && !existential(words, i)) && n <= 3 {
			return true
		}
	}
	i := 0
	for i < len(words) && continuationWords[words[i]] {
		i++
	}
	if i < len(words) && questionWords[words[i]] {
		return false // a question of its own, even after "and"
	}
	return i > 0 || n <= 2
}

// existential reports whether words[i] is the "there" of "is there".
func existential(words []string, i int) bool {
	if words[i] != "there" || i == 0 {
		return false
	}
	switch words[i-1] {
	case "is", "are", "was", "were", "be":
		return true
	}
	return false
}

var reCited = regexp.MustCompile(`\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]`)

// inherit gives a follow-up the topic of the conversation before it (msgs):
// the key terms of the previous question, added to the goal's, and the
// notes the previous answer cited.
func (st *convState) inherit(msgs []llm.Message) {
	prev := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && !injected(msgs[i].Content) && !extractTerms(cleanGoal(msgs[i].Content), false).empty() {
			prev = i
			break
		}
	}
	if prev < 0 {
		return
	}
	pexpr, prest := findTimeExpression(agent.PlainNamedNotes(reAttachedList.ReplaceAllString(cleanGoal(msgs[prev].Content), "")))
	pt := extractTerms(prest, pexpr != "")
	seen := map[string]bool{}
	for _, w := range st.terms.keywords {
		seen[w] = true
	}
	var added []string
	for _, w := range pt.keywords {
		if !seen[w] && len(added) < 4 {
			seen[w] = true
			added = append(added, w)
		}
	}
	st.terms.keywords = append(st.terms.keywords, added...)
	st.terms.phrases = append(st.terms.phrases, pt.phrases...)
	if len(added) > 0 {
		st.text = strings.TrimSpace(st.text + " " + strings.Join(added, " "))
	}
	for _, m := range msgs[prev+1:] {
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) > 0 {
			continue
		}
		for _, c := range reCited.FindAllStringSubmatch(m.Content, -1) {
			if name := strings.TrimSpace(c[1]); name != "" && !slices.Contains(st.prevCited, name) && len(st.prevCited) < 2 {
				st.prevCited = append(st.prevCited, name)
			}
		}
	}
}
