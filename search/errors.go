package search

import (
	"errors"
	"fmt"
	"strings"
	"time"
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

// Limits on one query string: a longer query, or one of more words, is
// refused with a *QueryLimitError. They bound the memory a search takes
// (each word costs the analysis, lookups and scoring state of a term);
// a question or a pasted sentence fits well within them.
const (
	MaxQueryBytes = 4096
	MaxQueryTerms = 64
)

// ErrQueryTooLarge is matched (errors.Is) by every *QueryLimitError.
var ErrQueryTooLarge = errors.New("query too large")

// QueryLimitError is a query over MaxQueryBytes or MaxQueryTerms. It is
// also a bad query (errors.Is(err, ErrBadQuery)): the front-ends answer it
// as an invalid argument.
type QueryLimitError struct {
	Bytes, Terms int
}

func (e *QueryLimitError) Error() string {
	if e.Bytes > MaxQueryBytes {
		return fmt.Sprintf("query too large: %d bytes, at most %d (and %d words); search for fewer, more telling words", e.Bytes, MaxQueryBytes, MaxQueryTerms)
	}
	return fmt.Sprintf("query too large: %d words, at most %d (and %d bytes); search for fewer, more telling words", e.Terms, MaxQueryTerms, MaxQueryBytes)
}

// Is makes errors.Is true for ErrQueryTooLarge and ErrBadQuery.
func (e *QueryLimitError) Is(target error) bool {
	return target == ErrQueryTooLarge || target == ErrBadQuery
}

// CheckQuerySize returns a *QueryLimitError for a query over the limits
// (MaxQueryBytes, MaxQueryTerms: words are what whitespace separates, OR
// aside), else nil. Search and ParseQuery call it first.
func CheckQuerySize(q string) error {
	if len(q) > MaxQueryBytes {
		return &QueryLimitError{Bytes: len(q)}
	}
	terms := 0
	for _, w := range strings.Fields(q) {
		if w != "OR" {
			terms++
		}
	}
	if terms > MaxQueryTerms {
		return &QueryLimitError{Bytes: len(q), Terms: terms}
	}
	return nil
}

// QuerySlowError is a query whose operator (line:, a /regex/...) had to
// check more notes than it could in its time: the front-ends answer it as
// a bad query, since narrowing it is the way out. It matches ErrBadQuery.
type QuerySlowError struct {
	Op    string
	Limit time.Duration
}

func (e *QuerySlowError) Error() string {
	return fmt.Sprintf("%s checked notes for longer than %s and was stopped; narrow it with words inside it, or with path:, tag: or file:",
		truncateQuery(e.Op), e.Limit)
}

// Is makes errors.Is(err, ErrBadQuery) true.
func (e *QuerySlowError) Is(target error) bool { return target == ErrBadQuery }
