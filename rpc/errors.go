package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/rpc/protocol"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// ErrExitWithoutShutdown is returned by Serve when the host sent exit
// without shutdown first; the command maps it to exit status 1.
var ErrExitWithoutShutdown = errors.New("rpc: exit without shutdown")

var (
	errNotInitialized = errors.New("server not initialized")
	errShutDown       = errors.New("server is shut down")
)

// fieldError is an invalid-params error about one field of the params.
func fieldError(field, format string, args ...any) *protocol.FieldError {
	return &protocol.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// invalidParams returns a -32602 error.
func invalidParams(format string, args ...any) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// toRPCError converts a handler error to the wire error. It is the one place
// where Go errors become codes.
func toRPCError(method string, err error) *jsonrpc2.Error {
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	var fe *protocol.FieldError
	if errors.As(err, &fe) {
		return invalidParams("invalid params for %s: %s", method, fe.Error())
	}
	var se *service.SettingError
	if errors.As(err, &se) {
		return invalidParams("invalid params for %s: %s", method, (&protocol.FieldError{Field: "settings." + se.Key, Msg: se.Msg}).Error())
	}
	var amb *vault.AmbiguousError
	if errors.As(err, &amb) {
		e := invalidParams("%s: %q matches %d notes; pass one of their paths", method, amb.Name, len(amb.Candidates))
		e.SetError(map[string]any{"candidates": amb.Candidates})
		return e
	}
	switch {
	case errors.Is(err, errNotInitialized):
		return &jsonrpc2.Error{Code: protocol.CodeServerNotInitialized, Message: err.Error()}
	case errors.Is(err, errShutDown):
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: err.Error()}
	case errors.Is(err, vault.ErrUnsafePath),
		errors.Is(err, vault.ErrNotFound),
		errors.Is(err, vault.ErrAmbiguous),
		errors.Is(err, vault.ErrNotMarkdown),
		errors.Is(err, vault.ErrNotDir),
		errors.Is(err, search.ErrEmptyQuery),
		errors.Is(err, search.ErrBadQuery),
		errors.Is(err, search.ErrChunkRange),
		errors.Is(err, service.ErrNoEmbedder),
		errors.Is(err, semantic.ErrMode),
		errors.Is(err, semantic.ErrNotEmbedded),
		errors.Is(err, agent.ErrBadArgument),
		errors.Is(err, agent.ErrDuplicateRun),
		errors.Is(err, agent.ErrNotWaiting):
		return invalidParams("%s: %s", method, err.Error())
	case errors.Is(err, context.Canceled):
		return &jsonrpc2.Error{Code: protocol.CodeRequestCancelled, Message: method + ": request cancelled"}
	case errors.Is(err, context.DeadlineExceeded):
		return &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: method + ": timed out"}
	}
	return &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: fmt.Sprintf("%s: internal error: %v", method, err)}
}

// cancelledError is the reply to a request cancelled by the host. result,
// when set, is carried as the error's data (agent/run's partial result).
func cancelledError(method string, result any) *jsonrpc2.Error {
	e := &jsonrpc2.Error{Code: protocol.CodeRequestCancelled, Message: method + ": request cancelled"}
	if result != nil && !isNilPointer(result) {
		if b, err := json.Marshal(result); err == nil {
			raw := json.RawMessage(b)
			e.Data = &raw
		}
	}
	return e
}

func methodNotFound(method string) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound,
		Message: fmt.Sprintf("method %q not found; valid methods: %s", truncate.Runes(method, 80), strings.Join(protocol.MethodNames(), ", "))}
}
