package shared

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/search/semantic"
	"github.com/vault-agent/vault-agent/vault"
)

// ErrNoEmbedder is the error of a semantic or hybrid search, or of
// Related, when the process holding the index has no embedding model.
var ErrNoEmbedder = errors.New("semantic search is off: no embedding model is configured (set embedModel, --embed-model)")

// ErrUnavailable is the error of a call made while no process serves the
// index: the holder is gone and no process has taken it over yet.
var ErrUnavailable = errors.New("the vault's index is not available")

// ErrNoAnswer is the error of a call that the process holding the index
// did not answer within the call's deadline: it is hung or overloaded.
var ErrNoAnswer = errors.New("the vault-agent process holding the index did not answer in time")

// ErrIncompatible is the error of opening an index whose holder speaks
// another version of the socket protocol, or serves another vault.
var ErrIncompatible = errors.New("the index is held by an incompatible vault-agent process")

// errConnLost marks a call whose connection to the holder closed before
// the answer: the holder exited or died.
var errConnLost = errors.New("the connection to the process holding the index closed")

// codeIndexError is the JSON-RPC error code of an operation that failed
// on the holder; its data names the sentinels the error matched.
const codeIndexError = -32001

// sentinels are the errors that callers test with errors.Is and that
// therefore survive the trip from the holder: each by a stable name.
var sentinels = []struct {
	name string
	err  error
}{
	{"notFound", vault.ErrNotFound},
	{"unsafePath", vault.ErrUnsafePath},
	{"ambiguous", vault.ErrAmbiguous},
	{"notMarkdown", vault.ErrNotMarkdown},
	{"notDir", vault.ErrNotDir},
	{"emptyQuery", search.ErrEmptyQuery},
	{"badQuery", search.ErrBadQuery},
	{"queryTooLarge", search.ErrQueryTooLarge},
	{"chunkRange", search.ErrChunkRange},
	{"closed", search.ErrClosed},
	{"noEmbedder", ErrNoEmbedder},
	{"badMode", semantic.ErrMode},
	{"notEmbedded", semantic.ErrNotEmbedded},
	{"canceled", context.Canceled},
	{"deadline", context.DeadlineExceeded},
}

// wireError is the data of a codeIndexError.
type wireError struct {
	Is []string `json:"is,omitempty"`
	// Ambiguous carries a *vault.AmbiguousError whole, for errors.As.
	Ambiguous *vault.AmbiguousError `json:"ambiguous,omitempty"`
	// Query carries a *search.QueryError whole.
	Query *search.QueryError `json:"query,omitempty"`
}

// toWire is err as the holder answers it.
func toWire(err error) *jsonrpc2.Error {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	var data wireError
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			data.Is = append(data.Is, s.name)
		}
	}
	errors.As(err, &data.Ambiguous)
	errors.As(err, &data.Query)
	e := &jsonrpc2.Error{Code: codeIndexError, Message: err.Error()}
	e.SetError(data)
	return e
}

// remoteError is an error of the holder as a follower sees it: the same
// text, matching (errors.Is) the same sentinels.
type remoteError struct {
	msg string
	is  []error
	// as are the typed errors it carries, for errors.As.
	as []error
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Is(target error) bool { return slices.Contains(e.is, target) }

// Unwrap gives errors.As the typed errors it carries.
func (e *remoteError) Unwrap() []error { return e.as }

// fromWire is the error a follower returns for a codeIndexError.
func fromWire(je *jsonrpc2.Error) error {
	if je.Code != codeIndexError {
		return je
	}
	e := &remoteError{msg: je.Message}
	var data wireError
	if je.Data != nil && json.Unmarshal(*je.Data, &data) == nil {
		for _, name := range data.Is {
			for _, s := range sentinels {
				if s.name == name {
					e.is = append(e.is, s.err)
				}
			}
		}
		if data.Ambiguous != nil {
			e.as = append(e.as, data.Ambiguous)
		}
		if data.Query != nil {
			e.as = append(e.as, data.Query)
		}
	}
	return e
}
