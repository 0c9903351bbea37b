package vault

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// JournalEntry records one applied edit, or the undoing of one.
type JournalEntry struct {
	// Seq numbers the entries of a journal from 1.
	Seq   int       `json:"seq"`
	Time  time.Time `json:"time"`
	RunID string    `json:"runId"`
	Op    string    `json:"op"` // an edit operation, or "undo"
	Path  string    `json:"path"`
	// Created is set when the edit created the note (undoing it removes
	// the note).
	Created bool `json:"created,omitempty"`
	// Before is the note's content before the edit ("" when Created).
	Before     string `json:"before"`
	BeforeHash string `json:"beforeHash,omitempty"`
	// AfterHash is the hash of the note as the edit left it: undo refuses
	// to touch a note whose content no longer has it.
	AfterHash string `json:"afterHash"`
	// Undoes is, for an undo entry, the Seq of the edit it undid.
	Undoes int `json:"undoes,omitempty"`
}

// OpUndo is the Op of a journal entry recording an undo.
const OpUndo = "undo"

// Journal is the record of applied edits, a file of JSON lines kept
// outside the vault: each applied edit with the note's previous content,
// so that it can be undone. It is safe for concurrent use within a
// process; processes sharing a journal append whole lines.
type Journal struct {
	path string
	// mu serializes appends and the sequence numbers they take.
	mu sync.Mutex
}

// OpenJournal returns the journal at path (created on the first record).
func OpenJournal(path string) *Journal { return &Journal{path: path} }

// Path returns the journal's file.
func (j *Journal) Path() string { return j.path }

// Record appends e, numbering it, and syncs the file.
func (j *Journal) Record(e JournalEntry) (JournalEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	all, err := j.read()
	if err != nil {
		return e, err
	}
	e.Seq = len(all) + 1
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("journal: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return e, fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(j.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return e, fmt.Errorf("journal: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return e, fmt.Errorf("journal %s: %w", j.path, err)
	}
	return e, nil
}

// Entries returns every entry, oldest first.
func (j *Journal) Entries() ([]JournalEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.read()
}

func (j *Journal) read() ([]JournalEntry, error) {
	f, err := os.Open(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	var out []JournalEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4*maxEditBytes)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e JournalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// A line cut short by a crash while appending: the entries
			// before it stand.
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	return out, nil
}

// ErrNothingToUndo reports an undo with no applied edit left to undo.
var ErrNothingToUndo = errors.New("nothing to undo")

// Undone is one edit an undo reverted.
type Undone struct {
	Path string
	Op   string
	// Removed is set when the edit had created the note, now removed.
	Removed bool
}

// Undo reverts the edits of run runID ("" for the run of the latest edit
// not yet undone), newest first, restoring each note's previous content
// atomically (removing notes the run created) and journaling each undo. It
// refuses, changing nothing, when a note changed since the run left it
// (ErrConflict). The returned edits name the notes written, for an index
// to follow.
func (v *Vault) Undo(j *Journal, runID string) ([]Undone, error) {
	j.mu.Lock()
	all, err := j.read()
	j.mu.Unlock()
	if err != nil {
		return nil, err
	}
	undone := map[int]bool{}
	for _, e := range all {
		if e.Op == OpUndo {
			undone[e.Undoes] = true
		}
	}
	if runID == "" {
		for i := len(all) - 1; i >= 0; i-- {
			if e := all[i]; e.Op != OpUndo && !undone[e.Seq] {
				runID = e.RunID
				break
			}
		}
		if runID == "" {
			return nil, fmt.Errorf("undo: %w: the journal %s holds no edit that is not undone", ErrNothingToUndo, j.path)
		}
	}
	var todo []JournalEntry // newest first
	for i := len(all) - 1; i >= 0; i-- {
		if e := all[i]; e.Op != OpUndo && e.RunID == runID && !undone[e.Seq] {
			todo = append(todo, e)
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("undo run %q: %w: it has no applied edit that is not undone", runID, ErrNothingToUndo)
	}
	// Check every note first: the newest edit of each must still be what
	// is on disk, or nothing is touched.
	checked := map[string]bool{}
	var conflicts []string
	for _, e := range todo {
		if checked[e.Path] {
			continue
		}
		checked[e.Path] = true
		abs, err := v.Abs(e.Path)
		if err != nil {
			return nil, fmt.Errorf("undo: %w", err)
		}
		now, _, err := readForEdit(abs)
		if err != nil || Hash(now) != e.AfterHash {
			conflicts = append(conflicts, e.Path)
		}
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("undo run %q: %w: changed since the run edited them: %s; nothing was undone", runID, ErrConflict, strings.Join(conflicts, ", "))
	}
	var out []Undone
	for _, e := range todo {
		abs, err := v.Abs(e.Path)
		if err != nil {
			return out, fmt.Errorf("undo: %w", err)
		}
		if e.Created {
			err = removeChecked(abs, e.AfterHash)
		} else {
			err = replaceChecked(abs, e.AfterHash, []byte(e.Before))
		}
		if err != nil {
			return out, fmt.Errorf("undo %s of %q: %w", e.Op, e.Path, err)
		}
		out = append(out, Undone{Path: e.Path, Op: e.Op, Removed: e.Created})
		if _, err := j.Record(JournalEntry{RunID: runID, Op: OpUndo, Path: e.Path, Undoes: e.Seq,
			BeforeHash: e.AfterHash, AfterHash: e.BeforeHash}); err != nil {
			return out, err
		}
	}
	return out, nil
}
