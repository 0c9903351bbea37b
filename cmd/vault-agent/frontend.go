package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/vault-agent/vault-agent/internal/memtrim"
)

// idleRelease is how long a front-end must have been idle before it
// gives back the memory it holds without needing it.
const idleRelease = 2 * time.Second

// releaseWhenIdle runs for the life of a front-end that serves for hours
// (serve, acp, mcp): whenever it goes idle after work, it returns its free
// heap and drops its mappings of the executable's pages, which it faults
// back in when it works again (internal/memtrim).
func releaseWhenIdle(ctx context.Context, log *slog.Logger) {
	go memtrim.WhenIdle(ctx, idleRelease, func(r memtrim.Released, err error) {
		if err != nil {
			log.Debug("idle: executable pages kept", "reason", err)
			return
		}
		log.Debug("idle: memory released", "executable_kB", r.Bytes>>10)
	})
}
