package vault

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// editVault makes a vault with a few notes and a folder outside it.
func editVault(t *testing.T) (v *Vault, root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "vault")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "Projects"), filepath.Join(root, ".obsidian")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "Note.md"), "# Note\n\nFirst line.\n\n## Tasks\n- one\n\n## Later\nlater\n")
	write(t, filepath.Join(outside, "Secret.md"), "secret\n")
	v, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v, root, outside
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProposeAndApply(t *testing.T) {
	tests := []struct {
		name string
		req  EditRequest
		path string
		want string
	}{
		{"create", EditRequest{Op: EditCreate, Path: "Projects/New/Plan.md", Content: "# Plan"}, "Projects/New/Plan.md", "# Plan\n"},
		{"append at end", EditRequest{Op: EditAppend, Path: "Note.md", Content: "Appended."}, "Note.md",
			"# Note\n\nFirst line.\n\n## Tasks\n- one\n\n## Later\nlater\n\nAppended.\n"},
		{"append under heading", EditRequest{Op: EditAppend, Path: "Note.md", Content: "- two", Heading: "## tasks"}, "Note.md",
			"# Note\n\nFirst line.\n\n## Tasks\n- one\n\n- two\n\n## Later\nlater\n"},
		{"replace", EditRequest{Op: EditReplace, Path: "Note.md", Find: "First line.", Replace: "The first line."}, "Note.md",
			"# Note\n\nThe first line.\n\n## Tasks\n- one\n\n## Later\nlater\n"},
		{"set properties without frontmatter", EditRequest{Op: EditSetProperties, Path: "Note.md", Properties: map[string]any{"status": "done"}}, "Note.md",
			"---\nstatus: done\n---\n# Note\n\nFirst line.\n\n## Tasks\n- one\n\n## Later\nlater\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, root, _ := editVault(t)
			p, err := v.Propose(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.Path != tt.path || p.After != tt.want {
				t.Fatalf("proposal %q:\n%s\nwant %q:\n%s", p.Path, p.After, tt.path, tt.want)
			}
			if !strings.Contains(p.Diff, "+++ b/"+tt.path) {
				t.Errorf("diff lacks its header:\n%s", p.Diff)
			}
			if tt.req.Op != EditCreate && read(t, filepath.Join(root, "Note.md")) != p.Before {
				t.Fatal("Propose wrote the note")
			}
			hash, err := v.Apply(p)
			if err != nil {
				t.Fatal(err)
			}
			got := read(t, filepath.Join(root, filepath.FromSlash(tt.path)))
			if got != tt.want || hash != Hash([]byte(got)) {
				t.Fatalf("after Apply:\n%s\nwant:\n%s", got, tt.want)
			}
			// No temporary file is left behind.
			matches, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Join(root, tt.path)), ".*.tmp"))
			if len(matches) > 0 {
				t.Errorf("temporary files left: %v", matches)
			}
		})
	}
}

