// Package acp is the Agent Client Protocol front-end: `vault-agent acp`
// runs inside editors that host agents over ACP (Zed, Obsidian's Agent
// Client plugin, JetBrains, Neovim and Emacs clients). It speaks ACP v1
// (protocolVersion 1): JSON-RPC 2.0 over stdio, one message per line.
//
// Sessions. Each session/new names its vault by its cwd; the Backend opens
// that vault with service.Start (indexing and watching it) on first use,
// sessions on the same folder share it, and it is closed when the last of
// them closes, or at exit. A session keeps its settings (service.Settings)
// and the last turns of its conversation in memory; sessions are not persisted, so loadSession is
// not advertised. Several sessions may run at once; session/cancel stops
// only its own session's turn (through service.RunRequest.Stop), which then
// answers stopReason "cancelled".
//
// Modes and settings. The agent loops react, roa, par and staged are the
// session modes (session/set_mode) and also the "mode" session config
// option; "planner" (on/off) and "maxIterations" are config options too
// (session/set_config_option). Any serve setting of a run (mode,
// enableAgentPlannerV0, maxIterations, timeoutMs) may also be given as
// _meta.vaultAgent in session/new (for the session) or session/prompt (for
// that turn); see MetaKey.
//
// Prompt turns. Text blocks are the person's words. Resource links and
// embedded resources naming notes are the host's @-mentions: those notes
// are read first, each shown as a read tool call, and given to the model
// with the question (through the client's fs/read_text_file when it offers
// it, so unsaved edits are seen). Images and audio are refused with a clear
// error. The run is then streamed as session updates (see turnUpdates):
// the answer as agent_message_chunk, the reasoning steps ([Plan] [Act]
// [Obs] [Reflect]) as agent_thought_chunk, tool calls as tool_call and
// tool_call_update (localSearch is kind search, readNote kind read with
// the note's absolute path in locations), the planner's to-dos as plan.
// Stop reasons: end_turn, max_turn_requests (max iterations reached),
// cancelled, refusal (the model's content filter) and max_tokens. A run
// that fails answers with a JSON-RPC error.
//
// Room for edits. A tool call starts pending so that an edit proposal can
// wait there while the person is asked through session/request_permission,
// and the server keeps the client's fs capabilities so that an approved
// write can go through fs/write_text_file, keeping the editor's buffer in
// step.
//
// Library. The wire types and the JSON-RPC connection come from
// github.com/coder/acp-go-sdk, whose types are generated from the ACP
// schema; it was chosen over hand-written structs on sourcegraph/jsonrpc2
// after checking its schema against the one @agentclientprotocol/sdk 2.4.0
// ships (same protocol version, the same fields for everything used here)
// and driving it with that SDK's client (examples/acp-client). Two edges
// are handled here: the SDK logs a line that is not JSON-RPC and answers
// nothing, so filterInput answers those itself (-32700, -32600) before the
// SDK sees them; and it does not recover panics, so every handler does.
//
// The package writes nothing but protocol messages to its output; logs go
// to the Logger (stderr). It never writes into the vault, and it reaches
// the vault, index and agent only through Backend, whose NewBackend opens
// them with the service package; it reads no environment.
package acp
