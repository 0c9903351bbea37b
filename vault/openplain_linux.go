//go:build linux

package vault

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openPlain opens the note at the clean vault-relative path c when no
// component of it is a symlink, in one openat2 call confined beneath the
// vault's root: RESOLVE_BENEATH refuses any step out of the root (even
// through a folder swapped for a symlink while the call runs) and
// RESOLVE_NO_SYMLINKS any symlink on the path, so a file opened this way is
// the note at c itself, inside the vault, with nothing to check. It returns
// nil when that cannot be done (a symlink on the path, a missing file, not
// a regular file, a kernel before 5.6): the caller then resolves the path
// with the full checks, one lstat per component. Reading every note of a
// vault, that was most of the time spent opening notes.
func openPlain(root, c string) *os.File {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, filepath.FromSlash(c), &unix.OpenHow{
		// Non-blocking so that a FIFO named like a note cannot hang the
		// open; regular files ignore the flag.
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, filepath.FromSlash(c)))
}
