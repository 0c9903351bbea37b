package vault

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// JournalEntry is one record of the journal: an edit about to be written,
// the correction of one (what was really written, or that nothing was), or
// the undoing of one.
type JournalEntry struct {
	// Seq numbers the records of a journal, increasing from 1.
	Seq   int       `json:"seq"`
	Time  time.Time `json:"time"`
	RunID string    `json:"runId"`
	// Op is an edit operation (EditCreate...), OpUndo, OpAmend or OpVoid.
	Op   string `json:"op"`
	Path string `json:"path"`
	// Created is set when the edit creates the note (undoing it removes
	// the note).
	Created bool `json:"created,omitempty"`
	// Before is the note's content before the edit ("" when Created, and
	// when BeforeStored).
	Before string `json:"before,omitempty"`
	// BeforeStored is set when Before, too large for a line of the
	// journal, is kept in a file of its own beside it, named by
	// BeforeHash.
	BeforeStored bool   `json:"beforeStored,omitempty"`
	BeforeHash   string `json:"beforeHash,omitempty"`
	// AfterHash is the hash of the note as the edit leaves it: undo
	// refuses to touch a note whose content no longer has it.
	AfterHash string `json:"afterHash"`
	// Undoes is, for an OpUndo record, the Seq of the edit it undid.
	Undoes int `json:"undoes,omitempty"`
	// Amends is, for an OpAmend or OpVoid record, the Seq of the edit it
	// corrects.
	Amends int `json:"amends,omitempty"`
}

// Ops of the journal's records other than edits.
const (
	// OpUndo records an edit undone.
	OpUndo = "undo"
	// OpAmend records that an edit left the note with another content
	// than the one it meant (an editor that writes the edit itself may
	// add a final newline): its AfterHash is the note's as written.
	OpAmend = "amend"
	// OpVoid records that an edit journaled before its write was not
	// written after all.
	OpVoid = "void"
)

// isEditOp reports whether op is one of the edit operations.
func isEditOp(op string) bool {
	switch op {
	case EditCreate, EditAppend, EditReplace, EditSetProperties:
		return true
	}
	return false
}

// DefaultJournalMax is the default cap on a journal's size, its lines and
// the previous contents stored beside it together.
const DefaultJournalMax = 64 << 20

// JournalOptions configure a Journal.
type JournalOptions struct {
	// MaxBytes caps the journal with its stored contents (default
	// DefaultJournalMax; negative: no cap). Past it, the oldest runs are
	// dropped, whole, until it is under half the cap; the newest run is
	// always kept.
	MaxBytes int64
	// Logger receives the journal's warnings: records skipped as damaged,
	// compactions.
	Logger *slog.Logger
}

// inlineBefore is the largest previous content kept in a record's line;
// a larger one is stored in a file of its own, so that every line stays
// small enough to read in one go, whatever the notes.
const inlineBefore = 16 << 10

// maxJournalLine is the longest line a journal is read with. New records
// are short, but a journal written before contents were stored apart may
// hold a note of maxEditBytes escaped in one line (up to 6 bytes a byte);
// a longer line cannot be a record and is skipped without being held in
// memory. A variable for tests.
var maxJournalLine = 6*maxEditBytes + 1<<20

// Journal is the record of applied edits, a file of JSON lines kept
// outside the vault: each edit with the note's previous content, so that
// it can be undone. Previous contents larger than a few kilobytes are kept
// in files of their own in a folder beside it (<journal>.contents, named
// by their hash). It is safe for concurrent use within a process; between
// processes, appends, undos and compactions take a lock file beside it
// (<journal>.lock).
//
// An edit is journaled before it is written (an edit that cannot be
// journaled is not written), and corrected after if it was not written
// (OpVoid) or was written differently (OpAmend). Appending reads only the
// end of the file; undo reads the records without their contents, then the
// contents it restores. Every record starts on a line of its own: a record
// cut short by a crash is skipped with a warning, never the one after it.
type Journal struct {
	path     string
	contents string // folder of the stored previous contents
	max      int64
	log      *slog.Logger

	// mu serializes this process's appends, undos and compactions (the
	// lock file serializes processes), and guards the fields below: what
	// this process knows of the file since it last appended.
	mu    sync.Mutex
	size  int64 // file size after the last append; -1 unknown
	seq   int   // Seq of the last append
	extra int64 // bytes of stored contents; -1 unknown
	floor int64 // total at which a compaction found nothing to drop
}

// OpenJournal returns the journal at path (created on the first record).
func OpenJournal(path string, opts JournalOptions) *Journal {
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultJournalMax
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Journal{path: path, contents: path + ".contents", max: opts.MaxBytes,
		log: opts.Logger.With("component", "journal"), size: -1, extra: -1}
}

// Path returns the journal's file.
func (j *Journal) Path() string { return j.path }

// Record appends e, numbering it (the returned entry has its Seq), and
// syncs the file: when Record returns without error, the record is on
// disk. A Before too large for a line is stored beside the journal.
func (j *Journal) Record(e JournalEntry) (JournalEntry, error) {
	unlock, err := j.lock()
	if err != nil {
		return e, err
	}
	defer unlock()
	return j.append(e)
}

