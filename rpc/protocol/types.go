package protocol

import "encoding/json"

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// Vault is the vault folder. One of vault, rootUri or rootPath is
	// needed, unless the sidecar was started with --vault.
	Vault string `json:"vault,omitempty"`
	// RootURI (a file:// URI) and RootPath are accepted instead of Vault,
	// as an LSP client sends them.
	RootURI  string `json:"rootUri,omitempty"`
	RootPath string `json:"rootPath,omitempty"`
	// Index is the index folder; default: the per-vault folder in the user
	// cache dir (or --index).
	Index string `json:"index,omitempty"`
	// Settings are the defaults of every agent/run.
	Settings *Settings `json:"settings,omitempty"`
	// ClientInfo identifies the host, for logs.
	ClientInfo *ClientInfo `json:"clientInfo,omitempty"`
}

// ClientInfo identifies the host.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	// ServerInfo identifies the sidecar.
	ServerInfo ServerInfo `json:"serverInfo"`
	// Capabilities list methods, notifications, modes and providers.
	Capabilities Capabilities `json:"capabilities"`
	// Tools are the tools a run with initialize's settings is offered (the
	// edit tools only with allowEdits, the planner's with the planner on).
	Tools []ToolInfo `json:"tools"`
	// Index reports how the index was made ready.
	Index IndexInfo `json:"index"`
	// UnknownSettings lists settings keys the sidecar does not know; they
	// were ignored (and reported with window/logMessage).
	UnknownSettings []string `json:"unknownSettings,omitempty"`
}

// ServerInfo identifies the sidecar.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Capabilities tell the host what this sidecar supports.
type Capabilities struct {
	// Methods are the request methods.
	Methods []string `json:"methods"`
	// Notifications are the notifications the sidecar sends.
	Notifications []string `json:"notifications"`
	// Modes are the agent loop modes.
	Modes []string `json:"modes"`
	// Providers are the model providers.
	Providers []string `json:"providers"`
	// Planner is true when the planner (enableAgentPlannerV0) is available.
	Planner bool `json:"planner"`
	// MaxMessageBytes is the largest message the sidecar accepts.
	MaxMessageBytes int64 `json:"maxMessageBytes"`
}

// ToolInfo is one agent tool.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// IndexInfo reports how initialize got the index ready.
type IndexInfo struct {
	// Notes is the number of indexed notes.
	Notes int `json:"notes"`
	// TookMs is how long opening and reconciling took.
	TookMs float64 `json:"tookMs"`
	// Rebuilt is true when an existing index had to be built again from
	// scratch (corrupt, another schema or vault, a full reindex asked);
	// Reason says why. It is false for a new index: see Created.
	Rebuilt bool   `json:"rebuilt"`
	Reason  string `json:"reason,omitempty"`
	// Created is true when there was no index yet (a first start on this
	// vault, or an index in memory) and every note was indexed anew.
	Created bool `json:"created"`
}

// CancelParams are the params of $/cancelRequest.
type CancelParams struct {
	// ID is the id of the request to cancel (number or string).
	ID json.RawMessage `json:"id"`
}

