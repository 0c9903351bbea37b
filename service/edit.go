package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/vault"
)

// Approver is how a front-end asks the person about one edit: serve sends
// vault/applyEdit to the host, acp asks session/request_permission, the
// CLI asks y/N on the terminal. Approve must return when ctx ends (the
// request-input timeout, a stop); an error counts as a refusal.
type Approver interface {
	Approve(ctx context.Context, p *EditProposal) (Decision, error)
}

// ApproverFunc is an Approver as a function.
type ApproverFunc func(ctx context.Context, p *EditProposal) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, p *EditProposal) (Decision, error) {
	return f(ctx, p)
}

// Approved approves every edit: for a front-end whose client has already
// asked its user (MCP's tools annotated destructive), or the CLI's --yes.
var Approved Approver = ApproverFunc(func(context.Context, *EditProposal) (Decision, error) {
	return Decision{Approved: true}, nil
})

// HostWriter is an Approver that writes approved edits itself, so the
// host's editor buffers stay in step (ACP's fs/write_text_file). The
// service checks that the note is unchanged just before calling it, and
// journals and reindexes after.
type HostWriter interface {
	Approver
	// WriteEdit writes p.After to p.Abs. ok false means the host cannot
	// write (no such capability): the service writes the file itself.
	WriteEdit(ctx context.Context, p *EditProposal) (ok bool, err error)
}

// EditProposal is one edit a run proposes, as the person is asked about it.
type EditProposal struct {
	RunID string
	*vault.Proposal
	// Abs is the absolute path of the note.
	Abs string
}

// Decision is the person's answer to an EditProposal.
type Decision struct {
	Approved bool
	// Reason says why not, when the person (or the host) gave one.
	Reason string
}

// EditsEnabled reports whether s allows the agent to propose edits.
func (s Settings) EditsEnabled() bool { return isTrue(s.AllowEdits) }

// ErrNoJournal refuses edits when there is no place outside the vault for
// the journal that makes them undoable.
var ErrNoJournal = errors.New("edits need a journal outside the vault; give an index folder (--index) or a user cache dir")

// journalPath chooses where the edit journal lives: beside the index (or
// beside where the default index would be, for an index in memory).
func journalPath(opts Options, env Env, root string) (string, error) {
	if opts.Journal != "" {
		return filepath.Abs(opts.Journal)
	}
	base := opts.Index
	if base == "" {
		var err error
		if base, err = env.DefaultIndexPath(root); err != nil {
			return "", ErrNoJournal
		}
	}
	abs, err := filepath.Abs(filepath.Clean(base) + "-edits.jsonl")
	if err != nil {
		return "", err
	}
	if inside(root, abs) {
		return "", fmt.Errorf("%w: %s is inside the vault", ErrNoJournal, abs)
	}
	return abs, nil
}

// openJournal opens the edit journal at path, logging to log.
func openJournal(path string, log *slog.Logger) *vault.Journal {
	return vault.OpenJournal(path, vault.JournalOptions{Logger: log})
}

// inside reports whether p is in the folder root.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// JournalPath returns the edit journal's file ("" when edits have none).
func (s *Service) JournalPath() string {
	if s.journal == nil {
		return ""
	}
	return s.journal.Path()
}

// editor carries out one run's edit tools through the front-end's
// Approver; it is the run's agent.Editor.
type editor struct {
	s        *Service
	runID    string
	approver Approver
}

func (e *editor) Edit(ctx context.Context, req vault.EditRequest) (*agent.EditOutcome, error) {
	return e.s.Edit(ctx, e.runID, e.approver, req)
}

// Edit works out one edit, asks approver, and when approved journals it
// with the note's previous content and writes it (atomically, refusing a
// note changed since it was read or that cannot be written), and updates
// the index before returning. An edit that cannot be proposed is an error;
// one refused, not answered before ctx's deadline, in conflict, refused by
// the file system or that could not be journaled is an outcome with
// Applied false and the reason. Edits of one Service are written one at a
// time.
func (s *Service) Edit(ctx context.Context, runID string, approver Approver, req vault.EditRequest) (*agent.EditOutcome, error) {
	if s.journal == nil {
		return nil, ErrNoJournal
	}
	p, err := s.vault.Propose(req)
	if err != nil {
		return nil, err
	}
	abs, err := s.vault.Abs(p.Path)
	if err != nil {
		return nil, err
	}
	ep := &EditProposal{RunID: runID, Proposal: p, Abs: abs}
	out := &agent.EditOutcome{Path: p.Path, Diff: p.Diff}
	d, err := approver.Approve(ctx, ep)
	switch {
	case err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), agent.ErrApprovalTimeout) && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, err // stopped or cancelled: the run is ending
	case err != nil && ctx.Err() != nil:
		out.Reason = "not applied: " + agent.ErrApprovalTimeout.Error()
		s.log.Info("edit not answered in time", "run", runID, "path", p.Path)
		return out, nil
	case err != nil:
		out.Reason = "not applied: asking for approval failed: " + err.Error()
		s.log.Warn("asking for approval of an edit failed", "run", runID, "path", p.Path, "error", err)
		return out, nil
	case !d.Approved:
		out.Reason = "refused by the person"
		if d.Reason != "" {
			out.Reason += ": " + d.Reason
		}
		return out, nil
	}
	err = s.write(ctx, ep, approver)
	switch {
	case errors.Is(err, vault.ErrConflict) || errors.Is(err, vault.ErrExists):
		out.Reason = "not applied: " + err.Error()
		return out, nil
	case errors.Is(err, fs.ErrPermission):
		out.Reason = "not applied: " + err.Error()
		s.log.Info("edit refused: the note cannot be written", "run", runID, "path", p.Path, "error", err)
		return out, nil
	case errors.Is(err, errNotJournaled):
		out.Reason = "not applied: " + err.Error()
		s.log.Error("an edit was not applied: it could not be journaled, so it could not have been undone", "path", p.Path, "error", err)
		return out, nil
	case err != nil:
		return nil, err
	}
	out.Applied = true
	s.reindex(ctx, p.Path)
	s.log.Info("edit applied", "run", runID, "op", p.Op, "path", p.Path)
	return out, nil
}

