//go:build linux

package vault

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files at a and b atomically (renameat2 with
// RENAME_EXCHANGE), so the file an edit replaces keeps a name until the
// edit knows that nobody wrote to it meanwhile, and can be swapped back.
// errNoExchange: the file system cannot (then a plain rename is used).
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	return err
}