// SearchParams are the params of vault/search.
type SearchParams struct {
	// Query uses the query language, Obsidian's: free terms (ranked, none
	// required), "phrase" (\" inside), -term, -(a b) (not both), a OR b,
	// (groups), tag:#x (nested tags too), path:folder/ (a prefix),
	// file:name (contained), content:x (the text only), match-case:x,
	// ignore-case:x, line:x, block:x, section:x (a line, a block between
	// blank lines, a section between headings matching x), task:x,
	// task-todo:x, task-done:x (a task, an open one, a done one; alone:
	// any), [prop], [prop:x], [prop:null], [prop:<5], [prop:>=2026-03-01]
	// (numbers and dates), /regex/ (RE2, any case; path:/re/, file:/re/,
	// tag:/re/). An operator's x is a word, a "phrase", a /regex/ or a
	// group in parentheses whose every part is required ("line:(mix
	// -flour)", "task:(call OR email)"). It may be empty when filters are
	// given. It is at most 4096 bytes and 64 words (what whitespace
	// separates, OR aside); a longer one is refused with -32602 "query too
	// large", as are a query that does not parse and one whose operators
	// would check notes for more than 5 seconds.
	Query string `json:"query"`
	// Limit is the page size: default 10, at most 100.
	Limit int `json:"limit,omitempty"`
	// Tags keep notes carrying any of these tags (with or without '#';
	// nested tags match their parents).
	Tags []string `json:"tags,omitempty"`
	// Folders keep notes under any of these vault folders.
	Folders []string `json:"folders,omitempty"`
	// TimeRange keeps notes modified in the range or dated in it (their
	// frontmatter date or created, or a date their file name starts with).
	TimeRange *TimeRange `json:"timeRange,omitempty"`
	// Mode is lexical (words), semantic (meaning: the notes whose chunks
	// are closest to the query's embedding) or hybrid (both, their scores
	// fused, the meaning weighed more for a query whose words the vault
	// lacks). The default is hybrid when the sidecar has an
	// embedding model (the embedModel setting), else lexical; semantic and
	// hybrid without one are an error (-32602). Every filter applies in
	// every mode.
	Mode string `json:"mode,omitempty"`
}

// RelatedParams are the params of vault/related.
type RelatedParams struct {
	// Path names the note, as for vault/readNote.
	Path string `json:"path"`
	// Limit is the number of notes: default 10, at most 100.
	Limit int `json:"limit,omitempty"`
}

// TimeRange is a span of time in epoch milliseconds; zero means open.
type TimeRange struct {
	StartTime int64 `json:"startTime,omitempty"`
	EndTime   int64 `json:"endTime,omitempty"`
}

// ReadNoteParams are the params of vault/readNote.
type ReadNoteParams struct {
	// Path names the note.
	Path string `json:"path"`
	// ChunkIndex is the chunk to read (0-based, default 0).
	ChunkIndex *int `json:"chunkIndex,omitempty"`
}

// StatusResult is the result of vault/status.
type StatusResult struct {
	// Notes is the number of indexed notes.
	Notes int `json:"notes"`
	// Indexing is true while a sync, rebuild or watcher batch is running.
	Indexing bool `json:"indexing"`
	// Watching is true while the file watcher follows the vault.
	Watching bool `json:"watching"`
	// LastIndexedAt is epoch milliseconds; 0 when never.
	LastIndexedAt int64 `json:"lastIndexedAt"`
	// Progress is how far the first index is, while initialize builds it
	// (notes done of total).
	Progress *IndexProgressParams `json:"progress,omitempty"`
}

// ReindexParams are the params of vault/reindex.
type ReindexParams struct {
	// Full rebuilds the index from scratch instead of reconciling it.
	Full bool `json:"full,omitempty"`
}

// ReindexResult is the result of vault/reindex.
type ReindexResult struct {
	// Notes is the number of indexed notes afterwards.
	Notes int `json:"notes"`
	// TookMs is how long the reindex took.
	TookMs float64 `json:"tookMs"`
}

// AgentRunParams are the params of agent/run.
type AgentRunParams struct {
	// Message is the user's question or task.
	Message string `json:"message"`
	// History is the earlier conversation (roles user, assistant, system);
	// reasoning markers in it are stripped before the model sees it.
	History []Message `json:"history,omitempty"`
	// RunID names the run for agent/stop, agent/input and notifications;
	// generated when absent.
	RunID string `json:"runId,omitempty"`
	// SessionID ties runs of one chat together (plan review).
	SessionID string `json:"sessionId,omitempty"`
	// Settings override the initialize settings for this run.
	Settings *Settings `json:"settings,omitempty"`
}

