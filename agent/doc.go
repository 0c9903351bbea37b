// Package agent runs the autonomous tool-calling loops (react, roa, par,
// staged) over the vault, owns the tool registry and the built-in tools, and
// emits typed events to a Sink.
//
// Runs. An Agent keeps the one registry of active runs: Run runs one to its
// end (several may run at once), Stop and StopAll stop them at their next
// phase boundary, Input answers request_input, NewRunID names a run before
// it starts. A run's timeout is the cause of its context (ErrRunTimeout),
// so why a run ended is read from its context.
//
// Tools. A Tool has a schema generated from its Go argument type, a
// timeout and one-line summaries. Vault tools run on a goroutine of their
// own and see only the index and the clock, so a call that times out can be
// abandoned safely; what they record in the run is recorded on the run's
// goroutine. The planner tools and request_input run on the run's
// goroutine. Names and phase tags are exported (names.go) for models that
// play the agent's policy, such as agent/offline.
//
// Events. Every significant action is an append-only Event with one of a
// closed set of payload types; Event.UnmarshalJSON (DecodePayload) is the
// one decoder of payloads read back from a trace. TraceWriter writes a
// run's events as JSON lines; agent/replay reads and replays them.
//
// The package knows nothing about front-ends (JSON-RPC, the command line),
// reasoning markers, the environment or terminals: every output is a view
// of the event stream, and models, the index and paths are handed to it.
package agent