// append is Record with the lock held.
func (j *Journal) append(e JournalEntry) (JournalEntry, error) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if len(e.Before) > inlineBefore {
		h := Hash([]byte(e.Before))
		if e.BeforeHash != "" && e.BeforeHash != h {
			return e, fmt.Errorf("journal: the previous content of %q does not have the hash recorded for it", e.Path)
		}
		if err := j.store(h, e.Before); err != nil {
			return e, fmt.Errorf("journal: store the previous content of %q: %w", e.Path, err)
		}
		e.BeforeHash, e.Before, e.BeforeStored = h, "", true
	}
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return e, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return e, fmt.Errorf("journal %s: %w", j.path, err)
	}
	size := st.Size()
	var line []byte
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return e, fmt.Errorf("journal %s: %w", j.path, err)
		}
		if last[0] != '\n' {
			// A record cut short by a crash: this one starts on a line
			// of its own, and readers skip that one.
			j.log.Warn("the journal's last record was cut short (a crash while it was written); it is skipped", "journal", j.path)
			line = append(line, '\n')
		}
	}
	if size == j.size && j.seq > 0 {
		e.Seq = j.seq + 1
	} else {
		last, err := lastSeq(f, size)
		if err != nil {
			return e, fmt.Errorf("journal %s: %w", j.path, err)
		}
		e.Seq = max(last, j.seq) + 1
	}
	b, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("journal: %w", err)
	}
	line = append(append(line, b...), '\n')
	if _, err := f.Write(line); err != nil {
		return e, fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := fsync(f); err != nil {
		return e, fmt.Errorf("journal %s: %w", j.path, err)
	}
	j.size, j.seq = size+int64(len(line)), e.Seq
	if err := j.maybeCompact(); err != nil {
		// The record is written; a journal over its cap is not lost work.
		j.log.Warn("could not compact the edit journal", "journal", j.path, "error", err)
	}
	return e, nil
}

// store keeps content in the contents folder under its hash h, once.
func (j *Journal) store(h, content string) error {
	p := filepath.Join(j.contents, h)
	if b, err := os.ReadFile(p); err == nil && Hash(b) == h {
		return nil
	}
	if err := os.MkdirAll(j.contents, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(j.contents, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.WriteString(content)
	if err == nil {
		err = fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	syncDir(j.contents)
	if j.extra >= 0 {
		j.extra += int64(len(content))
	}
	return nil
}

// stored reads the previous content stored under hash h, checking it.
func (j *Journal) stored(h string) (string, error) {
	if !isHash(h) {
		return "", fmt.Errorf("%q is not a content hash", h)
	}
	b, err := os.ReadFile(filepath.Join(j.contents, h))
	if err != nil {
		return "", err
	}
	if Hash(b) != h {
		return "", errors.New("the stored content is damaged (its hash does not match)")
	}
	return string(b), nil
}

// isHash reports whether s is a hex SHA-256 as Hash writes it: a name
// that cannot lead out of the contents folder.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Entries returns every readable record, oldest first. A stored Before
// (BeforeStored) is not loaded.
func (j *Journal) Entries() ([]JournalEntry, error) {
	f, unlock, err := j.open()
	if f == nil || err != nil {
		return nil, err
	}
	defer unlock()
	defer f.Close()
	var out []JournalEntry
	err = j.scan(f, true, func(r record) { out = append(out, r.JournalEntry) })
	return out, err
}

// record is a journal entry as read, with where its line is.
type record struct {
	JournalEntry
	off, n int64 // the line's offset and length, its '\n' included
}

// scan reads the records of f in order, passing each to fn; with
// withBefore false their Before is dropped once parsed, so that memory
// holds one line at a time. Lines that are not records (cut short by a
// crash, damaged, longer than maxJournalLine) are skipped with a warning.
func (j *Journal) scan(f *os.File, withBefore bool, fn func(record)) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 64<<10)
	var off int64
	var long []byte
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadSlice('\n')
		n := int64(len(line))
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				n += int64(len(line))
				if long != nil && len(long)+len(line) <= maxJournalLine {
					long = append(long, line...)
				} else {
					long = nil
				}
			}
			if long == nil {
				j.log.Warn("skipped a journal line too long to be a record", "journal", j.path, "line", lineNo, "bytes", n)
				off += n
				if err != nil {
					break
				}
				continue
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("journal %s: %w", j.path, err)
		}
		if body := bytes.TrimSpace(line); len(body) > 0 {
			e, jerr := parseRecord(body, withBefore)
			if jerr != nil || e.Seq <= 0 || e.Op == "" {
				j.log.Warn("skipped a damaged journal record (cut short by a crash, or edited by hand)", "journal", j.path, "line", lineNo)
			} else {
				fn(record{JournalEntry: e, off: off, n: n})
			}
		}
		off += n
		if err != nil {
			break
		}
	}
	return nil
}

