package acp

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/service"
)

// Limits on the notes attached to one prompt turn.
const (
	maxMentionBytes  = 20_000
	maxAttachedBytes = 60_000
)

// mention is a note the person attached to the prompt: a resource link (the
// host's @-mention) or an embedded resource with its text.
type mention struct {
	uri  string
	name string
	// text is the embedded resource's text (what the editor shows, unsaved
	// edits included); nil for a link.
	text *string
}

// attached is a mention read for the run.
type attached struct {
	label string // vault path, or the URI of text from outside the vault
	title string
	text  string
}

// parsePrompt splits the prompt into the person's words and the notes they
// attached. Images, audio and binary resources are refused: vault-agent
// works on text.
func parsePrompt(blocks []sdk.ContentBlock) (text string, mentions []mention, err error) {
	var words []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			words = append(words, b.Text.Text)
		case b.ResourceLink != nil:
			name := b.ResourceLink.Name
			if b.ResourceLink.Title != nil && *b.ResourceLink.Title != "" {
				name = *b.ResourceLink.Title
			}
			mentions = append(mentions, mention{uri: b.ResourceLink.Uri, name: name})
		case b.Resource != nil:
			r := b.Resource.Resource
			if r.TextResourceContents == nil {
				return "", nil, fmt.Errorf("prompt[%d]: binary resources are not supported; vault-agent reads text (markdown notes)", i)
			}
			t := r.TextResourceContents.Text
			mentions = append(mentions, mention{uri: r.TextResourceContents.Uri, name: uriName(r.TextResourceContents.Uri), text: &t})
		case b.Image != nil:
			return "", nil, fmt.Errorf("prompt[%d]: images are not supported (promptCapabilities.image is false); vault-agent reads text, so describe the image in words or attach a note", i)
		case b.Audio != nil:
			return "", nil, fmt.Errorf("prompt[%d]: audio is not supported (promptCapabilities.audio is false); vault-agent reads text", i)
		default:
			return "", nil, fmt.Errorf("prompt[%d]: unknown content block", i)
		}
	}
	return strings.TrimSpace(strings.Join(words, "\n")), mentions, nil
}

func uriName(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		return filepath.Base(filepath.FromSlash(u.Path))
	}
	return uri
}

