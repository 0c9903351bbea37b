//go:build unix && !linux && !darwin

package shared

import "net"

// checkPeer trusts the socket's private folder here: this system's way of
// asking a peer's credentials is not wired up.
func checkPeer(net.Conn) error { return nil }
