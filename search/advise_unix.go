//go:build linux || darwin || freebsd

package search

import "golang.org/x/sys/unix"

// adviseRandom advises the mapping b as read at random. It is only
// advice: a failure changes nothing but the read-ahead.
func adviseRandom(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_RANDOM)
	}
}

// releasePages drops the process's mapping of the pages of b, a read-only
// mapping of a file: the pages stay in the page cache, and a later read
// maps them again. It is only advice: a failure leaves them mapped.
func releasePages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
