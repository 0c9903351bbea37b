//go:build unix

package vault

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockWait bounds the wait for another process's hold on the journal (an
// undo or a compaction takes it for at most seconds).
const lockWait = 30 * time.Second

// lockFile takes an exclusive flock on the file at path, waiting for
// another process to release it for up to lockWait. The kernel drops the
// lock when the process dies, so a crash never leaves a stale one.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w (another vault-agent process holds the edit journal)", path, err)
		}
		// A flock cannot be waited on with a deadline: poll.
		t := time.NewTimer(20 * time.Millisecond)
		<-t.C
	}
}
