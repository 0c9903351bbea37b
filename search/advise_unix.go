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
