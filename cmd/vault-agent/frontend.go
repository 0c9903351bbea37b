package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/vault-agent/vault-agent/internal/memtrim"
)

// A front-end reads its CPU time every idleTick; holding an index, it must
// have been idle for idleHold before it gives back the memory it holds
// without needing it; forwarding to the process that holds the index, it
// gives it back on its first idle tick (internal/memtrim.WhenIdle).
const (
	idleTick = 200 * time.Millisecond
	idleHold = 2 * time.Second
)

// releaseWhenIdle runs for the life of a front-end that serves for hours
// (serve, acp, mcp): whenever it goes idle after work, it returns its free
// heap and drops its mappings of the executable's pages (and, holding the
// index, of its segments), which it faults back in when it works again
// (internal/memtrim).
func releaseWhenIdle(ctx context.Context, log *slog.Logger) {
	go memtrim.WhenIdle(ctx, idleTick, idleHold, func(r memtrim.Released, err error) {
		if err != nil {
			log.Debug("idle: executable pages kept", "reason", err)
			return
		}
		log.Debug("idle: memory released", "executable_kB", r.Bytes>>10)
	})
}

// answerOut is a front-end's stdout: each message it writes tells
// memtrim that the process has answered (memtrim.Answered), so a process
// that forwards to the index's holder gives its memory back as soon as it
// falls quiet. Close leaves stdout open.
type answerOut struct{ w io.Writer }

func (a answerOut) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
	memtrim.Answered()
	return n, err
}

func (answerOut) Close() error { return nil }

// stdout is the front-ends' protocol output.
var stdout io.WriteCloser = answerOut{w: os.Stdout}