func TestProposeRefuses(t *testing.T) {
	v, root, outside := editVault(t)
	if err := os.Symlink(outside, filepath.Join(root, "Linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "Secret.md"), filepath.Join(root, "Secret.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "Missing.md"), filepath.Join(root, "Dangling.md")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  EditRequest
		want error
	}{
		{"escape", EditRequest{Op: EditCreate, Path: "../outside/Evil.md", Content: "x"}, ErrUnsafePath},
		{"absolute", EditRequest{Op: EditCreate, Path: filepath.Join(outside, "Evil.md"), Content: "x"}, ErrUnsafePath},
		{"symlinked folder", EditRequest{Op: EditCreate, Path: "Linked/Evil.md", Content: "x"}, ErrUnsafePath},
		{"symlinked note", EditRequest{Op: EditAppend, Path: "Secret.md", Content: "x"}, ErrUnsafePath},
		{"dangling symlink", EditRequest{Op: EditCreate, Path: "Dangling.md", Content: "x"}, ErrUnsafePath},
		{"dot-folder", EditRequest{Op: EditCreate, Path: ".obsidian/x.md", Content: "x"}, ErrUnsafePath},
		{"not markdown", EditRequest{Op: EditCreate, Path: "script.sh", Content: "x"}, ErrNotMarkdown},
		{"existing file", EditRequest{Op: EditCreate, Path: "Note.md", Content: "x"}, ErrExists},
		{"missing note", EditRequest{Op: EditAppend, Path: "Nope.md", Content: "x"}, ErrNotFound},
		{"find absent", EditRequest{Op: EditReplace, Path: "Note.md", Find: "nowhere", Replace: "x"}, ErrEdit},
		{"find twice", EditRequest{Op: EditReplace, Path: "Note.md", Find: "## ", Replace: "x"}, ErrEdit},
		{"heading absent", EditRequest{Op: EditAppend, Path: "Note.md", Content: "x", Heading: "Nope"}, ErrEdit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Propose(tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if got := read(t, filepath.Join(outside, "Secret.md")); got != "secret\n" {
		t.Errorf("the file outside the vault changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "Evil.md")); err == nil {
		t.Error("a note was created outside the vault")
	}
}

func TestApplyConflict(t *testing.T) {
	v, root, _ := editVault(t)
	p, err := v.Propose(EditRequest{Op: EditAppend, Path: "Note.md", Content: "agent text"})
	if err != nil {
		t.Fatal(err)
	}
	changed := "# Note\n\nThe person's own edit.\n"
	write(t, filepath.Join(root, "Note.md"), changed)
	if _, err := v.Apply(p); !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	if got := read(t, filepath.Join(root, "Note.md")); got != changed {
		t.Fatalf("the note changed: %q", got)
	}
}

func TestApplyCreateRace(t *testing.T) {
	v, root, _ := editVault(t)
	p, err := v.Propose(EditRequest{Op: EditCreate, Path: "Fresh.md", Content: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "Fresh.md"), "person")
	if _, err := v.Apply(p); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if got := read(t, filepath.Join(root, "Fresh.md")); got != "person" {
		t.Fatalf("the note was replaced: %q", got)
	}
	// The no-replace link refuses too when the check passes and the note
	// appears just before the write.
	if err := createNew(filepath.Join(root, "Fresh.md"), []byte("agent")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("createNew over an existing note: %v", err)
	}
}

func TestApplyKeepsMode(t *testing.T) {
	v, root, _ := editVault(t)
	note := filepath.Join(root, "Note.md")
	if err := os.Chmod(note, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := v.Propose(EditRequest{Op: EditAppend, Path: "Note.md", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Apply(p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(note)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestSetPropertiesRoundTrip(t *testing.T) {
	in := "---\n" +
		"# Written by hand: keep this comment.\n" +
		"title: \"Weekly review\" # quoted on purpose\n" +
		"tags:\n" +
		"  - review\n" +
		"  - weekly\n" +
		"aliases: [wr, week]\n" +
		"status: draft # was todo\n" +
		"created: 2026-03-02\n" +
		"---\n" +
		"Body text.\n"
	out, err := setProperties(in, map[string]any{
		"status":   "done",
		"reviewed": "2026-03-09",
		"score":    float64(4),
		"created":  nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "---\n" +
		"# Written by hand: keep this comment.\n" +
		"title: \"Weekly review\" # quoted on purpose\n" +
		"tags:\n" +
		"  - review\n" +
		"  - weekly\n" +
		"aliases: [wr, week]\n" +
		"status: done # was todo\n" +
		"reviewed: 2026-03-09\n" +
		"score: 4\n" +
		"---\n" +
		"Body text.\n"
	if out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	n := Parse("x.md", []byte(out), time.Time{}, DefaultChunkSize)
	if n.FrontmatterError != "" || n.Properties["status"] != "done" || n.Title != "Weekly review" {
		t.Fatalf("the result does not parse as meant: %+v", n.Properties)
	}
}

func TestSetPropertiesRefusesBrokenYAML(t *testing.T) {
	_, err := setProperties("---\ntitle: [unclosed\n---\nbody\n", map[string]any{"a": "b"})
	if !errors.Is(err, ErrEdit) {
		t.Fatalf("err = %v, want ErrEdit", err)
	}
}

func TestUndo(t *testing.T) {
	v, root, _ := editVault(t)
	j := OpenJournal(filepath.Join(t.TempDir(), "edits.jsonl"), JournalOptions{})
	original := read(t, filepath.Join(root, "Note.md"))
	apply := func(run string, req EditRequest) {
		t.Helper()
		p, err := v.Propose(req)
		if err != nil {
			t.Fatal(err)
		}
		hash, err := v.Apply(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Record(JournalEntry{RunID: run, Op: p.Op, Path: p.Path, Created: p.Create, Before: p.Before, BeforeHash: p.BaseHash, AfterHash: hash}); err != nil {
			t.Fatal(err)
		}
	}
	apply("run-1", EditRequest{Op: EditAppend, Path: "Note.md", Content: "appended"})
	apply("run-1", EditRequest{Op: EditReplace, Path: "Note.md", Find: "appended", Replace: "uno"})
	apply("run-1", EditRequest{Op: EditCreate, Path: "Made.md", Content: "made"})

	// A conflicting change refuses the whole undo.
	saved := read(t, filepath.Join(root, "Made.md"))
	write(t, filepath.Join(root, "Made.md"), "changed by hand\n")
	if _, err := v.Undo(j, ""); !errors.Is(err, ErrConflict) {
		t.Fatalf("undo over a change: %v, want ErrConflict", err)
	}
	if !strings.Contains(read(t, filepath.Join(root, "Note.md")), "uno") {
		t.Fatal("a refused undo changed a note")
	}
	write(t, filepath.Join(root, "Made.md"), saved)

	done, err := v.Undo(j, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 3 || !done[0].Removed {
		t.Fatalf("undone = %+v", done)
	}
	if got := read(t, filepath.Join(root, "Note.md")); got != original {
		t.Fatalf("Note.md after undo:\n%s\nwant:\n%s", got, original)
	}
	if _, err := os.Stat(filepath.Join(root, "Made.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the created note is still there: %v", err)
	}
	if _, err := v.Undo(j, "run-1"); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("second undo: %v, want ErrNothingToUndo", err)
	}
}

// TestCrashBeforeRename kills a process between writing the temporary
// file and renaming it over the note: the note must be intact, and the
// temporary file left behind is hidden from the vault.
func TestCrashBeforeRename(t *testing.T) {
	if dir := os.Getenv("VAULT_EDIT_CRASH_VAULT"); dir != "" {
		v, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := v.Propose(EditRequest{Op: EditReplace, Path: "Note.md", Find: "First line.", Replace: "Crashed."})
		if err != nil {
			t.Fatal(err)
		}
		beforeRename = func(string) { os.Exit(3) }
		_, _ = v.Apply(p)
		t.Fatal("Apply returned instead of crashing")
	}
	v, root, _ := editVault(t)
	original := read(t, filepath.Join(root, "Note.md"))
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBeforeRename$")
	cmd.Env = append(os.Environ(), "VAULT_EDIT_CRASH_VAULT="+root)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the child did not crash where meant: %v\n%s", err, out)
	}
	if got := read(t, filepath.Join(root, "Note.md")); got != original {
		t.Fatalf("the note changed:\n%s", got)
	}
	temps, _ := filepath.Glob(filepath.Join(root, tempPattern))
	if len(temps) != 1 || !strings.Contains(read(t, temps[0]), "Crashed.") {
		t.Fatalf("want the written temporary file left behind, got %v", temps)
	}
	var notes []string
	if err := v.Walk(context.Background(), func(fi FileInfo) error { notes = append(notes, fi.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0] != "Note.md" {
		t.Fatalf("the vault's notes after the crash: %v", notes)
	}
}