// Prompt runs one prompt turn: it reads the attached notes first (each as a
// read tool call), runs the agent with the session's settings and history,
// streams the run as session updates and answers with the stop reason.
func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (res sdk.PromptResponse, err error) {
	const method = "session/prompt"
	defer s.recoverTo(method, &err)
	ss, err := s.session(method, p.SessionId)
	if err != nil {
		return res, err
	}
	text, mentions, err := parsePrompt(p.Prompt)
	if err != nil {
		return res, invalidParams("%s: %v", method, err)
	}
	if text == "" && len(mentions) == 0 {
		return res, invalidParams("%s: the prompt is empty; send the question as a text block", method)
	}

	// One turn at a time per session; a second prompt waits for the first.
	select {
	case ss.turn <- struct{}{}:
	case <-ctx.Done():
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	defer func() { <-ss.turn }()
	s.mu.Lock()
	select {
	case <-s.closing:
		s.mu.Unlock()
		return res, rpcError(codeInternal, "%s: the agent is shutting down", method)
	default:
	}
	s.turns.Add(1)
	s.mu.Unlock()
	defer s.turns.Done()

	// The turn ends when the client cancels (session/cancel, or
	// $/cancel_request, which cancels ctx), the session closes or the
	// connection ends: each closes turn.stop, which stops the run. The
	// run itself is not bound to the request's context, so that a
	// cancelled run still reports how it ended.
	turnCtx := context.WithoutCancel(ctx)
	turn := &activeTurn{stop: make(chan struct{})}
	defer turn.end()
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return res, unknownSession(method, p.SessionId)
	}
	ss.runs++
	runID := fmt.Sprintf("%s-%d", ss.id, ss.runs)
	settings := ss.settings
	warning := ss.warning
	ss.warning = ""
	history := append([]llm.Message(nil), ss.history...)
	ss.active = turn
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		ss.active = nil
		closed := ss.closed
		ss.mu.Unlock()
		if closed {
			ss.release()
		}
	}()
	// This turn's own: a late call cannot stop the session's next turn.
	stopOnCancel := context.AfterFunc(ctx, func() { ss.cancelTurn(turn) })
	defer stopOnCancel()

	unknown, err := applyMeta(&settings, p.Meta)
	if err != nil {
		return res, invalidParams("%s: %v", method, err)
	}
	if len(unknown) > 0 {
		s.log.Warn("session/prompt: unknown vault-agent settings ignored", "keys", strings.Join(unknown, ", "))
	}

	send := func(u sdk.SessionUpdate) { s.send(ss.id, u) }
	if warning != "" {
		send(message(warning))
	}
	notes := s.readMentions(turnCtx, ss, runID, mentions, send)
	if cancelled(ss, turn) {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	goal := text
	if goal == "" {
		titles := make([]string, len(notes))
		for i, n := range notes {
			titles[i] = n.title
		}
		goal = "Summarize the attached notes: " + strings.Join(titles, ", ")
	}
	runHistory := history
	if len(notes) > 0 {
		runHistory = append(runHistory, llm.Message{Role: llm.RoleUser, Content: attachmentsMessage(notes)})
	}

	var question string
	var asked bool
	updates := newTurnUpdates(runID, ss.cwd, isTrue(settings.Planner), send, func(q string) {
		// ACP has no way to ask mid-turn: end the turn with the question;
		// the person's next prompt is the answer.
		question, asked = q, true
		turn.end()
	})
	result, err := ss.vault.Run(turnCtx, service.RunRequest{
		RunID: runID, SessionID: string(ss.id), Message: goal, History: runHistory, Settings: settings, Stop: turn.stop,
		// With allowEdits, each edit is a session/request_permission.
		Approver: &editApprover{s: s, session: ss.id, updates: updates},
	}, updates)
	if err != nil {
		return res, toRequestError(method, err)
	}
	if cancelled(ss, turn) {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	answer := result.Answer
	reason := updates.stopReason(result, false)
	if asked {
		answer = strings.TrimSpace(question)
		if answer == "" {
			answer = "I need more information to go on: please say more about what you are looking for."
		}
		send(message(answer))
		reason = sdk.StopReasonEndTurn
	} else if result.StopReason == agent.StopError {
		return res, rpcError(codeInternal, "%s: the run failed: %s", method, result.Error)
	}
	ss.remember(text, notes, answer)
	return sdk.PromptResponse{StopReason: reason}, nil
}

func cancelled(ss *session, t *activeTurn) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return t.cancelled || ss.closed
}

