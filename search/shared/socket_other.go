//go:build !unix

package shared

import (
	"context"
	"errors"
	"net"
)

// Without Unix sockets nothing is shared: a second process on an index is
// refused it (search.ErrLocked), as before sharing existed.
const socketsSupported = false

var errNoSockets = errors.New("sharing the index needs Unix sockets, which this platform lacks here")

func listenSocket(string) (net.Listener, error) { return nil, errNoSockets }

func dialSocket(context.Context, string) (net.Conn, error) { return nil, errNoSockets }

func checkPeer(net.Conn) error { return nil }
