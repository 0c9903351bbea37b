package mcp

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrNotLoopback is returned by CheckListenAddr for an address other
// machines could reach.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckListenAddr checks an HTTP listen address (host:port). The server
// has no authentication, so unless allowRemote is set the host must be a
// loopback address (127.0.0.1, ::1) or localhost: an empty host or 0.0.0.0
// would serve the whole network.
func CheckListenAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port, e.g. 127.0.0.1:8765: %v", addr, err)
	}
	if port == "" {
		return fmt.Errorf("%q has no port, e.g. 127.0.0.1:8765", addr)
	}
	if allowRemote || isLoopback(host) {
		return nil
	}
	if host == "" {
		host = "all interfaces"
	}
	return fmt.Errorf("%q listens on %s, %w; the server has no authentication and would expose the vault to "+
		"the network: use 127.0.0.1:%s, or pass --allow-remote if you mean it (and protect it yourself)", addr, host, ErrNotLoopback, port)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
