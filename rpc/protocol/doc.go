// Package protocol is the wire of vault-agent's JSON-RPC protocol between a
// plugin host and `vault-agent serve`: every method and notification, the
// types of their params and results, the error codes, and the settings as
// hosts write them. PROTOCOL.md is generated from this package (go generate
// ./rpc/protocol).
//
// The types here are the protocol's, not the domain's: renaming a field of
// a search result or an event payload in the packages below never changes
// what a host reads. Package rpc maps between the two.
//
// Methods is the one table of the protocol: it documents each method, says
// whether it runs concurrently, and dispatches it to its handler on a
// Server. Client is the typed sender of the sidecar's notifications.
//
// The package imports nothing of this module.
package protocol
