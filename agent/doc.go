// Package agent runs the autonomous tool-calling loops (react, roa, par,
// staged) over the vault, owns the tool registry and the built-in tools, and
// emits typed events to a Sink.
//
// It knows nothing about JSON-RPC, markers or terminals: every output is a
// view of the event stream.
package agent
