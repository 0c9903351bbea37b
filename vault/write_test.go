package vault

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyKeepsConcurrentWrite writes to the note while an approved edit
// is being written: after the temporary file is synced (the window a
// check made before writing it leaves open), and between the last check
// and the rename. The other program's line must survive, and the edit be
// refused as a conflict.
func TestApplyKeepsConcurrentWrite(t *testing.T) {
	tests := []struct {
		name string
		hook *func(tmp string)
	}{
		{"before rename", &beforeRename},
		{"between the last check and the rename", &afterLastCheck},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, root, _ := editVault(t)
			note := filepath.Join(root, "Note.md")
			original := read(t, note)
			p, err := v.Propose(EditRequest{Op: EditAppend, Path: "Note.md", Content: "agent line"})
			if err != nil {
				t.Fatal(err)
			}
			*tt.hook = func(string) {
				f, err := os.OpenFile(note, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				if _, err := f.WriteString("external line\n"); err != nil {
					t.Error(err)
				}
			}
			t.Cleanup(func() { *tt.hook = nil })
			if _, err := v.Apply(p); !errors.Is(err, ErrConflict) {
				t.Fatalf("Apply = %v, want ErrConflict", err)
			}
			if got, want := read(t, note), original+"external line\n"; got != want {
				t.Fatalf("note after the refused edit:\n%q\nwant:\n%q", got, want)
			}
			if temps, _ := filepath.Glob(filepath.Join(root, ".*.tmp")); len(temps) > 0 {
				t.Errorf("temporary files left: %v", temps)
			}
		})
	}
}

// TestReplaceCRLFCountsEveryOccurrence finds LF text in a CRLF note where
// it occurs twice: the edit must be refused as ambiguous, as in an LF note.
func TestReplaceCRLFCountsEveryOccurrence(t *testing.T) {
	tests := []struct {
		name, note, find string
		wantErr          string
		want             string
	}{
		{"twice", "# A\r\nTODO\r\nfix\r\n\r\nTODO\r\nfix\r\n", "TODO\nfix", "occurs 2 times", ""},
		{"once", "# A\r\nTODO\r\nfix\r\n\r\nDONE\r\n", "TODO\nfix", "", "# A\r\nlater\r\nnow\r\n\r\nDONE\r\n"},
		{"lf twice", "# A\nTODO\nfix\n\nTODO\nfix\n", "TODO\nfix", "occurs 2 times", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replaceOnce(tt.note, tt.find, "later\nnow")
			if tt.wantErr != "" {
				if !errors.Is(err, ErrEdit) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestEditLongName edits a note whose name is 243 bytes long (80 CJK
// characters): the temporary file's name must stay within the 255-byte
// limit of a file name.
func TestEditLongName(t *testing.T) {
	v, root, _ := editVault(t)
	name := strings.Repeat("漢", 80) + ".md"
	if len(name) != 243 {
		t.Fatalf("name is %d bytes", len(name))
	}
	write(t, filepath.Join(root, name), "# Long\n")
	for _, req := range []EditRequest{
		{Op: EditAppend, Path: name, Content: "more"},
		{Op: EditCreate, Path: "Projects/" + name, Content: "new"},
	} {
		p, err := v.Propose(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Apply(p); err != nil {
			t.Fatalf("%s: %v", req.Op, err)
		}
	}
	if got := read(t, filepath.Join(root, name)); got != "# Long\n\nmore\n" {
		t.Fatalf("note = %q", got)
	}
}

// TestEditRefusesReadOnlyNote makes a note read-only (chmod 444): an edit
// is refused when proposed, and when the note became read-only after the
// proposal, even for a user (root) whom the permission does not stop.
func TestEditRefusesReadOnlyNote(t *testing.T) {
	v, root, _ := editVault(t)
	note := filepath.Join(root, "Note.md")
	original := read(t, note)
	p, err := v.Propose(EditRequest{Op: EditAppend, Path: "Note.md", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(note, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Propose(EditRequest{Op: EditAppend, Path: "Note.md", Content: "x"}); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Propose = %v, want a permission error", err)
	}
	if _, err := v.Apply(p); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Apply = %v, want a permission error", err)
	}
	if got := read(t, note); got != original {
		t.Fatalf("the read-only note changed: %q", got)
	}
	if st, _ := os.Stat(note); st.Mode().Perm() != 0o444 {
		t.Fatalf("mode = %v", st.Mode().Perm())
	}
}
