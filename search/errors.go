package search

import (
	"errors"
	"fmt"
)

// ErrLocked is returned by Open when another process holds the index.
var ErrLocked = errors.New("index is locked by another process")

// ErrIndexInVault is returned by Open for an index folder inside the vault,
// which must stay read-only.
var ErrIndexInVault = errors.New("index must be outside the vault")

// ErrEmptyQuery is returned by Search and ParseQuery for a query with no
// terms and no filters.
var ErrEmptyQuery = errors.New("empty query")

// ErrBadQuery is matched (errors.Is) by every *QueryError.
var ErrBadQuery = errors.New("bad query")

// ErrChunkRange is wrapped by ReadChunk's error for a chunk index the note
// does not have; the message says which ones it has.
var ErrChunkRange = errors.New("bad argument")

// ErrClosed is returned by operations on a closed Index.
var ErrClosed = errors.New("index is closed")

// QueryError is a syntax error in a query string.
type QueryError struct {
	// Pos is the 1-based column (in characters) where the problem is.
	Pos int
	Msg string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("bad query at column %d: %s", e.Pos, e.Msg)
}

// Is makes errors.Is(err, ErrBadQuery) true for query syntax errors.
func (e *QueryError) Is(target error) bool { return target == ErrBadQuery }
