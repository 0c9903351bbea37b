package mcp

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// ErrNotLoopback is returned by CheckListenAddr for an address other
// machines could reach, and by ServeHTTP for such a listener without a
// token.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckListenAddr checks an HTTP listen address (host:port). Unless
// allowRemote is set the host must be a loopback address (127.0.0.1, ::1)
// or localhost: an empty host or 0.0.0.0 would serve the whole network,
// which needs --allow-remote and a bearer token.
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
	return fmt.Errorf("%q listens on %s, %w; it would expose the vault to the network: use 127.0.0.1:%s, "+
		"or pass --allow-remote if you mean it (clients then need a bearer token: one is made and printed, or give --token-file)", addr, host, ErrNotLoopback, port)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// minTokenLen is the shortest token ReadTokenFile accepts: a token is a
// password that every request presents, and a short one can be guessed.
const minTokenLen = 16

// NewToken returns a random bearer token (256 bits, URL-safe base64).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ReadTokenFile reads a bearer token from the file at path: its content,
// blanks around it trimmed, of at least 16 characters and one line.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case len(tok) < minTokenLen:
		return "", fmt.Errorf("the token in %s is %d characters; use at least %d (e.g. openssl rand -base64 32 > %s)", path, len(tok), minTokenLen, path)
	case strings.ContainsAny(tok, "\r\n \t"):
		return "", fmt.Errorf("the token in %s holds blanks or several lines; put the token alone in the file", path)
	}
	return tok, nil
}
