package vault

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadRawPlainPathsTakeOneOpen checks that a note with no symlink on
// its path is opened without resolving it component by component (on
// Linux), that a note behind a symlink still goes through the full checks,
// and that a folder swapped for a symlink to outside the vault between two
// reads is refused on the second.
func TestReadRawPlainPathsTakeOneOpen(t *testing.T) {
	v, _ := newTestVault(t, Options{})
	root := v.Root()
	before := slowOpens.Load()
	raw, err := v.ReadRaw("projects/alpha/design.md", -1)
	if err != nil || string(raw.Content) != "# Design" {
		t.Fatalf("plain note: %v %+v", err, raw)
	}
	if runtime.GOOS == "linux" {
		if n := slowOpens.Load() - before; n != 0 {
			t.Errorf("a note with no symlink on its path was resolved component by component (%d slow opens)", n)
		}
	}
	before = slowOpens.Load()
	if raw, err := v.ReadRaw("link-home.md", -1); err != nil || string(raw.Content) != "# Home" {
		t.Fatalf("note behind a symlink: %v", err)
	}
	if n := slowOpens.Load() - before; n != 1 {
		t.Errorf("a note behind a symlink took %d slow opens, want 1", n)
	}
	if _, err := v.ReadRaw("leak.md", -1); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("symlink to outside: %v", err)
	}

	// The folder of a note read once is replaced by a symlink to a folder
	// outside holding a note of the same name.
	outside := filepath.Join(filepath.Dir(root), "elsewhere")
	writeTree(t, outside, map[string]string{"design.md": "# Not in the vault"})
	if err := os.RemoveAll(filepath.Join(root, "projects", "alpha")); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, filepath.Join(root, "projects", "alpha"))
	raw, err = v.ReadRaw("projects/alpha/design.md", -1)
	if !errors.Is(err, ErrUnsafePath) {
		t.Errorf("a folder swapped for a symlink to outside: %v %+v", err, raw)
	}
}

// TestReadRawNotARegularFile checks that a FIFO named like a note does not
// hang a read.
func TestReadRawNotARegularFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mkfifo")
	}
	v, _ := newTestVault(t, Options{})
	root := v.Root()
	if err := mkfifo(filepath.Join(root, "pipe.md")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := v.ReadRaw("pipe.md", -1)
		done <- err
	}()
	if err := <-done; err == nil {
		t.Errorf("reading a FIFO named like a note gave no error")
	}
}
