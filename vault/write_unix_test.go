//go:build unix

package vault

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestEditRefusesFIFO names a FIFO like a note: every edit of it, and an
// Apply of a note swapped for one after the proposal, must return at once
// with an error instead of waiting for a writer.
func TestEditRefusesFIFO(t *testing.T) {
	v, root, _ := editVault(t)
	fifo := filepath.Join(root, "pipe.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A read stuck on the FIFO is released when the test ends.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	swapped, err := v.Propose(EditRequest{Op: EditAppend, Path: "Note.md", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"append", func() error {
			_, err := v.Propose(EditRequest{Op: EditAppend, Path: "pipe.md", Content: "x"})
			return err
		}},
		{"create", func() error {
			_, err := v.Propose(EditRequest{Op: EditCreate, Path: "pipe.md", Content: "x"})
			return err
		}},
		{"replace", func() error {
			_, err := v.Propose(EditRequest{Op: EditReplace, Path: "pipe.md", Find: "a", Replace: "b"})
			return err
		}},
		{"apply after a swap", func() error {
			note := filepath.Join(root, "Note.md")
			if err := os.Remove(note); err != nil {
				return err
			}
			if err := syscall.Mkfifo(note, 0o644); err != nil {
				return err
			}
			t.Cleanup(func() {
				if f, err := os.OpenFile(note, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			})
			_, err := v.Apply(swapped)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- tt.run() }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("the edit of a FIFO was not refused")
				}
				if !errors.Is(err, ErrNotMarkdown) && !errors.Is(err, ErrExists) && !errors.Is(err, ErrConflict) {
					t.Fatalf("err = %v, want a refusal (not a regular file)", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the edit of a FIFO hangs")
			}
		})
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", st, err)
	}
}
