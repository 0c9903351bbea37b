// Package rpc is the JSON-RPC 2.0 server that editor and plugin hosts talk
// to over stdio. The wire protocol is package rpc/protocol (PROTOCOL.md is
// generated from it); this package is its transport, its handlers, and the
// mapping between wire types and the domain types of the packages below.
//
// A host connection is one Server: New(Config), then Serve(ctx, stdin,
// stdout). Serve owns the connection's whole life: initialize opens the
// vault with service.Open (its index, the watcher and the agent); shutdown
// and exit, the host closing stdin, or the host no longer reading stdout
// end it, and Serve then cancels every request and run and closes the
// vault before it returns. Serve returns ErrExitWithoutShutdown when exit came
// without shutdown (the command exits with status 1, as LSP servers do).
//
// Transport. Messages are framed with Content-Length headers (CodecHeader,
// what vscode-jsonrpc speaks) or one per line (CodecLine). The stream
// refuses messages larger than Config.MaxMessageBytes without buffering
// them, answers invalid JSON with -32700 and malformed requests with
// -32600, and keeps reading; only input it cannot resynchronize on (an
// endless header line, a bad Content-Length) ends the connection, cleanly
// and with a log line.
//
// Handling. Every message goes through one middleware chain, as in gopls:
// cancelHandler (on jsonrpc2's read loop: $/cancelRequest is applied before
// any queue; each request gets a cancellable context) -> asyncHandler
// (one goroutine per message, started in arrival order; quick methods and
// notifications run one after another, slow ones — initialize,
// vault/search, vault/reindex, agent/run — release the queue at once and
// run concurrently) -> mustReplyHandler (exactly one reply; a panic becomes
// -32603) -> Server.dispatch, which looks the method up in
// protocol.Methods: the one table that documents each method and also
// decodes its params and calls its typed handler, a method of Server
// shaped func(ctx, *XParams) (*XResult, error). Handler errors
// become *jsonrpc2.Error once, in toRPCError. Replies are sent with
// context.WithoutCancel; a request cancelled by the host is answered with
// -32800.
//
// Agent runs. agent/run runs the agent through service.Run and turns its
// event stream into agent/update notifications and, through
// reasoning.Observer, agent/message notifications carrying the whole host
// message (reasoning marker and answer); notifications go out through the
// typed protocol.Client. The agent keeps the only registry of runs:
// agent/stop and $/cancelRequest stop a run there. agent/stop and
// agent/input are quick methods, never queued behind a run.
//
// The package writes nothing but protocol bytes to the output; logs go to
// Config.Logger, and warnings are also forwarded to the host as
// window/logMessage. It never writes into the vault. It does not parse
// notes, rank results or run loops itself: vault, search and agent do.
package rpc
