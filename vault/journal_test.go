package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// logRecorder keeps the messages of the records logged at Warn or above.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.msgs = append(l.msgs, r.Message)
		l.mu.Unlock()
	}
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// edit proposes req, applies it and journals it, as the service does.
func edit(t *testing.T, v *Vault, j *Journal, run string, req EditRequest) {
	t.Helper()
	p, err := v.Propose(req)
	if err != nil {
		t.Fatal(err)
	}
	e, err := j.Record(JournalEntry{RunID: run, Op: p.Op, Path: p.Path, Created: p.Create, Before: p.Before, BeforeHash: p.BaseHash, AfterHash: Hash([]byte(p.After))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Apply(p); err != nil {
		if _, verr := j.Record(JournalEntry{RunID: run, Op: OpVoid, Path: p.Path, Amends: e.Seq}); verr != nil {
			t.Fatal(verr)
		}
		t.Fatal(err)
	}
}

// TestJournalTornRecord cuts the journal's last record short, as a crash
// while appending it would, then edits and undoes: the new record is on a
// line of its own, the torn one is skipped with a warning, and undo
// reverts the new edit.
func TestJournalTornRecord(t *testing.T) {
	v, root, _ := editVault(t)
	note := filepath.Join(root, "Note.md")
	jp := filepath.Join(t.TempDir(), "edits.jsonl")
	logs := &logRecorder{}
	j := OpenJournal(jp, JournalOptions{Logger: slog.New(logs)})
	edit(t, v, j, "run-1", EditRequest{Op: EditAppend, Path: "Note.md", Content: "one"})
	b := []byte(read(t, jp))
	if err := os.WriteFile(jp, b[:len(b)-25], 0o600); err != nil {
		t.Fatal(err)
	}
	beforeRun2 := read(t, note)
	j = OpenJournal(jp, JournalOptions{Logger: slog.New(logs)}) // another process
	edit(t, v, j, "run-2", EditRequest{Op: EditAppend, Path: "Note.md", Content: "two"})
	done, err := v.Undo(j, "")
	if err != nil || len(done) != 1 {
		t.Fatalf("undo = %+v, %v", done, err)
	}
	if got := read(t, note); got != beforeRun2 {
		t.Fatalf("undo restored %q, want the note before run-2: %q", got, beforeRun2)
	}
	if !logs.has("cut short") && !logs.has("damaged") {
		t.Errorf("no warning about the torn record: %v", logs.msgs)
	}
	entries, err := j.Entries()
	if err != nil || len(entries) != 2 || entries[0].RunID != "run-2" || entries[1].Op != OpUndo {
		t.Fatalf("entries = %+v, %v", entries, err)
	}
}

// TestJournalHugeRecord edits a note of 6,000,000 '<' (36 MB as a JSON
// string), and undoes an edit of such a note journaled in one line as
// journals were written before contents were stored apart.
func TestJournalHugeRecord(t *testing.T) {
	v, root, _ := editVault(t)
	huge := strings.Repeat("<", 6_000_000) + "\n"
	write(t, filepath.Join(root, "Huge.md"), huge)
	jp := filepath.Join(t.TempDir(), "edits.jsonl")
	j := OpenJournal(jp, JournalOptions{})
	edit(t, v, j, "run-1", EditRequest{Op: EditAppend, Path: "Huge.md", Content: "more"})
	if st, err := os.Stat(jp); err != nil || st.Size() > 4<<10 {
		t.Fatalf("journal %v, %v: the previous content is in its line", st, err)
	}
	done, err := v.Undo(j, "")
	if err != nil || len(done) != 1 || read(t, filepath.Join(root, "Huge.md")) != huge {
		t.Fatalf("undo = %+v, %v", done, err)
	}

	// A journal line of the old format, with the whole note in it.
	write(t, filepath.Join(root, "Huge2.md"), huge+"\nlater\n")
	line, err := json.Marshal(JournalEntry{Seq: 1, Time: time.Now(), RunID: "old", Op: EditAppend, Path: "Huge2.md",
		Before: huge, BeforeHash: Hash([]byte(huge)), AfterHash: Hash([]byte(huge + "\nlater\n"))})
	if err != nil {
		t.Fatal(err)
	}
	if len(line) < 32<<20 {
		t.Fatalf("the old line is only %d bytes", len(line))
	}
	old := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(old, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	line = nil
	done, err = v.Undo(OpenJournal(old, JournalOptions{}), "")
	if err != nil || len(done) != 1 || read(t, filepath.Join(root, "Huge2.md")) != huge {
		t.Fatalf("undo of an old huge record = %+v, %v", done, err)
	}
}

// readBytes returns how many bytes this process has read from files so
// far (Linux's rchar).
func readBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// bigJournal writes a journal of runs runs, each of one edit of Note.md
// whose previous content is before, as records of the current format.
func bigJournal(t *testing.T, path string, runs int, before string) {
	t.Helper()
	var buf bytes.Buffer
	for i := 1; i <= runs; i++ {
		b, err := json.Marshal(JournalEntry{Seq: i, Time: time.Unix(int64(i), 0), RunID: "run-" + strconv.Itoa(i), Op: EditAppend,
			Path: "Note.md", Before: before, BeforeHash: Hash([]byte(before)), AfterHash: Hash([]byte(before + strconv.Itoa(i)))})
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestJournalAppendReadsOnlyItsEnd appends to a 24 MB journal: the append
// reads the end of the file, not the whole of it.
func TestJournalAppendReadsOnlyItsEnd(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts the bytes read with /proc/self/io")
	}
	v, _, _ := editVault(t)
	jp := filepath.Join(t.TempDir(), "edits.jsonl")
	bigJournal(t, jp, 2000, strings.Repeat("a line of a note\n", 700))
	j := OpenJournal(jp, JournalOptions{MaxBytes: -1})
	start := readBytes(t)
	edit(t, v, j, "run-new", EditRequest{Op: EditAppend, Path: "Note.md", Content: "new"})
	if n := readBytes(t) - start; n > 1<<20 {
		t.Fatalf("an edit read %d bytes of a 24 MB journal", n)
	}
	entries, err := j.Entries()
	if err != nil || len(entries) != 2001 || entries[2000].Seq != 2001 || entries[2000].RunID != "run-new" {
		t.Fatalf("the new record: %d entries, %v", len(entries), err)
	}
}

// TestJournalCompaction caps a journal: past the cap the oldest runs are
// dropped, whole, with the contents stored for them only; the newest runs
// can still be undone; the next appends do not read it again.
func TestJournalCompaction(t *testing.T) {
	v, root, _ := editVault(t)
	jp := filepath.Join(t.TempDir(), "edits.jsonl")
	bigJournal(t, jp, 400, strings.Repeat("x", 10_000)) // ~ 8 MB
	const cap = 2 << 20
	j := OpenJournal(jp, JournalOptions{MaxBytes: cap})
	// Runs with stored contents (over the inline size).
	for i := range 3 {
		write(t, filepath.Join(root, "Big.md"), strings.Repeat("big note\n", 3000)+strconv.Itoa(i)+"\n")
		edit(t, v, j, "stored-"+strconv.Itoa(i), EditRequest{Op: EditAppend, Path: "Big.md", Content: "more"})
	}
	st, err := os.Stat(jp)
	if err != nil || st.Size()+folderBytes(jp+".contents") > cap {
		t.Fatalf("journal %v with contents %d after compaction: %v", st.Size(), folderBytes(jp+".contents"), err)
	}
	entries, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, e := range entries {
		runs[e.RunID] = true
	}
	if !runs["stored-2"] || runs["run-1"] {
		t.Fatalf("kept runs %v", runs)
	}
	// The newest run is undone from its stored content.
	done, err := v.Undo(j, "")
	if err != nil || len(done) != 1 || done[0].Path != "Big.md" {
		t.Fatalf("undo = %+v, %v", done, err)
	}
	if got := read(t, filepath.Join(root, "Big.md")); got != strings.Repeat("big note\n", 3000)+"2\n" {
		t.Fatalf("Big.md after undo: %d bytes", len(got))
	}
	if _, err := v.Undo(j, "run-1"); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("undo of a dropped run: %v", err)
	}
	names, _ := os.ReadDir(jp + ".contents")
	if len(names) > 3 {
		t.Fatalf("stored contents left: %d", len(names))
	}
}
