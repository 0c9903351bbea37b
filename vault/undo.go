package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// ErrNothingToUndo reports an undo with no applied edit left to undo.
var ErrNothingToUndo = errors.New("nothing to undo")

// Undone is one edit an undo reverted.
type Undone struct {
	Path string
	Op   string
	// Removed is set when the run had created the note, now removed.
	Removed bool
	// Already is set when the note was already as it was before the run
	// (the edit was never written, or was reverted by hand): nothing was
	// written for it.
	Already bool
}

// Undo reverts the edits of run runID ("" for the run of the latest edit
// not yet undone): each note the run changed gets the content it had
// before the run's first edit of it, atomically, and each note the run
// created is removed; each undone edit is journaled. It refuses, changing
// nothing, when a note is not as one of the run's edits left it
// (ErrConflict), and when the journal cannot say what the note was
// (a damaged record). It writes only notes inside the vault, checked as
// edits are, and only over the content it checked. The returned edits name
// the notes written, for an index to follow.
func (v *Vault) Undo(j *Journal, runID string) ([]Undone, error) {
	f, unlock, err := j.open()
	switch {
	case err != nil:
		return nil, fmt.Errorf("undo: %w", err)
	case f == nil:
		return nil, fmt.Errorf("undo: %w: there is no edit journal at %s", ErrNothingToUndo, j.path)
	}
	defer unlock()
	defer f.Close()
	edits, err := j.pending(f)
	if err != nil {
		return nil, err
	}
	if runID == "" {
		if len(edits) == 0 {
			return nil, fmt.Errorf("undo: %w: the journal %s holds no edit that is not undone", ErrNothingToUndo, j.path)
		}
		runID = edits[len(edits)-1].RunID
	}
	// The run's edits by note, newest first; notes in the order of their
	// newest edit, newest first.
	byPath := map[string][]record{}
	var paths []string
	for i := len(edits) - 1; i >= 0; i-- {
		if e := edits[i]; e.RunID == runID {
			if byPath[e.Path] == nil {
				paths = append(paths, e.Path)
			}
			byPath[e.Path] = append(byPath[e.Path], e)
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("undo run %q: %w: it has no applied edit that is not undone", runID, ErrNothingToUndo)
	}
	// Check every note first, and read what each gets back: a conflict or
	// a damaged record anywhere, and nothing is touched.
	plans := make([]undoPlan, 0, len(paths))
	var conflicts []string
	for _, p := range paths {
		plan, err := v.planUndo(j, f, byPath[p])
		if errors.Is(err, ErrConflict) {
			conflicts = append(conflicts, p)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("undo run %q: %w; nothing was undone", runID, err)
		}
		plans = append(plans, plan)
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("undo run %q: %w: changed since the run edited them: %s; nothing was undone", runID, ErrConflict, strings.Join(conflicts, ", "))
	}
	var out []Undone
	for _, plan := range plans {
		var err error
		switch {
		case plan.already:
		case plan.remove:
			err = removeChecked(plan.abs, plan.now)
		default:
			err = replaceChecked(plan.abs, plan.now, []byte(plan.before))
		}
		if err != nil {
			return out, fmt.Errorf("undo the edits of %q: %w", plan.edits[0].Path, err)
		}
		for _, e := range plan.edits {
			out = append(out, Undone{Path: e.Path, Op: e.Op, Removed: plan.remove && !plan.already, Already: plan.already})
			if _, err := j.append(JournalEntry{RunID: runID, Op: OpUndo, Path: e.Path, Undoes: e.Seq,
				BeforeHash: e.AfterHash, AfterHash: e.BeforeHash}); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// pending returns the edits of the journal f that can be undone (not
// undone, not void), oldest first, each with the after-hash an amendment
// gave it. Their Before is not loaded.
func (j *Journal) pending(f *os.File) ([]record, error) {
	var edits []record
	at := map[int]int{} // Seq -> index in edits
	undone := map[int]bool{}
	err := j.scan(f, false, func(r record) {
		switch {
		case r.Op == OpUndo:
			undone[r.Undoes] = true
		case r.Op == OpVoid:
			undone[r.Amends] = true
		case r.Op == OpAmend:
			if i, ok := at[r.Amends]; ok {
				edits[i].AfterHash = r.AfterHash
			}
		case isEditOp(r.Op):
			at[r.Seq] = len(edits)
			edits = append(edits, r)
		default:
			j.log.Warn("skipped a journal record of an unknown kind", "journal", j.path, "seq", r.Seq, "op", r.Op)
		}
	})
	if err != nil {
		return nil, err
	}
	out := edits[:0]
	for _, e := range edits {
		if !undone[e.Seq] {
			out = append(out, e)
		}
	}
	return out, nil
}

// undoPlan is what undoing a run's edits of one note does.
type undoPlan struct {
	edits   []record // the run's edits of the note, newest first
	abs     string
	now     string // hash of the note as checked
	already bool   // the note is as before the run: nothing to write
	remove  bool   // the run created the note: remove it
	before  string // else the content to put back
}

// planUndo checks one note against the run's edits of it (newest first):
// the note must be as one of them left it, or already as before the run.
func (v *Vault) planUndo(j *Journal, f *os.File, edits []record) (undoPlan, error) {
	first := edits[len(edits)-1] // the run's first edit of the note
	plan := undoPlan{edits: edits}
	abs, err := v.Abs(first.Path)
	if err != nil {
		return plan, err
	}
	plan.abs = abs
	note, err := openForEdit(abs)
	exists := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return plan, fmt.Errorf("%q: %w", first.Path, err)
	default:
		note.close()
		plan.now = Hash(note.data)
	}
	left := false // the note is as one of the run's edits left it
	for _, e := range edits {
		if exists && e.AfterHash == plan.now {
			left = true
			break
		}
	}
	switch {
	case left && first.Created:
		plan.remove = true
	case left:
		if plan.before, err = j.before(f, first); err != nil {
			return plan, err
		}
	case !exists && first.Created, exists && !first.Created && plan.now == first.BeforeHash:
		plan.already = true
	default:
		return plan, ErrConflict
	}
	if !plan.already {
		if err := checkWritable(abs, note.info); err != nil {
			return plan, fmt.Errorf("%q: %w", first.Path, err)
		}
	}
	return plan, nil
}
