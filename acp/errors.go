package acp

import (
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// JSON-RPC and ACP error codes the server answers with.
const (
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternal         = -32603
	codeResourceNotFound = -32002
)

// rpcError returns a JSON-RPC error whose message is the whole sentence a
// person reads in the client.
func rpcError(code int, format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidParams(format string, args ...any) *sdk.RequestError {
	return rpcError(codeInvalidParams, format, args...)
}

func unknownSession(method string, id sdk.SessionId) *sdk.RequestError {
	return rpcError(codeResourceNotFound, "%s: unknown session %q; create one with session/new", method, id)
}

// toRequestError maps an error from the backend or the agent onto a
// JSON-RPC error, once, at the boundary.
func toRequestError(method string, err error) *sdk.RequestError {
	var re *sdk.RequestError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, ErrNotAVault):
		return invalidParams("%s: cwd cannot be opened as a vault: %v", method, err)
	case errors.Is(err, ErrVaultBusy):
		return rpcError(codeInternal, "%s: %v", method, err)
	}
	return rpcError(codeInternal, "%s: %v", method, err)
}
