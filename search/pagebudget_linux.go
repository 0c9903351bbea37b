package search

import (
	"bytes"
	"os"
	"strconv"
	"sync"
)

// statm is /proc/self/statm, kept open: the kernel keeps its counts as
// they go, so reading it costs a system call, not a walk of the mappings
// (as smaps does).
var statm struct {
	once sync.Once
	mu   sync.Mutex
	f    *os.File
	buf  [128]byte
}

// fileResident returns the process's file-backed resident bytes: the
// "shared" pages of /proc/self/statm (files mapped, and shared memory,
// which Go does not use).
func fileResident() (int64, bool) {
	statm.once.Do(func() {
		statm.f, _ = os.Open("/proc/self/statm")
	})
	if statm.f == nil {
		return 0, false
	}
	statm.mu.Lock()
	defer statm.mu.Unlock()
	n, err := statm.f.ReadAt(statm.buf[:], 0)
	if n == 0 && err != nil {
		return 0, false
	}
	// size resident shared text lib data dt, in pages.
	f := bytes.Fields(statm.buf[:n])
	if len(f) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
