package protocol

import (
	"context"
	"reflect"
	"time"
)

//go:generate go test -run TestProtocolDoc -update

// Method names.
const (
	MethodInitialize    = "initialize"
	MethodShutdown      = "shutdown"
	MethodExit          = "exit"
	MethodCancelRequest = "$/cancelRequest"
	MethodVaultSearch   = "vault/search"
	MethodVaultReadNote = "vault/readNote"
	MethodVaultRelated  = "vault/related"
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

// Error codes beyond the JSON-RPC standard ones, as in LSP.
const (
	// CodeServerNotInitialized answers requests sent before initialize
	// completed.
	CodeServerNotInitialized = -32002
	// CodeRequestCancelled answers requests cancelled with $/cancelRequest.
	CodeRequestCancelled = -32800
)

// DefaultMaxMessageBytes is the largest message the sidecar accepts unless
// configured otherwise.
const DefaultMaxMessageBytes = 16 << 20

// AnswerUpdateInterval is the shortest gap between two agent/message
// notifications of a run that differ only in the answer: a streamed answer
// is coalesced so that a host re-renders at most about 20 times a second.
const AnswerUpdateInterval = 50 * time.Millisecond

// MaxNestingDepth is how deeply a message may nest objects and arrays; a
// deeper one is refused with -32600 "too deep" before it is decoded.
const MaxNestingDepth = 512

// MaxErrorMessageRunes caps the message of an error reply: an error that
// echoes its input (a huge path) is cut.
const MaxErrorMessageRunes = 1000

// Server is what the sidecar answers: one typed method per request and
// host notification, shaped func(ctx, *Params) (*Result, error). A result
// returned with an error rides along with it (agent/run's partial result
// on a cancellation).
type Server interface {
	Initialize(context.Context, *InitializeParams) (*InitializeResult, error)
	Shutdown(context.Context, *NoParams) (*Null, error)
	Exit(context.Context, *NoParams) (*Null, error)
	Search(context.Context, *SearchParams) (*Results, error)
	ReadNote(context.Context, *ReadNoteParams) (*NoteChunk, error)
	Related(context.Context, *RelatedParams) (*Results, error)
	Status(context.Context, *NoParams) (*StatusResult, error)
	Reindex(context.Context, *ReindexParams) (*ReindexResult, error)
	AgentRun(context.Context, *AgentRunParams) (*AgentRunResult, error)
	AgentStop(context.Context, *AgentStopParams) (*AgentStopResult, error)
	AgentInput(context.Context, *AgentInputParams) (*AgentInputResult, error)
}

// NoParams are the params of methods that take none.
type NoParams struct{}

// Null is the result of methods that answer null.
type Null struct{}

// Method is one method of the protocol: its documentation, how it is
// scheduled, and its handler.
type Method struct {
	Name string
	// Params and Result are nil for none / null.
	Params, Result reflect.Type
	// Notification marks host -> sidecar notifications (no reply).
	Notification bool
	// Slow methods run concurrently with everything after them; the rest
	// run in arrival order. Every method that does work on the vault (reads
	// a note, searches, indexes, runs the agent) is slow, so that the
	// control methods after it (vault/status, agent/stop, agent/input,
	// shutdown) are answered while it runs.
	Slow bool
	// Lenient methods accept unknown params, reporting them instead of
	// refusing the request (initialize, which LSP clients send with more).
	Lenient bool
	Doc     string

	call func(ctx context.Context, s Server, decode func(params any) error) (any, error)
}

// Handled reports whether the method has a handler on Server; the
// transport answers the others itself ($/cancelRequest).
func (m Method) Handled() bool { return m.call != nil }

// Call decodes the method's params with decode (given a pointer to the
// params value) and calls its handler on s. The result is nil for null.
func (m Method) Call(ctx context.Context, s Server, decode func(params any) error) (any, error) {
	return m.call(ctx, s, decode)
}

// handler binds a Server method to the table: h is a method expression
// such as Server.Search.
func handler[P, R any](h func(Server, context.Context, *P) (*R, error)) func(context.Context, Server, func(any) error) (any, error) {
	return func(ctx context.Context, s Server, decode func(any) error) (any, error) {
		var p P
		if err := decode(&p); err != nil {
			return nil, err
		}
		res, err := h(s, ctx, &p)
		if res == nil {
			return nil, err
		}
		return res, err
	}
}

// method describes a request or notification handled by h.
func method[P, R any](name string, h func(Server, context.Context, *P) (*R, error), m Method) Method {
	m.Name = name
	if t := reflect.TypeFor[P](); t != reflect.TypeFor[NoParams]() {
		m.Params = t
	}
	if t := reflect.TypeFor[R](); t != reflect.TypeFor[Null]() && !m.Notification {
		m.Result = t
	}
	m.call = handler(h)
	return m
}

// Methods is the protocol, in the order PROTOCOL.md lists it.
var Methods = []Method{
	method(MethodInitialize, Server.Initialize, Method{Slow: true, Lenient: true,
		Doc: "Opens the vault, opens or builds its index (sending vault/indexProgress), starts the watcher. Must be the first request; a second one is an error. An index that another vault-agent process holds is used through that process (which serves it on a private socket; this one takes it over if that one exits); one held by a process that does not share it (an older vault-agent) is waited for up to 5 s, then refused with -32603 \"index in use by another process\"; an index inside the vault is refused with -32602 \"index must be outside the vault\". A failed initialize leaves nothing open and may be retried. No model setting and nothing in the sidecar's environment makes it fail: the model is only built by the runs that use it."}),
	method(MethodShutdown, Server.Shutdown, Method{
		Doc: "Stops every run and refuses later requests (code -32600). Answers null once every request received before it has been answered: runs end with stop reason stopped, an initialize still running is cancelled (-32800), other requests finish (or are cancelled after the shutdown timeout). Follow with exit."}),
	method(MethodExit, Server.Exit, Method{Notification: true,
		Doc: "Ends the process: exit status 0 after shutdown, 1 without it."}),
	{Name: MethodCancelRequest, Params: reflect.TypeFor[CancelParams](), Notification: true,
		Doc: "Cancels an in-flight request; its reply has code -32800. On agent/run it stops the run (stop reason stopped) and the error's data holds the run's result."},
	method(MethodVaultSearch, Server.Search, Method{Slow: true,
		Doc: "Ranked search over the vault. Query language: Obsidian's (see SearchParams.query): free terms, \"phrase\", -term, OR, (groups), tag:#x, path:folder/, file:name, content:, match-case:, ignore-case:, line:, block:, section:, task:, task-todo:, task-done:, [property], [property:value], [property:null], [property:<5], /regex/. Results of line:, block:, section: and the task operators carry the matching lines (matches). mode: lexical, semantic or hybrid (the default with an embedding model)."}),
	method(MethodVaultReadNote, Server.ReadNote, Method{Slow: true,
		Doc: "One chunk of a note, the same shape as the agent's readNote tool. The path may be what a person types: exact path, without .md, [[wikilink]], basename, path tail."}),
	method(MethodVaultRelated, Server.Related, Method{Slow: true,
		Doc: "The notes closest in meaning to a note (similar notes), best first, each with its closest section. Needs an embedding model (the embedModel setting); without one, -32602."}),
	method(MethodVaultStatus, Server.Status, Method{
		Doc: "Index status."}),
	method(MethodVaultReindex, Server.Reindex, Method{Slow: true,
		Doc: "Reconciles the index with the disk (or rebuilds it with full), sending vault/indexProgress."}),
	method(MethodAgentRun, Server.AgentRun, Method{Slow: true,
		Doc: "Runs the agent to its end; meanwhile agent/message and agent/update notifications carry its progress. Several runs may be active at once."}),
	method(MethodAgentStop, Server.AgentStop, Method{
		Doc: "Asks a run to stop at its next phase boundary; the run ends with stop reason stopped. stopped is false when the run is unknown or already finished."}),
	method(MethodAgentInput, Server.AgentInput, Method{
		Doc: "Answers a run's agent_request_input. accepted is false when the run is unknown or finished."}),
}

// Lookup returns the method named name.
func Lookup(name string) (Method, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// MethodNames lists the request methods (not the notifications).
func MethodNames() []string {
	names := make([]string, 0, len(Methods))
	for _, m := range Methods {
		if !m.Notification {
			names = append(names, m.Name)
		}
	}
	return names
}

// Client is what the sidecar sends to the host: one typed method per
// notification. Notifications are best effort: the error says the
// connection is gone.
type Client interface {
	AgentMessage(context.Context, *AgentMessageParams) error
	AgentUpdate(context.Context, *AgentUpdateParams) error
	IndexProgress(context.Context, *IndexProgressParams) error
	LogMessage(context.Context, *LogMessageParams) error
}

// Notification is one sidecar -> host notification.
type Notification struct {
	Name   string
	Params reflect.Type
	Doc    string
}

// Notifications are the sidecar's notifications, in the order PROTOCOL.md
// lists them.
var Notifications = []Notification{
	{Name: NotifyAgentMessage, Params: reflect.TypeFor[AgentMessageParams](),
		Doc: "The whole current chat message of a run; each one replaces the previous. It starts with the reasoning marker " +
			"`<!--AGENT_REASONING:STATUS:SECONDS:STEPS-->`: parse it with /<!--AGENT_REASONING:(\\w+):(\\d+):(.+?)-->/. " +
			"Group 1 is the status: `reasoning` (steps are coming; only the last `reasoningWindow` steps are shown), " +
			"`collapsed` (the answer is streaming; every step is shown) or `complete` (the run ended; this is the last message). " +
			"Group 2 is the whole seconds elapsed since the run started. Group 3 is a JSON array of step strings: JSON.parse it " +
			"(it never contains `-->`). When there is text after the marker, a blank line (`\\n\\n`) separates them: the answer " +
			"so far, then, for a run that did not end with an answer, a note saying how it ended. That text is why the final " +
			"content minus its marker can differ from the result's `answer` (see AgentRunResult).\n\n" +
			"Rate: a message is sent only when the content changed. A change of the marker (a new step, the status, the elapsed " +
			"second, at most about one per second while reasoning) is sent at once. A change of the answer alone is coalesced: " +
			"at most one message per 50 ms, carrying the newest content, so a host re-renders at most about 20 times a second " +
			"while an answer streams. The last message of a run is always its exact final content, the same as agent/run's " +
			"`content`."},
	{Name: NotifyAgentUpdate, Params: reflect.TypeFor[AgentUpdateParams](),
		Doc: "A typed per-phase event of a run."},
	{Name: NotifyIndexProgress, Params: reflect.TypeFor[IndexProgressParams](),
		Doc: "Indexing progress during initialize and vault/reindex, at most about 10 per second, plus a final one with done == total. An index that was up to date (nothing to index) sends none."},
	{Name: NotifyLogMessage, Params: reflect.TypeFor[LogMessageParams](),
		Doc: "A warning or error worth showing to the user or the plugin author (type: 1 error, 2 warning, 3 info, 4 log)."},
}

// NotificationNames lists the notifications the sidecar sends.
func NotificationNames() []string {
	out := make([]string, len(Notifications))
	for i, n := range Notifications {
		out[i] = n.Name
	}
	return out
}

// NewClient returns the Client that sends each notification with notify.
func NewClient(notify func(ctx context.Context, method string, params any) error) Client {
	return client(notify)
}

type client func(ctx context.Context, method string, params any) error

func (c client) AgentMessage(ctx context.Context, p *AgentMessageParams) error {
	return c(ctx, NotifyAgentMessage, p)
}

func (c client) AgentUpdate(ctx context.Context, p *AgentUpdateParams) error {
	return c(ctx, NotifyAgentUpdate, p)
}

func (c client) IndexProgress(ctx context.Context, p *IndexProgressParams) error {
	return c(ctx, NotifyIndexProgress, p)
}

func (c client) LogMessage(ctx context.Context, p *LogMessageParams) error {
	return c(ctx, NotifyLogMessage, p)
}
