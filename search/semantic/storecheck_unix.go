//go:build unix

package semantic

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the file f of size bytes read-only, for checkStoreFile.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func unmapFile(b []byte) { _ = unix.Munmap(b) }
