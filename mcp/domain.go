package mcp

import (
	"context"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Vault is what the MCP server needs from the live index of one vault. It is
// defined here, where it is consumed; adapter.go implements it over today's
// packages. Every method may be called from any goroutine.
type Vault interface {
	// WaitReady returns once the index has been reconciled with the disk
	// (at once when it already has been), or with ctx's error. While it
	// waits it may report the reconcile's progress to progress, which may
	// be nil.
	WaitReady(ctx context.Context, progress func(done, total int)) error

	// Search runs a ranked query in the search package's query language,
	// ANDed with req's structured filters (tags, folders, time range).
	// Errors wrapping search.ErrBadQuery or search.ErrEmptyQuery are the
	// caller's to fix.
	Search(ctx context.Context, req search.Request) (*search.Results, error)

	// Note resolves what a person or a model typed (an exact path, a path
	// without ".md", a [[wikilink]], a basename in any case, a path tail)
	// to one note and returns it parsed: chunks, headings, links. A name
	// that would leave the vault gives an error wrapping
	// vault.ErrUnsafePath, an unknown one vault.ErrNotFound (with close
	// names), an ambiguous one a *vault.AmbiguousError.
	Note(ctx context.Context, name string) (*vault.Note, error)

	// Source returns the whole text of the note at the exact vault path,
	// frontmatter included, with the same errors as Note.
	Source(ctx context.Context, path string) (text string, modified time.Time, err error)

	// Notes returns the metadata of every indexed note, sorted by path.
	// The caller may keep the slice.
	Notes() []search.NoteMeta

	// Tags returns every tag with its number of notes, sorted by tag;
	// parents of nested tags count their children's notes.
	Tags() []search.TagCount

	// Subscribe returns a channel signalled, coalescing and without
	// blocking, after every change the index applies (a watcher batch, a
	// reconcile); the func unsubscribes.
	Subscribe() (<-chan struct{}, func())

	// TimeRange resolves a time expression ("yesterday", "last week",
	// "2026-03", "last 30 days") relative to now.
	TimeRange(expr string, now time.Time) (TimeRange, error)
}

// Agent runs vault-agent's agent on a question.
type Agent interface {
	// Ask runs the agent until it answers, gives up, or ctx ends (the run
	// then stops at its next phase boundary and Ask returns promptly).
	// onStep receives one short operational line per step ("Searching
	// notes for ...", "Read Sourdough Starter") from the run's goroutine;
	// it must not block for long. The error is for failures to start or
	// run at all; a run that ends early says so in Answer.StopReason.
	Ask(ctx context.Context, req AskRequest, onStep func(step string)) (*Answer, error)

	// Model describes the model runs use.
	Model() ModelInfo
}

// TimeRange is a resolved time expression: [Start, End], both inclusive.
type TimeRange struct {
	Start, End time.Time
	// Description is a human form such as "2026-03-09 to 2026-03-15".
	Description string
}

// AskRequest is one question for the agent.
type AskRequest struct {
	Question string
	// Mode is the agent loop: "" (the configured one), react, roa, par or
	// staged.
	Mode string
}

// Answer is how a run ended.
type Answer struct {
	Text string
	// StopReason is final_answer, max_iterations, timeout, stopped,
	// await_user_input or error.
	StopReason string
	Iterations int
	Elapsed    time.Duration
	// Error says what failed when StopReason is error.
	Error string
}

// ModelInfo describes the agent's model.
type ModelInfo struct {
	Name string
	// Offline is true for the built-in extractive model, which never
	// touches the network.
	Offline bool
}

// Stop reasons of Answer.StopReason that the server treats specially.
const (
	stopFinalAnswer = "final_answer"
	stopError       = "error"
)

// Agent loop modes offered by ask_vault.
var askModes = []string{"react", "roa", "par", "staged"}