// errNotJournaled refuses an edit whose record could not be written: an
// edit that could not be undone is not made.
var errNotJournaled = errors.New("the edit could not be journaled, so it could not be undone")

// write writes an approved edit, through the host when it writes edits
// itself. The edit is journaled before it is written, once the note is
// checked unchanged, and the record corrected after when the edit was not
// written after all (a conflict at the last moment, a failed write) or
// left the note with another content than meant (a host that adds a final
// newline): the journal holds what is on disk.
func (s *Service) write(ctx context.Context, ep *EditProposal, approver Approver) error {
	s.editMu.Lock()
	defer s.editMu.Unlock()
	if err := s.vault.CheckUnchanged(ep.Proposal); err != nil {
		return err
	}
	want := vault.Hash([]byte(ep.After))
	rec, err := s.journal.Record(vault.JournalEntry{RunID: ep.RunID, Op: ep.Op, Path: ep.Path, Created: ep.Create,
		Before: ep.Before, BeforeHash: ep.BaseHash, AfterHash: want})
	if err != nil {
		return fmt.Errorf("%w: %v", errNotJournaled, err)
	}
	got, err := s.writeNote(ctx, ep, approver)
	switch {
	case err != nil:
		s.correct(vault.JournalEntry{RunID: ep.RunID, Op: vault.OpVoid, Path: ep.Path, Amends: rec.Seq})
		return err
	case got != want:
		s.correct(vault.JournalEntry{RunID: ep.RunID, Op: vault.OpAmend, Path: ep.Path, Amends: rec.Seq, AfterHash: got})
	}
	return nil
}

// writeNote writes an edit and returns the hash of the note as written.
func (s *Service) writeNote(ctx context.Context, ep *EditProposal, approver Approver) (string, error) {
	hw, ok := approver.(HostWriter)
	if !ok {
		return s.vault.Apply(ep.Proposal)
	}
	wrote, err := hw.WriteEdit(ctx, ep)
	if err != nil {
		return "", fmt.Errorf("%s %q through the host: %w", ep.Op, ep.Path, err)
	}
	if !wrote {
		return s.vault.Apply(ep.Proposal)
	}
	// The host may have written other bytes than asked (a final newline,
	// its own line ends): what undo must find is what is on disk.
	hash, err := s.vault.NoteHash(ep.Path)
	if err != nil {
		return "", fmt.Errorf("%s %q: the host wrote the note, but it cannot be read back: %w", ep.Op, ep.Path, err)
	}
	return hash, nil
}

// correct journals the correction of an edit's record; one that cannot
// be written is logged: undo may then refuse the run as changed since.
func (s *Service) correct(e vault.JournalEntry) {
	if _, err := s.journal.Record(e); err != nil {
		s.log.Error("the edit journal could not record what an edit wrote; undoing its run may be refused", "path", e.Path, "op", e.Op, "error", err)
	}
}

// reindex brings the index up to date with one note at once, rather than
// when the watcher notices.
func (s *Service) reindex(ctx context.Context, rel string) {
	if err := s.index.Apply(context.WithoutCancel(ctx), vault.Batch{Changes: []vault.Change{{Path: rel}}}); err != nil {
		s.log.Warn("reindex after an edit", "path", rel, "error", err)
	}
}

// Undo reverts the applied edits of run runID ("" for the latest run with
// edits not undone) from the journal, refusing (vault.ErrConflict) when a
// note changed since, and updates the index.
func (s *Service) Undo(ctx context.Context, runID string) ([]vault.Undone, error) {
	if s.journal == nil {
		return nil, ErrNoJournal
	}
	s.editMu.Lock()
	done, err := s.vault.Undo(s.journal, runID)
	s.editMu.Unlock()
	for _, u := range done {
		s.reindex(ctx, u.Path)
	}
	return done, err
}

// Undo reverts a run's edits (see Service.Undo) without opening the
// index: for `vault-agent undo`, while a sidecar may hold the index (its
// watcher sees the restored notes; any later open reconciles).
func Undo(ctx context.Context, opts Options, runID string) ([]vault.Undone, string, error) {
	env := ProcessEnv()
	if opts.Env != nil {
		env = *opts.Env
	}
	root, err := filepath.Abs(opts.Vault)
	if err != nil {
		return nil, "", err
	}
	v, err := vault.Open(root, vault.Options{Excludes: opts.Settings.Excludes})
	if err != nil {
		return nil, "", &OpenError{Part: PartVault, Path: root, Err: err}
	}
	jp, err := journalPath(opts, env, v.Root())
	if err != nil {
		return nil, "", err
	}
	done, err := v.Undo(openJournal(jp, opts.Logger), runID)
	return done, jp, err
}

// editState is the part of a Service that edits use.
type editState struct {
	journal *vault.Journal
	// editMu makes the check-and-write of edits (and undos) one at a time.
	editMu sync.Mutex
}
