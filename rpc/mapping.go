package rpc

import (
	"encoding/json"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

// This file maps between the wire (package protocol) and the domain types
// of the packages below, in both directions, so neither changes the other.

// settingsOf is the domain form of wire settings (nil: none).
func settingsOf(p *protocol.Settings) service.Settings {
	if p == nil {
		return service.Settings{}
	}
	return service.Settings{
		Provider:             p.Provider,
		Model:                p.Model,
		BaseURL:              p.BaseURL,
		Mode:                 p.Mode,
		MaxIterations:        p.MaxIterations,
		Timeout:              time.Duration(p.TimeoutMs) * time.Millisecond,
		Planner:              p.EnableAgentPlannerV0,
		PlanReview:           p.PlanReview,
		MaxPlanContinuations: p.MaxPlanContinuations,
		PlanReminderInterval: p.PlanReminderInterval,
		RequestInputTimeout:  time.Duration(p.RequestInputTimeoutMs) * time.Millisecond,
		ReasoningWindow:      p.ReasoningWindow,
		Trace:                p.Trace,
		EmbedModel:           p.EmbedModel,
		EmbedBaseURL:         p.EmbedBaseURL,
		AllowEdits:           p.AllowEdits,
		Excludes:             p.Excludes,
		ObsidianExcludes:     p.ObsidianExcludes,
	}
}

// historyOf is the domain form of a wire history.
func historyOf(msgs []protocol.Message) []llm.Message {
	if msgs == nil {
		return nil
	}
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = llm.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return out
}

// WireResults is the wire form of search results: vault/search's result,
// which the command line's search --json prints too.
func WireResults(r *search.Results) *protocol.Results {
	out := &protocol.Results{Results: make([]protocol.Result, len(r.Results)), Total: r.Total, TookMs: r.TookMs, Fuzzy: r.Fuzzy, Partial: r.Partial}
	for i, h := range r.Results {
		out.Results[i] = protocol.Result{Path: h.Path, Title: h.Title, Score: h.Score, Snippet: h.Snippet, Heading: h.Heading,
			ChunkIndex: h.ChunkIndex, Tags: h.Tags, MTime: h.MTime, Date: h.Date}
		for _, m := range h.Matches {
			out.Results[i].Matches = append(out.Results[i].Matches, protocol.Match{Line: m.Line, Text: m.Text, Kind: m.Kind})
		}
	}
	return out
}

// wireChunk is the wire form of a note chunk.
func wireChunk(c *search.NoteChunk) *protocol.NoteChunk {
	out := &protocol.NoteChunk{Path: c.Path, Title: c.Title, Aliases: c.Aliases, ChunkIndex: c.ChunkIndex, ChunkCount: c.ChunkCount,
		Heading: c.Heading, Content: c.Content, Headings: make([]protocol.Heading, len(c.Headings)), Links: make([]protocol.Link, len(c.Links)),
		Tags: c.Tags, MTime: c.MTime, FrontmatterError: c.FrontmatterError}
	for i, h := range c.Headings {
		out.Headings[i] = protocol.Heading{Level: h.Level, Text: h.Text, Line: h.Line}
	}
	for i, l := range c.Links {
		out.Links[i] = protocol.Link{Target: l.Target, Heading: l.Heading, Alias: l.Alias, Embed: l.Embed, Kind: l.Kind}
	}
	return out
}

// wirePlan is the wire form of a plan event's payload.
func wirePlan(p agent.PlanPayload) *protocol.PlanPayload {
	out := &protocol.PlanPayload{Revision: p.Revision, Focus: p.Focus, Note: p.Note, Summary: p.Summary,
		Plan: rawJSON(p.Plan), Diff: rawJSON(p.Diff)}
	for _, t := range p.Todos {
		out.Todos = append(out.Todos, protocol.Todo{ID: t.ID, Content: t.Content, Status: t.Status})
	}
	return out
}

// wireRunResult is the wire form of a run's result; content is the final
// host message.
func wireRunResult(r *agent.Result, content string, unknown []string) *protocol.AgentRunResult {
	return &protocol.AgentRunResult{
		RunID: r.RunID, Answer: r.Answer, Content: content, StopReason: r.StopReason, Iterations: r.Iterations,
		ElapsedMs: r.ElapsedMs, Plan: rawJSON(r.Plan), Capsule: rawJSON(r.Capsule), Error: r.Error, UnknownSettings: unknown,
	}
}

// rawJSON is v as JSON; nil for nil (or a value that cannot be encoded).
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