// AgentRunResult is the result of agent/run.
type AgentRunResult struct {
	RunID string `json:"runId"`
	// Answer is the run's final answer as the model gave it ("" when the
	// run ended without one). Content minus its marker may differ: it has
	// the answer's leading blank lines dropped and, for a run that did not
	// end with an answer, a note saying how it ended ("Stopped by user.",
	// "Reached the maximum of 8 iterations.", "Error: ...").
	Answer string `json:"answer"`
	// Content is the final whole message: the complete reasoning marker,
	// then "\n\n" and the text shown (see agent/message). It is also the
	// content of the run's last agent/message.
	Content string `json:"content"`
	// StopReason is final_answer, max_iterations, timeout, stopped,
	// await_user_input or error.
	StopReason string          `json:"stopReason"`
	Iterations int             `json:"iterations"`
	ElapsedMs  int64           `json:"elapsedMs"`
	Plan       json.RawMessage `json:"plan,omitempty"`
	Capsule    json.RawMessage `json:"capsule,omitempty"`
	// Error says what went wrong when StopReason is error.
	Error string `json:"error,omitempty"`
	// UnknownSettings lists run settings keys that were ignored.
	UnknownSettings []string `json:"unknownSettings,omitempty"`
}

// AgentStopParams are the params of agent/stop.
type AgentStopParams struct {
	RunID string `json:"runId"`
}

// AgentStopResult is the result of agent/stop.
type AgentStopResult struct {
	Stopped bool `json:"stopped"`
}

// AgentInputParams are the params of agent/input.
type AgentInputParams struct {
	RunID   string `json:"runId"`
	Content string `json:"content"`
}

// AgentInputResult is the result of agent/input.
type AgentInputResult struct {
	Accepted bool `json:"accepted"`
}

// AgentMessageParams are the params of agent/message.
type AgentMessageParams struct {
	RunID   string `json:"runId"`
	Content string `json:"content"`
}

// Update types of agent/update.
const (
	UpdateAgentStart               = "agent_start"
	UpdateAgentTurnStart           = "agent_turn_start"
	UpdateAgentReason              = "agent_reason"
	UpdateToolStart                = "tool_start"
	UpdateToolComplete             = "tool_complete"
	UpdateToolError                = "tool_error"
	UpdateAgentObserve             = "agent_observe"
	UpdatePlanUpdated              = "plan_updated"
	UpdatePlanContinuation         = "plan_continuation"
	UpdatePlanReviewPending        = "plan_review_pending"
	UpdateAgentRequestInput        = "agent_request_input"
	UpdateAgentRequestInputTimeout = "agent_request_input_timeout"
	UpdateAgentStopped             = "agent_stopped"
	UpdateAgentCompletion          = "agent_completion"
)

