package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxEditBytes bounds a note an edit reads or writes, so a model cannot
// make the sidecar build a gigabyte diff.
const maxEditBytes = 8 << 20

// noteFile is a note opened by an edit: the open file, what fstat said of
// it and the content read from it. The file stays open until the edit is
// done, so that a write another program makes to it, even after it has been
// replaced by the edit's rename, can still be seen and kept.
type noteFile struct {
	f    *os.File
	info fs.FileInfo
	data []byte
}

// openForEdit opens and reads the note at abs. The open does not block (a
// FIFO named like a note would wait for a writer), and anything but a
// regular file of at most maxEditBytes is refused. A missing note is
// fs.ErrNotExist.
func openForEdit(abs string) (*noteFile, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, fs.ErrNotExist
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case st.IsDir():
		f.Close()
		return nil, fmt.Errorf("%w: it is a folder", ErrNotMarkdown)
	case !st.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%w: it is not a regular file (%s)", ErrNotMarkdown, st.Mode().Type())
	case st.Size() > maxEditBytes:
		f.Close()
		return nil, fmt.Errorf("%w: the note is %d bytes, over the %d-byte limit of an edit", ErrEdit, st.Size(), maxEditBytes)
	}
	n := &noteFile{f: f, info: st}
	if n.data, err = n.content(); err != nil {
		f.Close()
		return nil, err
	}
	return n, nil
}

// content reads the whole file again from its start, refusing one that
// grew past maxEditBytes.
func (n *noteFile) content() ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(n.f, 0, maxEditBytes+1), maxEditBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxEditBytes {
		return nil, fmt.Errorf("%w: the note grew over the %d-byte limit of an edit", ErrEdit, maxEditBytes)
	}
	return b, nil
}

func (n *noteFile) close() { _ = n.f.Close() }

// unchanged reports ErrConflict when the open file no longer holds what
// was read, or (abs not "") when abs no longer names it: another program
// wrote it or saved a new file in its place.
func (n *noteFile) unchanged(abs string) error {
	if abs != "" {
		st, err := os.Lstat(abs)
		if err != nil || !os.SameFile(st, n.info) {
			return fmt.Errorf("%w: the note was replaced while the edit was being written", ErrConflict)
		}
	}
	st, err := n.f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != int64(len(n.data)) || !st.ModTime().Equal(n.info.ModTime()) {
		return fmt.Errorf("%w: the note changed while the edit was being written", ErrConflict)
	}
	// File times may be coarser than two writes: compare the bytes too.
	now, err := n.content()
	if err != nil {
		return err
	}
	if !bytes.Equal(now, n.data) {
		return fmt.Errorf("%w: the note changed while the edit was being written", ErrConflict)
	}
	return nil
}

// readForEdit reads the note at abs (see openForEdit).
func readForEdit(abs string) ([]byte, fs.FileMode, error) {
	n, err := openForEdit(abs)
	if err != nil {
		return nil, 0, err
	}
	defer n.close()
	return n.data, n.info.Mode(), nil
}

// checkWritable refuses a note the person cannot write: one they lack the
// permission to write, or one made read-only (no write permission for
// anyone), which an edit respects even when run by a user the permission
// does not stop. Renaming a new file over it would otherwise replace it.
func checkWritable(abs string, info fs.FileInfo) error {
	if info.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%w: the note is read-only (mode %v); make it writable to let it be edited", fs.ErrPermission, info.Mode().Perm())
	}
	if err := canWrite(abs); err != nil {
		return fmt.Errorf("%w: you cannot write the note: %v", fs.ErrPermission, err)
	}
	return nil
}

// Test hooks (nil outside tests). beforeRename runs once the temporary file
// is written and synced, before the last check of the note: the window a
// crash must not turn into a damaged note. afterLastCheck runs between that
// check and the rename.
var beforeRename, afterLastCheck func(tmp string)

