package vault

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fuzzVault makes the vault FuzzJournal undoes into: notes, a symlink to a
// folder outside it, a dot-folder, and a stored content. It returns the
// vault, its base folder (vault/, outside/, journal/) and the journal's
// path.
func fuzzVault(t *testing.T) (v *Vault, base, jp string) {
	t.Helper()
	base = t.TempDir()
	root := filepath.Join(base, "vault")
	for _, d := range []string{root, filepath.Join(root, "Projects"), filepath.Join(root, ".obsidian"), filepath.Join(base, "outside"), filepath.Join(base, "journal")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range fuzzFiles {
		if err := os.WriteFile(filepath.Join(base, filepath.FromSlash(p)), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(root, "Linked")); err != nil {
		t.Fatal(err)
	}
	jp = filepath.Join(base, "journal", "edits.jsonl")
	stored := filepath.Join(jp+".contents", Hash([]byte(fuzzStored)))
	if err := os.MkdirAll(filepath.Dir(stored), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stored, []byte(fuzzStored), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v, base, jp
}

var fuzzFiles = map[string]string{
	"vault/Note.md":          "# Note\n\nafter the edit\n",
	"vault/Projects/Plan.md": "# Plan\n",
	"vault/Made.md":          "made by a run\n",
	"vault/.obsidian/x.md":   "settings\n",
	"vault/script.sh":        "echo hi\n",
	"outside/Secret.md":      "secret\n",
}

var fuzzStored = strings.Repeat("stored previous content\n", 1000)

// fuzzSeeds are journals FuzzJournal starts from: well-formed runs, torn
// and truncated ones, hostile paths and stored-content names, and lines
// of every kind of damage.
func fuzzSeeds() [][]byte {
	h := func(s string) string { return Hash([]byte(s)) }
	rec := func(e JournalEntry) string {
		e.Time = time.Unix(1700000000, 0).UTC()
		b, _ := json.Marshal(e)
		return string(b) + "\n"
	}
	note, made := fuzzFiles["vault/Note.md"], fuzzFiles["vault/Made.md"]
	good := rec(JournalEntry{Seq: 1, RunID: "r1", Op: EditAppend, Path: "Note.md", Before: "# Note\n", BeforeHash: h("# Note\n"), AfterHash: h(note)}) +
		rec(JournalEntry{Seq: 2, RunID: "r1", Op: EditCreate, Path: "Made.md", Created: true, AfterHash: h(made)})
	stored := rec(JournalEntry{Seq: 1, RunID: "r2", Op: EditReplace, Path: "Projects/Plan.md", BeforeStored: true, BeforeHash: h(fuzzStored), AfterHash: h("# Plan\n")})
	seeds := []string{
		good,
		good[:len(good)-30],
		good[:len(good)/2] + "\n" + good[len(good)/2:],
		good + rec(JournalEntry{Seq: 3, RunID: "r1", Op: OpUndo, Path: "Made.md", Undoes: 2}),
		good + rec(JournalEntry{Seq: 3, RunID: "r1", Op: OpAmend, Amends: 1, AfterHash: h("other")}),
		good + rec(JournalEntry{Seq: 3, RunID: "r1", Op: OpVoid, Amends: 2}),
		stored,
		strings.Replace(stored, h(fuzzStored), "../../outside/Secret.md", 1),
		rec(JournalEntry{Seq: 1, RunID: "r3", Op: EditAppend, Path: "../outside/Secret.md", Before: "pwned", BeforeHash: h("pwned"), AfterHash: h("secret\n")}),
		rec(JournalEntry{Seq: 1, RunID: "r3", Op: EditAppend, Path: "Linked/Secret.md", Before: "pwned", BeforeHash: h("pwned"), AfterHash: h("secret\n")}),
		rec(JournalEntry{Seq: 1, RunID: "r3", Op: EditCreate, Path: "/etc/hostname", Created: true, AfterHash: h("x")}),
		rec(JournalEntry{Seq: 1, RunID: "r3", Op: EditAppend, Path: ".obsidian/x.md", Before: "x", BeforeHash: h("x"), AfterHash: h("settings\n")}),
		rec(JournalEntry{Seq: 1, RunID: "r3", Op: EditAppend, Path: "script.sh", Before: "x", BeforeHash: h("x"), AfterHash: h("echo hi\n")}),
		rec(JournalEntry{Seq: 1, RunID: "r4", Op: EditAppend, Path: "Note.md", Before: "lies", BeforeHash: h("truth"), AfterHash: h(note)}),
		rec(JournalEntry{Seq: 1, RunID: "r4", Op: EditAppend, Path: "Note.md", Before: "no hash", AfterHash: h(note)}),
		rec(JournalEntry{Seq: 1, RunID: "r4", Op: EditAppend, Path: "Note.md", Before: "x", BeforeHash: h("x"), AfterHash: h("not what is on disk")}),
		"{\"seq\":1,\"op\":\"append_to_note\",\"path\":\"Note.md\",\"before\":\"" + strings.Repeat("\\u003c", 3000) + "\n",
		"\x00\xff{}\n[]\nnull\n{\"seq\":-1}\n{\"seq\":1}\n" + good,
		strings.Repeat("x", 10000) + "\n" + good,
	}
	out := make([][]byte, len(seeds))
	for i, s := range seeds {
		out[i] = []byte(s)
	}
	return out
}

// snapshot maps every file under base (symlinks as their target) to its
// content.
func snapshot(t *testing.T, base string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasPrefix(rel, "journal"):
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzJournal undoes with torn, truncated, huge and hostile journals. Undo
// may refuse, but it never writes outside the vault, never writes a file
// that is not a note of the vault, never changes a note whose content is
// not the after-hash of one of the journal's edits of it, and leaves each
// note it changes as an edit of it found it (or removed, when an edit
// created it).
func FuzzJournal(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, "")
		f.Add(s, "r1")
	}
	f.Fuzz(func(t *testing.T, journal []byte, run string) {
		savedLine, savedSync := maxJournalLine, syncWrites
		maxJournalLine = 4096 // long lines are skipped without being held
		syncWrites = false
		defer func() { maxJournalLine, syncWrites = savedLine, savedSync }()
		v, base, jp := fuzzVault(t)
		if err := os.WriteFile(jp, journal, 0o600); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, base)
		_, _ = v.Undo(OpenJournal(jp, JournalOptions{}), run)
		after := snapshot(t, base)

		// What the journal says of each note, however it is damaged.
		afterHashes, beforeHashes, created := map[string]map[string]bool{}, map[string]map[string]bool{}, map[string]bool{}
		for _, line := range bytes.Split(journal, []byte("\n")) {
			var e JournalEntry
			if json.Unmarshal(bytes.TrimSpace(line), &e) != nil {
				continue
			}
			if afterHashes[e.Path] == nil {
				afterHashes[e.Path], beforeHashes[e.Path] = map[string]bool{}, map[string]bool{}
			}
			afterHashes[e.Path][e.AfterHash] = true
			beforeHashes[e.Path][e.BeforeHash] = true
			if e.Created {
				created[e.Path] = true
			}
		}
		amended := map[string]bool{}
		for _, line := range bytes.Split(journal, []byte("\n")) {
			var e JournalEntry
			if json.Unmarshal(bytes.TrimSpace(line), &e) == nil && e.Op == OpAmend {
				amended[e.AfterHash] = true
			}
		}
		for p, was := range before {
			now, still := after[p]
			if still && now == was {
				continue
			}
			note, inVault := strings.CutPrefix(p, "vault/")
			if !inVault || strings.HasPrefix(note, ".") || !strings.HasSuffix(note, ".md") {
				t.Fatalf("undo changed %s, which is not a note of the vault", p)
			}
			if h := Hash([]byte(was)); !afterHashes[note][h] && !amended[h] {
				t.Fatalf("undo changed %s, whose content (%s) no edit of the journal left", p, h)
			}
			switch {
			case !still && !created[note]:
				t.Fatalf("undo removed %s, which no edit created", p)
			case still && !beforeHashes[note][Hash([]byte(now))]:
				t.Fatalf("undo wrote %s with a content no edit found it with: %q", p, now)
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Fatalf("undo created %s", p)
			}
		}
	})
}
