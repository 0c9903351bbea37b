package protocol

import "reflect"

// MethodApplyEdit is the sidecar's request to the host for approval of an
// edit the agent proposes.
const MethodApplyEdit = "vault/applyEdit"

// ApplyEditParams are the params of vault/applyEdit: one proposed edit.
type ApplyEditParams struct {
	// RunID is the run that proposes the edit.
	RunID string `json:"runId"`
	// Path is the vault path of the note.
	Path string `json:"path"`
	// URI is the note's file:// URI.
	URI string `json:"uri"`
	// Operation is the tool that proposes it: create_note, append_to_note, replace_in_note or set_properties.
	Operation string `json:"operation"`
	// Diff is the unified diff of the change ("--- a/<path>" / "+++ b/<path>"; "--- /dev/null" for a new note), to show the person: control characters, text-direction (bidi) characters and bytes that are not UTF-8 are escaped in it (\r, \x1b, \u202e), so the line shown is the line written; newText has them as they are.
	Diff string `json:"diff"`
	// Hash is the hex SHA-256 of the note as the agent read it; absent for a new note. The edit is refused if the note no longer has it when approved.
	Hash string `json:"hash,omitempty"`
	// Create is true when the edit creates the note.
	Create bool `json:"create,omitempty"`
	// NewText is the whole note as it would be after the edit.
	NewText string `json:"newText"`
}

// ApplyEditResult is the host's answer to vault/applyEdit.
type ApplyEditResult struct {
	// Applied approves the edit: the sidecar then writes it (atomically, unless the note changed meanwhile). false refuses it.
	Applied bool `json:"applied"`
	// Reason says why the edit was refused; the agent is told.
	Reason string `json:"reason,omitempty"`
}

// SidecarRequest is one sidecar -> host request.
type SidecarRequest struct {
	Name           string
	Params, Result reflect.Type
	Doc            string
}

// SidecarRequests are the requests the sidecar sends the host, in the
// order PROTOCOL.md lists them.
var SidecarRequests = []SidecarRequest{
	{Name: MethodApplyEdit, Params: reflect.TypeFor[ApplyEditParams](), Result: reflect.TypeFor[ApplyEditResult](),
		Doc: "Sent only in runs with the allowEdits setting, once for each edit the agent proposes (create_note, append_to_note, replace_in_note, set_properties), like LSP's workspace/applyEdit. " +
			"Show the diff to the person and answer {applied: true} to approve or {applied: false, reason} to refuse; the sidecar writes an approved edit itself. " +
			"An error answer is a refusal, and so is no answer within the run's requestInputTimeoutMs: the sidecar then sends $/cancelRequest for it. " +
			"The run waits for the answer; the agent is told whether the edit was applied and why not."},
}