// tempPattern names the temporary files of edits: hidden (so neither the
// walker nor the watcher takes one for a note) and short whatever the
// note's name, which may itself be near the 255-byte limit of a name.
const tempPattern = ".vault-agent-*.tmp"

// writeTemp writes data to a new temporary file in dir, synced and given
// perm, and returns its path and what stat says of it.
func writeTemp(dir string, data []byte, perm fs.FileMode) (string, fs.FileInfo, error) {
	f, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return "", nil, err
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil {
		err = fsync(f)
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	var st fs.FileInfo
	if err == nil {
		st, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", nil, err
	}
	return tmp, st, nil
}

// createNew creates the note at abs with data, failing with fs.ErrExist if
// a file is there: a temporary file, synced, linked into place (a link,
// unlike a rename, never replaces), and the folder synced.
func createNew(abs string, data []byte) error {
	tmp, _, err := writeTemp(filepath.Dir(abs), data, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if beforeRename != nil {
		beforeRename(tmp)
	}
	if err := os.Link(tmp, abs); err != nil {
		return err
	}
	syncDir(filepath.Dir(abs))
	return nil
}

// replaceChecked replaces the note at abs with data, atomically, if its
// content still hashes to want: a temporary file in the note's folder,
// written, synced and given the note's mode, then, after a last check that
// the note is still the file read and holds the same bytes, swapped with
// it (renamed over it where names cannot be swapped). A write another
// program makes in the moment between that check and the swap lands in the
// replaced file; it is seen there afterwards, the names are swapped back
// (what was appended to the edit's file meanwhile is appended to the
// note), and the edit is refused as a conflict: nothing another program
// wrote is lost, but for a write begun before the swap and ended after the
// check that follows it.
func replaceChecked(abs, want string, data []byte) error {
	old, err := openToChange(abs, want)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: the note was deleted since it was read", ErrConflict)
	}
	if err != nil {
		return err
	}
	defer old.close()
	dir := filepath.Dir(abs)
	tmp, mine, err := writeTemp(dir, data, old.info.Mode().Perm())
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			_ = os.Remove(tmp)
		}
	}()
	if beforeRename != nil {
		beforeRename(tmp)
	}
	if err := old.unchanged(abs); err != nil {
		return err
	}
	if afterLastCheck != nil {
		afterLastCheck(tmp)
	}
	switch err := exchange(tmp, abs); {
	case err == nil:
		// abs holds the edit, tmp the note as it was, still linked.
		syncDir(dir)
		if err := old.unchanged(""); err != nil {
			renamed = true
			return swapBack(abs, tmp, data, old)
		}
		return nil // the deferred removal drops the note as it was
	case !errors.Is(err, errNoExchange):
		return err
	}
	if err := os.Rename(tmp, abs); err != nil {
		return err
	}
	renamed = true
	syncDir(dir)
	if err := old.unchanged(""); err != nil {
		return putBack(abs, mine, data, old)
	}
	return nil
}

// errNoExchange: the file system cannot swap two names atomically.
var errNoExchange = errors.New("no atomic exchange")

// refusedLate is the conflict of an edit withdrawn because another program
// wrote the note at the moment it was replaced.
const refusedLate = "the note changed while the edit was being written; the edit was withdrawn and the note kept as the other program wrote it"