// remember keeps the turn for the session's next prompts.
func (ss *session) remember(text string, notes []attached, answer string) {
	user := text
	if len(notes) > 0 {
		labels := make([]string, len(notes))
		for i, n := range notes {
			labels[i] = n.label
		}
		user = strings.TrimSpace(user + "\n\n(attached: " + strings.Join(labels, ", ") + ")")
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.history = append(ss.history, llm.Message{Role: llm.RoleUser, Content: user}, llm.Message{Role: llm.RoleAssistant, Content: answer})
	if n := len(ss.history); n > maxHistory {
		ss.history = append([]llm.Message(nil), ss.history[n-maxHistory:]...)
	}
}

// attachmentsMessage renders the attached notes as the conversation message
// that comes just before the person's words.
func attachmentsMessage(notes []attached) string {
	var b strings.Builder
	b.WriteString("<attached_notes>\nThe person attached these notes to their next message. They are already read below; do not call readNote for them again.\n")
	for _, n := range notes {
		fmt.Fprintf(&b, "<note path=\"%s\" title=\"%s\">\n%s\n</note>\n", html.EscapeString(n.label), html.EscapeString(n.title), n.text)
	}
	b.WriteString("</attached_notes>")
	return b.String()
}

// readMentions reads the attached notes before the run, each shown as a
// read tool call. A link that names no note of the vault fails its tool
// call and the turn goes on without it. When the client offers
// fs/read_text_file, a linked note is read through it, so edits not yet
// saved are seen; the path is checked against the vault first.
func (s *server) readMentions(ctx context.Context, ss *session, runID string, mentions []mention, send func(sdk.SessionUpdate)) []attached {
	s.mu.Lock()
	clientRead := s.clientFS.ReadTextFile
	s.mu.Unlock()
	var out []attached
	budget := maxAttachedBytes
	for i, m := range mentions {
		id := sdk.ToolCallId(fmt.Sprintf("%s/mention-%d", runID, i+1))
		rel, abs, inside := ss.vaultPath(m.uri)
		tc := &sdk.SessionUpdateToolCall{SessionUpdate: "tool_call", ToolCallId: id, Title: "Reading " + m.name,
			Kind: sdk.ToolKindRead, Status: sdk.ToolCallStatusPending, RawInput: map[string]any{"uri": m.uri}}
		if inside {
			tc.Locations = []sdk.ToolCallLocation{{Path: abs}}
		}
		send(sdk.SessionUpdate{ToolCall: tc})
		send(sdk.UpdateToolCall(id, sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
		a, err := s.readMention(ctx, ss, m, rel, abs, inside, clientRead)
		if err != nil {
			s.log.Info("attached note not read", "uri", m.uri, "error", err)
			send(sdk.UpdateToolCall(id, sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(err.Error()))})))
			continue
		}
		var cut bool
		limit := min(maxMentionBytes, budget)
		if a.text, cut = capText(a.text, limit); cut {
			a.text += "\n[… truncated]"
		}
		budget -= len(a.text)
		out = append(out, a)
		summary := "Read " + a.title
		if excerpt, more := capText(strings.TrimSpace(a.text), 200); excerpt != "" {
			if more {
				excerpt += "…"
			}
			summary += "\n\n" + excerpt
		}
		send(sdk.UpdateToolCall(id, sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(summary))})))
	}
	return out
}

func (s *server) readMention(ctx context.Context, ss *session, m mention, rel, abs string, inside, clientRead bool) (attached, error) {
	if m.text != nil {
		// The editor sent the text: use it as is.
		a := attached{label: m.uri, title: m.name, text: *m.text}
		if inside {
			a.label = rel
			if n, err := ss.vault.ReadNote(rel, 1); err == nil {
				a.label, a.title = n.Path, n.Title
			}
		}
		return a, nil
	}
	if !inside {
		return attached{}, fmt.Errorf("%s is not a note of this vault (%s); only notes inside the session's vault can be attached", m.uri, ss.cwd)
	}
	n, err := ss.vault.ReadNote(rel, maxMentionBytes)
	if err != nil {
		return attached{}, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	a := attached{label: n.Path, title: n.Title, text: n.Text}
	if clientRead {
		r, err := s.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: ss.id, Path: abs})
		if err != nil {
			s.log.Info("fs/read_text_file failed; using the saved note", "path", abs, "error", err)
		} else {
			a.text = r.Content
		}
	}
	return a, nil
}

// vaultPath resolves a file: URI to a path inside the session's vault: the
// vault-relative slash path and the absolute path. Anything else (another
// scheme, a relative path, a path outside the vault) is not inside.
func (ss *session) vaultPath(uri string) (rel, abs string, inside bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", "", false
	}
	abs = filepath.Clean(filepath.FromSlash(u.Path))
	if !filepath.IsAbs(abs) {
		return "", "", false
	}
	for _, root := range []string{ss.cwd, ss.vault.Root()} {
		r, err := filepath.Rel(root, abs)
		if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			continue
		}
		return filepath.ToSlash(r), filepath.Join(ss.cwd, r), true
	}
	return "", "", false
}
