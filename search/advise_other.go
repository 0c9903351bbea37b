//go:build !(linux || darwin || freebsd)

package search

// adviseRandom does nothing where the system has no madvise.
func adviseRandom([]byte) {}

// releasePages does nothing where the system has no madvise.
func releasePages([]byte) {}
