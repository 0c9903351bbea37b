package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// Permission options of an edit: allow once or reject; nothing is allowed
// for good, so every edit is shown.
const (
	optionAllow  sdk.PermissionOptionId = "allow"
	optionReject sdk.PermissionOptionId = "reject"
)

// hiddenWarning goes with the diff of an edit that writes characters the
// diff shows escaped.
const hiddenWarning = `This edit writes control or text-direction characters, shown escaped in the diff (\r, \x1b, \u202e...); the note gets the characters themselves.`

// editApprover asks the client about each edit of one prompt turn with
// session/request_permission (the edit tool call, its diff and the note as
// location), and writes an approved edit through the client's
// fs/write_text_file when the client offers it, so the editor's buffer
// stays in step. It is called on the run's goroutine, after the turn's
// updates have announced the edit's tool call.
type editApprover struct {
	s       *server
	session sdk.SessionId
	updates *turnUpdates
}

var _ service.HostWriter = (*editApprover)(nil)

func (a *editApprover) Approve(ctx context.Context, p *service.EditProposal) (service.Decision, error) {
	kind, status := sdk.ToolKindEdit, sdk.ToolCallStatusPending
	title := fmt.Sprintf("Edit %s", vault.Printable(p.Path))
	if p.Create {
		title = fmt.Sprintf("Create %s", vault.Printable(p.Path))
	}
	// The editor shows the texts as they are: a carriage return or an
	// escape sequence would show another line than the one written.
	diff := sdk.ToolDiffContent(p.Abs, vault.Printable(p.After))
	if !p.Create {
		diff = sdk.ToolDiffContent(p.Abs, vault.Printable(p.After), vault.Printable(p.Before))
	}
	content := []sdk.ToolCallContent{diff}
	if p.Hidden {
		content = append(content, sdk.ToolContent(sdk.TextBlock(hiddenWarning)))
	}
	resp, err := a.s.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: a.session,
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: a.updates.currentTool(),
			Title:      &title,
			Kind:       &kind,
			Status:     &status,
			Locations:  []sdk.ToolCallLocation{{Path: p.Abs}},
			Content:    content,
		},
		Options: []sdk.PermissionOption{
			{OptionId: optionAllow, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optionReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return service.Decision{}, err
	}
	switch o := resp.Outcome; {
	case o.Selected != nil && o.Selected.OptionId == optionAllow:
		return service.Decision{Approved: true}, nil
	case o.Cancelled != nil:
		return service.Decision{Reason: "the prompt turn was cancelled"}, nil
	default:
		return service.Decision{Reason: "rejected in the editor"}, nil
	}
}

// WriteEdit writes through fs/write_text_file when the client offers it.
func (a *editApprover) WriteEdit(ctx context.Context, p *service.EditProposal) (bool, error) {
	a.s.mu.Lock()
	canWrite := a.s.clientFS.WriteTextFile
	a.s.mu.Unlock()
	if !canWrite {
		return false, nil
	}
	_, err := a.s.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: a.session, Path: p.Abs, Content: p.After})
	return err == nil, err
}