// recordHead is a JournalEntry without its Before: decoding into it skips
// the previous content without copying it.
type recordHead struct {
	Seq          int       `json:"seq"`
	Time         time.Time `json:"time"`
	RunID        string    `json:"runId"`
	Op           string    `json:"op"`
	Path         string    `json:"path"`
	Created      bool      `json:"created"`
	BeforeStored bool      `json:"beforeStored"`
	BeforeHash   string    `json:"beforeHash"`
	AfterHash    string    `json:"afterHash"`
	Undoes       int       `json:"undoes"`
	Amends       int       `json:"amends"`
}

// parseRecord decodes one line of the journal, with or without its
// previous content.
func parseRecord(line []byte, withBefore bool) (JournalEntry, error) {
	if withBefore {
		var e JournalEntry
		err := json.Unmarshal(line, &e)
		return e, err
	}
	var h recordHead
	err := json.Unmarshal(line, &h)
	return JournalEntry{Seq: h.Seq, Time: h.Time, RunID: h.RunID, Op: h.Op, Path: h.Path, Created: h.Created,
		BeforeStored: h.BeforeStored, BeforeHash: h.BeforeHash, AfterHash: h.AfterHash, Undoes: h.Undoes, Amends: h.Amends}, err
}

// before reads the previous content of the edit r of f, checked against
// its BeforeHash.
func (j *Journal) before(f *os.File, r record) (string, error) {
	var s string
	if r.BeforeStored {
		var err error
		if s, err = j.stored(r.BeforeHash); err != nil {
			return "", fmt.Errorf("the previous content of %q (journal record %d): %w", r.Path, r.Seq, err)
		}
		return s, nil
	}
	line := make([]byte, r.n)
	if _, err := f.ReadAt(line, r.off); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("journal record %d: %w", r.Seq, err)
	}
	var e JournalEntry
	if err := json.Unmarshal(bytes.TrimSpace(line), &e); err != nil || e.Seq != r.Seq {
		return "", fmt.Errorf("journal record %d could not be read again", r.Seq)
	}
	if r.BeforeHash == "" || Hash([]byte(e.Before)) != r.BeforeHash {
		return "", fmt.Errorf("journal record %d is damaged: its previous content of %q does not have its hash", r.Seq, r.Path)
	}
	return e.Before, nil
}

// lastSeq returns the Seq of the last record of the first size bytes of
// f, reading back from the end a block at a time (0 when there is none).
func lastSeq(f *os.File, size int64) (int, error) {
	const block = 64 << 10
	parse := func(line []byte) int {
		var h struct {
			Seq int    `json:"seq"`
			Op  string `json:"op"`
		}
		if len(line) <= maxJournalLine && json.Unmarshal(line, &h) == nil && h.Seq > 0 && h.Op != "" {
			return h.Seq
		}
		return 0
	}
	pos := size // buf holds the bytes of f from pos on that are not looked at yet
	var buf []byte
	for {
		buf = bytes.TrimSuffix(buf, []byte{'\n'})
		i := bytes.LastIndexByte(buf, '\n')
		switch {
		case i >= 0 || (pos == 0 && len(buf) > 0):
			if seq := parse(buf[i+1:]); seq > 0 {
				return seq, nil
			}
			buf = buf[:max(i, 0)]
			continue
		case pos == 0:
			return 0, nil
		case len(buf) >= block:
			// A long line: find where it starts, then read it whole.
			nl, err := prevNewline(f, pos)
			if err != nil {
				return 0, err
			}
			start := nl + 1
			if n := pos - start + int64(len(buf)); n <= int64(maxJournalLine) {
				line := make([]byte, pos-start, n)
				if _, err := f.ReadAt(line, start); err != nil {
					return 0, err
				}
				if seq := parse(append(line, buf...)); seq > 0 {
					return seq, nil
				}
			}
			pos, buf = start, nil
			continue
		}
		n := min(block, pos)
		pos -= n
		chunk := make([]byte, n, n+int64(len(buf)))
		if _, err := f.ReadAt(chunk, pos); err != nil {
			return 0, err
		}
		buf = append(chunk, buf...)
	}
}

// prevNewline returns the offset of the last '\n' of f before pos, or -1.
func prevNewline(f *os.File, pos int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for pos > 0 {
		n := min(int64(len(buf)), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i), nil
		}
	}
	return -1, nil
}

// open takes the journal (lock) and opens its file for reading; with no
// file yet it returns a nil file and holds nothing. The caller closes the
// file and calls unlock.
func (j *Journal) open() (f *os.File, unlock func(), err error) {
	unlock, err = j.lock()
	if err != nil {
		return nil, nil, err
	}
	f, err = os.Open(j.path)
	if err != nil {
		unlock()
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	return f, unlock, nil
}

// lock takes the journal for this goroutine and process: the mutex, then
// the lock file. The returned function releases both.
func (j *Journal) lock() (func(), error) {
	j.mu.Lock()
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		j.mu.Unlock()
		return nil, fmt.Errorf("journal: %w", err)
	}
	release, err := lockFile(j.path + ".lock")
	if err != nil {
		j.mu.Unlock()
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	return func() {
		release()
		j.mu.Unlock()
	}, nil
}