// AgentUpdateParams are the params of agent/update. Which optional fields
// are set depends on UpdateType.
type AgentUpdateParams struct {
	RunID      string `json:"runId"`
	UpdateType string `json:"updateType"`
	// Step is the iteration (0 before the first turn).
	Step int `json:"step"`
	// Mode and MaxIterations: agent_start.
	Mode          string `json:"mode,omitempty"`
	MaxIterations int    `json:"maxIterations,omitempty"`
	// Content: agent_reason, agent_observe, plan_continuation.
	Content string `json:"content,omitempty"`
	// Tool, CallID, Arguments, Summary: tool_start; plus Output, LatencyMs
	// (tool_complete) or Error (tool_error).
	Tool      string          `json:"tool,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	LatencyMs float64         `json:"latencyMs,omitempty"`
	Error     string          `json:"error,omitempty"`
	// Plan: plan_updated, plan_review_pending.
	Plan *PlanPayload `json:"plan,omitempty"`
	// Question: agent_request_input.
	Question string `json:"question,omitempty"`
	// StopReason, Iterations, ElapsedMs: agent_stopped, agent_completion.
	StopReason string `json:"stopReason,omitempty"`
	Iterations int    `json:"iterations,omitempty"`
	ElapsedMs  int64  `json:"elapsedMs,omitempty"`
}

// IndexProgressParams are the params of vault/indexProgress.
type IndexProgressParams struct {
	Done  int `json:"done"`
	Total int `json:"total"`
	// Phase is absent while notes are indexed, and "embed" while their
	// chunks are embedded for semantic search (done and total then count
	// chunks).
	Phase string `json:"phase,omitempty"`
}

// Message types of window/logMessage (as in LSP).
const (
	LogError   = 1
	LogWarning = 2
	LogInfo    = 3
	LogLog     = 4
)

// LogMessageParams are the params of window/logMessage.
type LogMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// Results is a page of results.
type Results struct {
	Results []Result `json:"results"`
	// Total counts all matching notes, not just this page.
	Total  int     `json:"total"`
	TookMs float64 `json:"tookMs"`
	// Fuzzy is true when the exact query matched nothing and fuzzy matching
	// produced these results.
	Fuzzy bool `json:"fuzzy,omitempty"`
	// Partial is true when no note matched enough of the free terms and
	// these results match only some of them.
	Partial bool `json:"partial,omitempty"`
}

// Result is one matching note.
type Result struct {
	Path  string  `json:"path"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// Snippet is text from the best matching chunk with matches wrapped in
	// "**" (markdown bold).
	Snippet    string   `json:"snippet"`
	Heading    string   `json:"heading"`
	ChunkIndex int      `json:"chunkIndex"`
	Tags       []string `json:"tags"`
	// MTime is the note's modification time in epoch milliseconds.
	MTime int64 `json:"mtime"`
	// Date is the note's own date in epoch milliseconds (frontmatter date
	// or created, or a date its file name starts with), absent when none.
	Date int64 `json:"date,omitempty"`
	// Matches are the lines where the query's line:, block:, section:,
	// task:, task-todo: and task-done: operators matched, in line order
	// (at most 10); absent without such an operator.
	Matches []Match `json:"matches,omitempty"`
}

// Match is a line of a note where an operator of the query matched.
type Match struct {
	// Line is the 1-based line in the file, frontmatter included.
	Line int `json:"line"`
	// Text is the line as written (a task as "- [ ] text"), cut at 200
	// characters.
	Text string `json:"text"`
	// Kind is the operator: line, block, section, task, task-todo or
	// task-done.
	Kind string `json:"kind"`
}

// NoteChunk is one chunk of a note: the result of readNote and of the vault/readNote method.
type NoteChunk struct {
	Path             string    `json:"path"`
	Title            string    `json:"title"`
	Aliases          []string  `json:"aliases,omitempty"`
	ChunkIndex       int       `json:"chunkIndex"`
	ChunkCount       int       `json:"chunkCount"`
	Heading          string    `json:"heading"`
	Content          string    `json:"content"`
	Headings         []Heading `json:"headings"`
	Links            []Link    `json:"links"`
	Tags             []string  `json:"tags"`
	MTime            int64     `json:"mtime"`
	FrontmatterError string    `json:"frontmatterError,omitempty"`
}

// Heading is one ATX or setext heading of a note.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
	Line  int    `json:"line"`
}

// Link is a wikilink, embed or markdown link found in a note.
type Link struct {
	Target  string `json:"target"`
	Heading string `json:"heading,omitempty"`
	Alias   string `json:"alias,omitempty"`
	Embed   bool   `json:"embed,omitempty"`
	// Kind is "wikilink" or "markdown".
	Kind string `json:"kind"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are set on assistant messages that call tools.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID and Name are set on tool result messages.
	ToolCallID string `json:"toolCallId,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw JSON text the model produced; it may be malformed.
	Arguments string `json:"arguments"`
}

// PlanPayload is carried by PlanAuthored and PlanUpdated.
type PlanPayload struct {
	Revision int    `json:"revision"`
	Todos    []Todo `json:"todos,omitempty"`
	Focus    string `json:"focus,omitempty"`
	Note     string `json:"note,omitempty"`
	// Summary is a one-line description for the reasoning block.
	Summary string `json:"summary"`
	// Plan is the typed plan in par mode.
	Plan json.RawMessage `json:"plan,omitempty"`
	// Diff describes what changed from the previous version (par mode).
	Diff json.RawMessage `json:"diff,omitempty"`
}

// Todo is one item of a write_todos plan.
type Todo struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}
