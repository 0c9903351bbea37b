package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/vault-agent/vault-agent/search"
)

// RelatedArgs are the arguments of relatedNotes.
type RelatedArgs struct {
	NotePath string `json:"notePath" jsonschema:"the note to find related notes for: a vault path, a title, or a [[wikilink]]"`
}

// RelatedResult is the result of relatedNotes.
type RelatedResult struct {
	Note    string          `json:"note"`
	Results []search.Result `json:"results"`
}

// relatedLimit is how many notes relatedNotes returns.
const relatedLimit = 8

// relatedTool finds the notes closest in meaning to a note; it is offered
// only when the vault has vectors (Deps.Related).
func relatedTool() *Tool {
	return defineTool(toolSpec[RelatedArgs]{
		name:    ToolRelated,
		version: toolsVersion,
		description: "Find the notes closest in meaning to a given note (similar notes), even when they share no words with it. " +
			"Returns the notes with a snippet of their closest section.",
		timeout: 15 * time.Second,
		tune:    func(s *schemaT) { minLen(s, "notePath", 1) },
		run: func(ctx context.Context, env toolEnv, a RelatedArgs) (any, error) {
			if env.related == nil {
				return nil, toolErrorf("related notes need an embedding model, and none is configured")
			}
			res, err := env.related.Related(ctx, a.NotePath, relatedLimit)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, toolErrorf("%v", err)
			}
			out := &RelatedResult{Note: a.NotePath, Results: make([]search.Result, 0, len(res.Results))}
			for _, r := range res.Results {
				r.Score = roundScore(r.Score)
				out.Results = append(out.Results, r)
			}
			return out, nil
		},
		summary: func(a RelatedArgs) string {
			return fmt.Sprintf("Looking for notes related to %s", noteLabel(a.NotePath))
		},
		outcome: func(out any) string {
			r := out.(*RelatedResult)
			return fmt.Sprintf("Found %d related note%s", len(r.Results), plural(len(r.Results)))
		},
	})
}
