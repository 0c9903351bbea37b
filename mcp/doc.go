// Package mcp is vault-agent's Model Context Protocol front-end: an MCP
// server (the official Go SDK) over the live index of one vault, for Claude
// Desktop, Claude Code, Cursor, VS Code and any MCP client, with Obsidian
// closed.
//
// Tools (all read-only, each with an input schema and an output schema
// from Go structs, structured content and, beside it, compact text written
// for a model): search_notes (ranked hits with a clean snippet and the
// chunk to read), read_note (one chunk or the section under a heading),
// list_notes, list_tags, links (outgoing links and backlinks),
// notes_in_range (a time expression), and ask_vault (the agent, with
// progress notifications and cancellation). Notes are resources under
// vault:///path with a template for lenient reads; a change the watcher
// applies updates the resource list and notifies subscribers. Two prompts,
// summarize_notes and weekly_review, come with their notes already found.
//
// A bad path, an escape from the vault, an unknown note, a bad query or
// bad arguments are tool results with isError set and a message that says
// what to do, never protocol errors; larger limits than allowed are
// clamped; a panic in a tool becomes an error result and the server goes
// on.
//
// The vault comes opened by the service package (Config.Vault, a
// service.Opening: the server answers at once and the tools wait for the
// index, reporting its progress); the tools read through search.Index
// (ReadNote, Backlinks, ResolveLink, Notes, Tags, SubscribeChanges for the
// resources) and ask_vault runs service.Service.Run. The package reads no
// environment, never writes to the vault, and writes nothing to stdout
// itself: over stdio, stdout carries only the SDK's protocol messages.
package mcp