// swapBack undoes an exchange that replaced a file another program was
// writing at that moment: the names are swapped back, so the note is
// again the file that program wrote (and writes) to, and what was
// appended to the edit's file while it was the note is appended to it.
func swapBack(abs, tmp string, data []byte, old *noteFile) error {
	defer os.Remove(tmp)
	if err := exchange(tmp, abs); err != nil {
		return putBack(abs, nil, data, old)
	}
	syncDir(filepath.Dir(abs))
	mine, err := os.ReadFile(tmp)
	if err == nil && len(mine) > len(data) && bytes.HasPrefix(mine, data) {
		f, ferr := os.OpenFile(abs, os.O_WRONLY|os.O_APPEND, 0)
		if ferr == nil {
			_, err = f.Write(mine[len(data):])
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		} else {
			err = ferr
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %s, but what was appended to the note meanwhile could not be kept: %v", ErrConflict, refusedLate, err)
	}
	return fmt.Errorf("%w: %s", ErrConflict, refusedLate)
}

// openToChange opens the note at abs to replace or remove it: it must
// still hash to want (else errChanged) and be writable.
func openToChange(abs, want string) (*noteFile, error) {
	old, err := openForEdit(abs)
	if err != nil {
		return nil, err
	}
	if Hash(old.data) != want {
		old.close()
		return nil, errChanged
	}
	if err := checkWritable(abs, old.info); err != nil {
		old.close()
		return nil, err
	}
	return old, nil
}

// errChanged is the conflict of a note whose content is not the one the
// edit was made from.
var errChanged = fmt.Errorf("%w: the note changed since it was read; read it again and propose the edit anew", ErrConflict)

// putBack undoes the rename of an edit that replaced a file another
// program was writing at that moment: the note gets the replaced file's
// content as that program left it (with whatever was appended meanwhile
// to the edit's own file), and the edit is reported as a conflict.
func putBack(abs string, mine fs.FileInfo, data []byte, old *noteFile) error {
	const refused = refusedLate
	theirs, err := old.content()
	if err != nil {
		return fmt.Errorf("%w: %s, but the other program's version could not be read back: %v", ErrConflict, refused, err)
	}
	cur, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("%w: %s, but the note could not be reopened: %v", ErrConflict, refused, err)
	}
	defer cur.Close()
	st, err := cur.Stat()
	if err != nil || (mine != nil && !os.SameFile(st, mine)) {
		// Replaced again by someone else: theirs stands.
		return fmt.Errorf("%w: the note changed while the edit was being written and was replaced since; the edit was withdrawn", ErrConflict)
	}
	now, err := io.ReadAll(io.LimitReader(cur, maxEditBytes+1))
	if err != nil || !bytes.HasPrefix(now, data) {
		return fmt.Errorf("%w: the note changed while the edit was being written, and again since; check it: the other program's version of it was %d bytes", ErrConflict, len(theirs))
	}
	restore := append(theirs, now[len(data):]...)
	tmp, _, err := writeTemp(filepath.Dir(abs), restore, old.info.Mode().Perm())
	if err != nil {
		return fmt.Errorf("%w: %s, but putting it back failed: %v", ErrConflict, refused, err)
	}
	if err := os.Rename(tmp, abs); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%w: %s, but putting it back failed: %v", ErrConflict, refused, err)
	}
	syncDir(filepath.Dir(abs))
	return fmt.Errorf("%w: %s", ErrConflict, refused)
}

// removeChecked deletes the note at abs (an undone creation) if its
// content still hashes to want. A write that reaches it at the moment of
// removal is kept: the note is put back with it.
func removeChecked(abs, want string) error {
	old, err := openToChange(abs, want)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // already gone: nothing to undo
	}
	if err != nil {
		return err
	}
	defer old.close()
	if err := old.unchanged(abs); err != nil {
		return err
	}
	if err := os.Remove(abs); err != nil {
		return err
	}
	syncDir(filepath.Dir(abs))
	if err := old.unchanged(""); err != nil {
		if theirs, rerr := old.content(); rerr == nil {
			_ = createNew(abs, theirs)
		}
		return fmt.Errorf("%w: the note changed while it was being removed; it was put back as the other program wrote it", ErrConflict)
	}
	return nil
}

// syncDir makes a rename, link or removal in dir durable.
func syncDir(dir string) {
	if !syncWrites {
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// syncWrites is false only in fuzz tests, which write thousands of notes
// and journals whose durability is not what they test.
var syncWrites = true

// fsync makes what was written to f durable.
func fsync(f *os.File) error {
	if !syncWrites {
		return nil
	}
	return f.Sync()
}
