package rpc

import (
	"encoding/json"
	"reflect"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
)

// This file is the protocol: every method, its params and result types,
// and every notification. PROTOCOL.md is generated from it (go generate
// ./rpc, or go test ./rpc -run TestProtocolDoc -update).

//go:generate go test -run TestProtocolDoc -update

// Method names.
const (
	MethodInitialize    = "initialize"
	MethodShutdown      = "shutdown"
	MethodExit          = "exit"
	MethodCancelRequest = "$/cancelRequest"
	MethodVaultSearch   = "vault/search"
	MethodVaultReadNote = "vault/readNote"
	MethodVaultStatus   = "vault/status"
	MethodVaultReindex  = "vault/reindex"
	MethodAgentRun      = "agent/run"
	MethodAgentStop     = "agent/stop"
	MethodAgentInput    = "agent/input"

	NotifyAgentMessage  = "agent/message"
	NotifyAgentUpdate   = "agent/update"
	NotifyIndexProgress = "vault/indexProgress"
	NotifyLogMessage    = "window/logMessage"
)

// methodInfo describes one method of the protocol. The dispatch switch in
// server.go is the behaviour; this table is the documentation, the
// capability list and the concurrency class.
type methodInfo struct {
	Name string
	// Params and Result are nil for none / null.
	Params, Result reflect.Type
	// Notification marks host -> sidecar notifications (no reply).
	Notification bool
	// Slow methods run concurrently with everything after them; the rest
	// run in arrival order.
	Slow bool
	Doc  string
}

var methods = []methodInfo{
	{Name: MethodInitialize, Params: typeOf[InitializeParams](), Result: typeOf[InitializeResult](), Slow: true,
		Doc: "Opens the vault, opens or builds its index (sending vault/indexProgress), starts the watcher. Must be the first request; a second one is an error."},
	{Name: MethodShutdown, Result: nil,
		Doc: "Stops every run and refuses later requests (code -32600). Answers null. Follow with exit."},
	{Name: MethodExit, Notification: true,
		Doc: "Ends the process: exit status 0 after shutdown, 1 without it."},
	{Name: MethodCancelRequest, Params: typeOf[CancelParams](), Notification: true,
		Doc: "Cancels an in-flight request; its reply has code -32800. On agent/run it stops the run (stop reason stopped) and the error's data holds the run's result."},
	{Name: MethodVaultSearch, Params: typeOf[SearchParams](), Result: typeOf[search.Results](), Slow: true,
		Doc: "Ranked search over the vault. Query language: free terms, \"phrase\", -term, tag:#x, path:folder/, file:name, OR."},
	{Name: MethodVaultReadNote, Params: typeOf[ReadNoteParams](), Result: typeOf[search.NoteChunk](),
		Doc: "One chunk of a note, the same shape as the agent's readNote tool. The path may be what a person types: exact path, without .md, [[wikilink]], basename, path tail."},
	{Name: MethodVaultStatus, Result: typeOf[StatusResult](),
		Doc: "Index status."},
	{Name: MethodVaultReindex, Params: typeOf[ReindexParams](), Result: typeOf[ReindexResult](), Slow: true,
		Doc: "Reconciles the index with the disk (or rebuilds it with full), sending vault/indexProgress."},
	{Name: MethodAgentRun, Params: typeOf[AgentRunParams](), Result: typeOf[AgentRunResult](), Slow: true,
		Doc: "Runs the agent to its end; meanwhile agent/message and agent/update notifications carry its progress. Several runs may be active at once."},
	{Name: MethodAgentStop, Params: typeOf[AgentStopParams](), Result: typeOf[AgentStopResult](),
		Doc: "Asks a run to stop at its next phase boundary; the run ends with stop reason stopped. stopped is false when the run is unknown or already finished."},
	{Name: MethodAgentInput, Params: typeOf[AgentInputParams](), Result: typeOf[AgentInputResult](),
		Doc: "Answers a run's agent_request_input. accepted is false when the run is unknown or finished."},
}

// notificationInfo describes one sidecar -> host notification.
type notificationInfo struct {
	Name   string
	Params reflect.Type
	Doc    string
}

var notifications = []notificationInfo{
	{Name: NotifyAgentMessage, Params: typeOf[AgentMessageParams](),
		Doc: "The whole current chat message of a run (reasoning marker, then the answer so far); each one replaces the previous. Parse the marker with /<!--AGENT_REASONING:(\\w+):(\\d+):(.+?)-->/ and JSON.parse the third group."},
	{Name: NotifyAgentUpdate, Params: typeOf[AgentUpdateParams](),
		Doc: "A typed per-phase event of a run."},
	{Name: NotifyIndexProgress, Params: typeOf[IndexProgressParams](),
		Doc: "Indexing progress during initialize and vault/reindex, at most about 10 per second, plus a final one with done == total."},
	{Name: NotifyLogMessage, Params: typeOf[LogMessageParams](),
		Doc: "A warning or error worth showing to the user or the plugin author (type: 1 error, 2 warning, 3 info, 4 log)."},
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func lookupMethod(name string) (methodInfo, bool) {
	for _, m := range methods {
		if m.Name == name {
			return m, true
		}
	}
	return methodInfo{}, false
}

func methodNames() []string {
	names := make([]string, 0, len(methods))
	for _, m := range methods {
		if !m.Notification {
			names = append(names, m.Name)
		}
	}
	return names
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// Vault is the vault folder. Optional when the sidecar was started with
	// --vault.
	Vault string `json:"vault"`
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
	// Tools are the agent's tools.
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
	// Rebuilt is true when the index was built from scratch; Reason says why.
	Rebuilt bool   `json:"rebuilt"`
	Reason  string `json:"reason,omitempty"`
}

// CancelParams are the params of $/cancelRequest.
type CancelParams struct {
	// ID is the id of the request to cancel (number or string).
	ID json.RawMessage `json:"id"`
}

// SearchParams are the params of vault/search.
type SearchParams struct {
	// Query uses the query language; it may be empty when filters are given.
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
	History []llm.Message `json:"history,omitempty"`
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
	RunID  string `json:"runId"`
	Answer string `json:"answer"`
	// Content is the final whole message: reasoning marker, then the answer.
	Content string `json:"content"`
	// StopReason is final_answer, max_iterations, timeout, stopped,
	// await_user_input or error.
	StopReason string `json:"stopReason"`
	Iterations int    `json:"iterations"`
	ElapsedMs  int64  `json:"elapsedMs"`
	Plan       any    `json:"plan,omitempty"`
	Capsule    any    `json:"capsule,omitempty"`
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
	Plan *agent.PlanPayload `json:"plan,omitempty"`
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
