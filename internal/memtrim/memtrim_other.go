//go:build !linux

package memtrim

import (
	"errors"
	"time"
)

// ReleaseCode is Linux-only; elsewhere it releases nothing.
func ReleaseCode() (Released, error) {
	return Released{}, errors.New("releasing the executable's pages is supported on Linux only")
}

// processCPU is not measured here: every interval counts as idle, so the
// heap is still returned once after start-up, and not again.
func processCPU() time.Duration { return 0 }
