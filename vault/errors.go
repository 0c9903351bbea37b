package vault

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors of package vault. Errors returned by this package wrap
// them with the path involved; test with errors.Is.
var (
	// ErrUnsafePath reports a path that would leave the vault: absolute,
	// escaping with "..", containing a NUL byte, or crossing a symlink that
	// points outside the vault.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrNotFound reports a note or file that does not exist in the vault
	// (or is hidden from it by a dot-folder or an exclude pattern).
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous reports a note name that matches several notes; the
	// concrete error is an *AmbiguousError carrying the candidates.
	ErrAmbiguous = errors.New("ambiguous note name")
	// ErrNotMarkdown reports a path that is not a markdown (.md) file.
	ErrNotMarkdown = errors.New("not a markdown note")
	// ErrNotDir reports a vault root that is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrExists reports an edit creating a note where one exists.
	ErrExists = errors.New("the note already exists")
	// ErrConflict reports an edit of a note that changed since the edit
	// read it: the edit is refused, never merged.
	ErrConflict = errors.New("conflict")
	// ErrEdit reports an edit that cannot be made as asked: the text to
	// replace is not found (or found more than once), a heading is
	// missing, the edit changes nothing.
	ErrEdit = errors.New("cannot make the edit")
)

// AmbiguousError is returned by LookupIn and Vault.Lookup when a name
// matches more than one note. Candidates are vault-relative paths, sorted.
type AmbiguousError struct {
	Name       string
	Candidates []string
}

// Error implements error.
func (e *AmbiguousError) Error() string {
	return "note name " + strconv.Quote(e.Name) + " is ambiguous; candidates: " + strings.Join(e.Candidates, ", ")
}

// Is reports whether target is ErrAmbiguous, so errors.Is works on the
// concrete type.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }
