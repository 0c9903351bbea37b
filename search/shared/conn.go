package shared

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// writeTimeout bounds one write to a connection: a process that stops
// reading (stopped, hung) is dropped instead of blocking the other end.
const writeTimeout = 30 * time.Second

// writeDeadline gives every write on c a deadline.
func writeDeadline(c net.Conn) net.Conn { return deadlineConn{c} }

type deadlineConn struct{ net.Conn }

func (c deadlineConn) Write(p []byte) (int, error) {
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.Conn.Write(p)
}

// rpcLogger takes jsonrpc2's own messages (a connection reset by a process
// that died) into the index's log, at debug level: what they tell is
// handled and logged where it matters.
type rpcLogger struct{ log *slog.Logger }

func (l rpcLogger) Printf(format string, v ...any) {
	l.log.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
