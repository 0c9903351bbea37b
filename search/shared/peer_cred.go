//go:build linux || darwin

package shared

import (
	"fmt"
	"net"
	"os"
)

// checkPeer refuses a connection whose other end runs as another user.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("peer credentials: %w", err)
	}
	var uid int
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = peerUID(int(fd)) }); err != nil {
		return fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if uid != os.Getuid() {
		return fmt.Errorf("the process at the other end runs as uid %d, not as this user", uid)
	}
	return nil
}
