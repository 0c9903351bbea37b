package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/search"
)

// Prompts are templates a person picks in their client ("/summarize_notes
// sourdough"). Each comes with the notes it is about already found, so the
// model starts reading at once instead of searching first.
const (
	promptSummarize = "summarize_notes"
	promptWeekly    = "weekly_review"
	// promptNotes caps the notes a prompt lists.
	promptNotes = 12
)

func (s *Server) addPrompts() {
	s.srv.AddPrompt(&sdk.Prompt{
		Name:        promptSummarize,
		Title:       "Summarize my notes about a topic",
		Description: "Summarize what the notes say about a topic, citing them. The best matching notes are listed in the prompt.",
		Arguments: []*sdk.PromptArgument{{
			Name: "topic", Title: "Topic", Required: true,
			Description: "what to summarize, as words to search for (search_notes' query language works too)",
		}},
	}, s.summarizePrompt)
	s.srv.AddPrompt(&sdk.Prompt{
		Name:        promptWeekly,
		Title:       "Weekly review",
		Description: "Review a week (or any period) from the notes written or dated in it: what happened, decisions, open loops, next steps.",
		Arguments: []*sdk.PromptArgument{{
			Name: "period", Title: "Period",
			Description: "the period to review, in words: \"last week\" (default), \"this week\", \"2026-03\", \"last 14 days\"",
		}},
	}, s.weeklyPrompt)
}

func userText(text string) *sdk.PromptMessage {
	return &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: text}}
}

func invalidPrompt(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func (s *Server) summarizePrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	topic := strings.TrimSpace(req.Params.Arguments["topic"])
	if topic == "" {
		return nil, invalidPrompt("%s needs a topic, e.g. \"sourdough starter\"", promptSummarize)
	}
	svc, err := s.vault(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	res, err := svc.Index().Search(ctx, search.Request{Query: topic, Limit: promptNotes})
	if err != nil {
		return nil, invalidPrompt("topic %q: %v", topic, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Summarize what my notes say about %q.\n\n", topic)
	if len(res.Results) == 0 {
		b.WriteString("A search of the vault found no note about it; try search_notes with other words before concluding there is none.")
	} else {
		fmt.Fprintf(&b, "Read the relevant notes with read_note (the chunk given is the best matching section; read more chunks "+
			"when a note is central) and search_notes for what is missing. Group the summary by theme, say where notes disagree "+
			"or changed over time, and cite every point with the note's path in [[ ]].\n\nBest matching notes (%d of %d):", len(res.Results), res.Total)
		for _, r := range res.Results {
			fmt.Fprintf(&b, "\n- %s [chunk %d]", label(r.Path, r.Title), r.ChunkIndex)
			if sn := cleanSnippet(r.Snippet, snippetBytes); sn != "" {
				b.WriteString(": " + sn)
			}
		}
	}
	return &sdk.GetPromptResult{
		Description: fmt.Sprintf("Summary of the notes about %q", topic),
		Messages:    []*sdk.PromptMessage{userText(b.String())},
	}, nil
}

func (s *Server) weeklyPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	period := strings.TrimSpace(req.Params.Arguments["period"])
	if period == "" {
		period = "last week"
	}
	tr, err := s.timeRange(period)
	if err != nil {
		return nil, invalidPrompt("period: %v", err)
	}
	svc, err := s.vault(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	picked := pickNotes(svc.Index(), false, func(m search.NoteMeta) bool { return inPeriod(m, tr.Start, tr.End) })
	var b strings.Builder
	fmt.Fprintf(&b, "Write my review of %s (%s) from my notes.\n\n", period, tr.Description)
	if len(picked) == 0 {
		b.WriteString("No note was written or dated in that period. Say so, and offer to look at another period.")
	} else {
		b.WriteString("Read the notes below with read_note. Then write: what I did and what happened; decisions made; " +
			"open questions and unfinished tasks (unchecked - [ ] items); what to carry into the next period. Keep it short, " +
			"and cite each point with the note's path in [[ ]].\n\n")
		fmt.Fprintf(&b, "Notes written or dated in the period (%d", len(picked))
		if len(picked) > promptNotes {
			fmt.Fprintf(&b, ", the first %d listed; notes_in_range %q lists them all", promptNotes, period)
		}
		b.WriteString("):")
		for _, m := range picked[:min(len(picked), promptNotes)] {
			fmt.Fprintf(&b, "\n- %s  %s", day(when(m)), label(m.Path, m.Title))
		}
	}
	return &sdk.GetPromptResult{
		Description: fmt.Sprintf("Review of %s (%s)", period, tr.Description),
		Messages:    []*sdk.PromptMessage{userText(b.String())},
	}, nil
}
