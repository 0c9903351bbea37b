package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// ToolNoteLinks lists a note's links both ways.
const ToolNoteLinks = "getNoteLinks"

// noteLinksLimit caps each list of getNoteLinks.
const noteLinksLimit = 50

// LinkIndex is what getNoteLinks needs of the index; *search.Index and a
// follower's shared index satisfy it. The tool is offered when Deps.Index
// has it.
type LinkIndex interface {
	ReadNote(name string) (*vault.Note, error)
	search.LinkGraph
}

// NoteLinksArgs are the arguments of getNoteLinks.
type NoteLinksArgs struct {
	NotePath string `json:"notePath" jsonschema:"the note: a vault path, a title, or a [[wikilink]]"`
}

func linkTools() []*Tool {
	return []*Tool{defineTool(toolSpec[NoteLinksArgs]{
		name:    ToolNoteLinks,
		version: toolsVersion,
		description: "List a note's links both ways: the notes it links to (each target once, with the note it resolves to, none when unresolved) " +
			"and the notes that link to it (backlinks), each with how many times.",
		timeout: 10 * time.Second,
		tune:    func(s *schemaT) { minLen(s, "notePath", 1) },
		run: func(ctx context.Context, env toolEnv, a NoteLinksArgs) (any, error) {
			li, ok := env.index.(LinkIndex)
			if !ok {
				return nil, toolErrorf("this vault's index cannot list links")
			}
			n, err := li.ReadNote(a.NotePath)
			if err != nil {
				return nil, toolErrorf("%v", err)
			}
			links, err := search.LinksOf(ctx, li, n, noteLinksLimit)
			if err != nil {
				return nil, toolFailure(ctx, err)
			}
			return links, nil
		},
		summary: func(a NoteLinksArgs) string { return fmt.Sprintf("Listing the links of %s", noteLabel(a.NotePath)) },
		outcome: func(out any) string {
			l := out.(*search.NoteLinks)
			return fmt.Sprintf("Found %d link%s out and %d note%s linking in", l.OutgoingTotal, plural(l.OutgoingTotal), l.BacklinkTotal, plural(l.BacklinkTotal))
		},
	})}
}
