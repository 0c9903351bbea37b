package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/vault-agent/vault-agent/vault"
)

// Names of the edit tools, offered only to runs with Config.AllowEdits and
// an Editor.
const (
	ToolCreateNote    = vault.EditCreate
	ToolAppendToNote  = vault.EditAppend
	ToolReplaceInNote = vault.EditReplace
	ToolSetProperties = vault.EditSetProperties
)

// IsEditTool reports whether name is one of the edit tools.
func IsEditTool(name string) bool {
	switch name {
	case ToolCreateNote, ToolAppendToNote, ToolReplaceInNote, ToolSetProperties:
		return true
	}
	return false
}

// Editor carries out the edit tools' calls of one run: it works the edit
// out as a proposal, has the person approve or refuse it through the
// front-end, and writes it when approved. A proposal that cannot be made
// (a path outside the vault, a note that exists, text not found) is an
// error the model sees; an edit refused, timed out or in conflict is an
// EditOutcome with Applied false and the reason. Edit is called from the
// run's goroutine and must return when ctx ends.
type Editor interface {
	Edit(ctx context.Context, req vault.EditRequest) (*EditOutcome, error)
}

// EditOutcome is what an edit tool returns to the model.
type EditOutcome struct {
	Applied bool   `json:"applied"`
	Path    string `json:"path"`
	// Reason says why the edit was not applied (refused by the person, no
	// answer in time, the note changed since it was read).
	Reason string `json:"reason,omitempty"`
	// Diff is the unified diff proposed.
	Diff string `json:"diff,omitempty"`
}

// ErrApprovalTimeout is the cause of the context of an Editor.Edit whose
// approval was not given within the run's request-input timeout.
var ErrApprovalTimeout = errors.New("no answer to the edit within the request-input timeout")

// CreateNoteArgs are the arguments of create_note.
type CreateNoteArgs struct {
	Path    string `json:"path" jsonschema:"the vault path of the new note, ending in .md (folders are created)"`
	Content string `json:"content" jsonschema:"the whole markdown text of the note"`
}

// AppendToNoteArgs are the arguments of append_to_note.
type AppendToNoteArgs struct {
	Path    string `json:"path" jsonschema:"the vault path of an existing note"`
	Content string `json:"content" jsonschema:"the markdown text to add"`
	Heading string `json:"heading,omitempty" jsonschema:"add the text at the end of this heading's section instead of the end of the note"`
}

// ReplaceInNoteArgs are the arguments of replace_in_note.
type ReplaceInNoteArgs struct {
	Path    string `json:"path" jsonschema:"the vault path of an existing note"`
	Find    string `json:"find" jsonschema:"the exact text to replace, as it is in the note; it must occur exactly once"`
	Replace string `json:"replace" jsonschema:"the text to put in its place"`
}

// SetPropertiesArgs are the arguments of set_properties.
type SetPropertiesArgs struct {
	Path       string         `json:"path" jsonschema:"the vault path of an existing note"`
	Properties map[string]any `json:"properties" jsonschema:"frontmatter properties to set (a null value removes one); other properties stay as written"`
}

const editNote = " The person is shown the change as a diff and approves or refuses it; the result says whether it was applied and, if not, why."

// editTools returns the edit tools.
func editTools() []*Tool {
	return []*Tool{
		editTool(ToolCreateNote, "Create a new note. Refused if a note exists at the path.",
			"Proposing a new note ", []string{"path"},
			func(a CreateNoteArgs) vault.EditRequest {
				return vault.EditRequest{Path: a.Path, Content: a.Content}
			}),
		editTool(ToolAppendToNote, "Add text at the end of a note, or at the end of one heading's section.",
			"Proposing an addition to ", []string{"path", "content"},
			func(a AppendToNoteArgs) vault.EditRequest {
				return vault.EditRequest{Path: a.Path, Content: a.Content, Heading: a.Heading}
			}),
		editTool(ToolReplaceInNote, "Replace one exact passage of a note (it must occur exactly once; read the note first).",
			"Proposing a change to ", []string{"path", "find"},
			func(a ReplaceInNoteArgs) vault.EditRequest {
				return vault.EditRequest{Path: a.Path, Find: a.Find, Replace: a.Replace}
			}),
		editTool(ToolSetProperties, "Set frontmatter properties of a note (tags, status, dates...), keeping the rest of its frontmatter as written.",
			"Proposing properties for ", []string{"path"},
			func(a SetPropertiesArgs) vault.EditRequest {
				return vault.EditRequest{Path: a.Path, Properties: a.Properties}
			}),
	}
}

// editTool builds one edit tool: its arguments become an EditRequest of op
// name (request sets every field but Op), the fields in nonEmpty must not be
// empty, and the progress summary is summary followed by the note's label.
func editTool[A any](name, description, summary string, nonEmpty []string, request func(A) vault.EditRequest) *Tool {
	return defineTool(toolSpec[A]{
		name: name, version: toolsVersion,
		description: description + editNote,
		tune: func(s *schemaT) {
			for _, f := range nonEmpty {
				minLen(s, f, 1)
			}
		},
		inline: func(ctx context.Context, r *runState, a A) (any, error) {
			req := request(a)
			req.Op = name
			return r.edit(ctx, req)
		},
		summary: func(a A) string { return summary + noteLabel(request(a).Path) },
		outcome: editOutcome,
	})
}

func editOutcome(out any) string {
	o := out.(*EditOutcome)
	if o.Applied {
		return "Edited " + noteLabel(o.Path)
	}
	return fmt.Sprintf("Edit of %s not applied: %s", noteLabel(o.Path), o.Reason)
}

// edit hands one edit to the run's Editor, waiting for the person's answer
// at most the request-input timeout and no longer than the run: a stop
// ends the wait.
func (r *runState) edit(ctx context.Context, req vault.EditRequest) (any, error) {
	if r.editor == nil || !r.cfg.AllowEdits {
		return nil, toolErrorf("edits are not enabled in this run")
	}
	ectx, cancel := context.WithTimeoutCause(ctx, r.cfg.RequestInputTimeout, ErrApprovalTimeout)
	defer cancel()
	defer context.AfterFunc(r.stopCtx, cancel)()
	out, err := r.editor.Edit(ectx, req)
	if err != nil {
		if ctx.Err() != nil || r.stopCtx.Err() != nil {
			return nil, fmt.Errorf("edit of %s: %w", req.Path, context.Cause(ectx))
		}
		return nil, toolErrorf("%v", err)
	}
	return out, nil
}
