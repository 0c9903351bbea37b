package mcp

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// EditOutput is the result of an edit tool.
type EditOutput struct {
	Applied bool   `json:"applied" jsonschema:"whether the edit was written"`
	Path    string `json:"path" jsonschema:"the note's vault path"`
	Reason  string `json:"reason,omitempty" jsonschema:"why the edit was not applied (the note changed since it was read, or appeared)"`
	Diff    string `json:"diff" jsonschema:"the unified diff of the edit"`
	// EditID names the edit in the journal: vault-agent undo --run EditID
	// reverts it.
	EditID string `json:"editId" jsonschema:"the edit's id in the journal (vault-agent undo --run <editId> reverts it)"`
}

// edit annotations: the tools change the vault, so clients ask their user
// before each call as they do for any destructive tool.
func destructive(title string) *sdk.ToolAnnotations {
	yes, no := true, false
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: &yes, OpenWorldHint: &no}
}

var editSeq atomic.Int64

// editNote ends each edit tool's description.
const editNote = " The vault is changed only by this call: the edit is written atomically, journaled outside the vault " +
	"(vault-agent undo reverts it) and indexed at once. Read the note first; the result has the diff."

// addEditTools adds the edit tools (Config.AllowEdits). The client's
// approval of the call is the person's approval of the edit: the server
// then writes it as every front-end does (atomic, refused if the note
// changed since it was read, journaled for undo, reindexed at once).
func (s *Server) addEditTools() {
	addEditTool(s, agent.ToolCreateNote, "Create a note",
		"Create a new markdown note at a vault path ending in .md (folders are created). Refused if a note exists there.",
		func(in agent.CreateNoteArgs) vault.EditRequest {
			return vault.EditRequest{Op: vault.EditCreate, Path: in.Path, Content: in.Content}
		})
	addEditTool(s, agent.ToolAppendToNote, "Append to a note",
		"Add markdown text at the end of an existing note, or at the end of one heading's section (heading).",
		func(in agent.AppendToNoteArgs) vault.EditRequest {
			return vault.EditRequest{Op: vault.EditAppend, Path: in.Path, Content: in.Content, Heading: in.Heading}
		})
	addEditTool(s, agent.ToolReplaceInNote, "Replace text in a note",
		"Replace one exact passage of a note with new text. find must occur exactly once, as written in the note (read_note shows it).",
		func(in agent.ReplaceInNoteArgs) vault.EditRequest {
			return vault.EditRequest{Op: vault.EditReplace, Path: in.Path, Find: in.Find, Replace: in.Replace}
		})
	addEditTool(s, agent.ToolSetProperties, "Set note properties",
		"Set frontmatter properties of a note (tags, status, dates...; null removes one). The rest of the frontmatter keeps its order, comments and quoting.",
		func(in agent.SetPropertiesArgs) vault.EditRequest {
			return vault.EditRequest{Op: vault.EditSetProperties, Path: in.Path, Properties: in.Properties}
		})
}

// addEditTool adds one destructive edit tool whose arguments In become the
// edit request; s.edit writes it.
func addEditTool[In any](s *Server, name, title, description string, request func(In) vault.EditRequest) {
	addTool(s, &sdk.Tool{
		Name:        name,
		Annotations: destructive(title),
		Description: description + editNote,
	}, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, EditOutput, error) {
		return s.edit(ctx, req, request(in))
	})
}

func (s *Server) edit(ctx context.Context, req *sdk.CallToolRequest, er vault.EditRequest) (*sdk.CallToolResult, EditOutput, error) {
	var out EditOutput
	svc, err := s.vault(ctx, req.Session, req.Params.GetProgressToken())
	if err != nil {
		return nil, out, err
	}
	id := fmt.Sprintf("mcp-%d-%d", time.Now().UnixMilli(), editSeq.Add(1))
	o, err := svc.Edit(ctx, id, service.Approved, er)
	if err != nil {
		return nil, out, err
	}
	out = EditOutput{Applied: o.Applied, Path: o.Path, Reason: o.Reason, Diff: o.Diff, EditID: id}
	if !o.Applied {
		res := result(fmt.Sprintf("Not applied to %s: %s", o.Path, o.Reason))
		res.IsError = true
		return res, out, nil
	}
	return result(fmt.Sprintf("Applied to %s (edit %s):\n%s", o.Path, id, o.Diff)), out, nil
}
