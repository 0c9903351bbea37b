//go:build unix

package search

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on path. The kernel drops
// the lock when the process dies, so a crash never leaves a stale lock.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := ""
			if pid := lockPID(path); pid > 0 {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
			return nil, fmt.Errorf("%w%s: another vault-agent is using this index; stop it or pass a different --index", ErrLocked, holder)
		}
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

func unlockDir(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	_ = f.Close()
}

// lockPID is the process id the lock file at path names (0: none).
func lockPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Locked reports whether a process holds the index at dir, and which one
// (the pid its lock file names; 0 when unknown), without taking the lock:
// the probe is a shared, non-blocking flock released at once. A process
// deciding whether to open the index or reach the one holding it asks
// this first; Open still decides, since the lock may change hands in
// between.
func Locked(dir string) (pid int, locked bool) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return lockPID(path), errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return 0, false
}
