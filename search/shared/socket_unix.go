//go:build unix

package shared

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

const socketsSupported = true

var errNoSockets = errors.New("sharing the index needs Unix sockets")

// maxSocketPath is the longest socket path every Unix takes (sun_path is
// 108 bytes on Linux, 104 on macOS and the BSDs, NUL included).
const maxSocketPath = 103

// listenSocket listens on path, a socket only this user may use: in a
// folder of this user's that no one else may enter (0700), itself 0600. A
// socket left by a holder that died is removed first: the caller holds the
// index's lock, so no live process serves there.
func listenSocket(path string) (net.Listener, error) {
	if err := privateFolder(filepath.Dir(path), true); err != nil {
		return nil, err
	}
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is longer than %d bytes", path, maxSocketPath)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}

// dialSocket connects to path, refusing a folder someone else could have
// put it in.
func dialSocket(ctx context.Context, path string) (net.Conn, error) {
	if err := privateFolder(filepath.Dir(path), false); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if err := checkPeer(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// privateFolder checks that dir is a folder of this user that no one else
// can enter, creating it (0700) when create is set.
func privateFolder(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("socket folder: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket folder: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("socket folder %s is not a folder", dir)
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("socket folder %s belongs to another user (uid %d)", dir, st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("socket folder %s is open to other users (mode %#o); it must be 0700", dir, fi.Mode().Perm())
	}
	return nil
}
