package acp

import (
	"context"
	"errors"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
)

// Backend is what the ACP front-end needs from the rest of the program: a
// vault, its index, watcher and agent, opened by folder. Each session's cwd
// names its vault; sessions on the same folder share one opened vault.
type Backend interface {
	// Open returns the vault whose root is the absolute folder root,
	// opening, indexing and watching it on first use. Later calls for the
	// same folder return the same Vault. It fails with ErrNotAVault when
	// root is not a usable folder and ErrVaultBusy when its index is held
	// by another process or already given to another vault.
	Open(ctx context.Context, root string) (Vault, error)
	// Close stops every watcher and closes every index. Runs must have
	// ended first.
	Close() error
}

// Vault is one opened vault and the agent that runs over it. It is safe for
// concurrent use: several runs may go on at once.
type Vault interface {
	// Root is the vault's absolute folder.
	Root() string
	// Run runs the agent once. Events reach sink in order, from the run's
	// goroutine, until Run returns with the run's result. Cancelling ctx
	// stops the run: it then ends with StopReason "stopped". An error means
	// the run could not start; a run that failed has StopReason "error".
	Run(ctx context.Context, req RunRequest, sink agent.Sink) (*agent.Result, error)
	// ReadNote reads the note that name (a vault-relative path, a title or
	// a [[wikilink]]) designates, resolved safely inside the vault, with
	// its text capped at maxBytes.
	ReadNote(ctx context.Context, name string, maxBytes int) (*Note, error)
}

// RunRequest is one agent run of a session's prompt turn.
type RunRequest struct {
	RunID     string
	SessionID string
	// Message is the person's words for this turn.
	Message string
	// History is the conversation before Message: earlier turns, then the
	// notes the person attached to this one.
	History  []llm.Message
	Settings Settings
}

// Settings are a session's run settings: the session mode and the session
// config options (or _meta settings) a client chose.
type Settings struct {
	// Mode is the agent loop: react, roa, par or staged.
	Mode string
	// Planner turns on the write_todos planner (enableAgentPlannerV0).
	Planner bool
	// MaxIterations bounds the run (1..50); reaching it ends the turn with
	// stop reason max_turn_requests.
	MaxIterations int
	// Timeout bounds the whole run; zero takes the agent's default.
	Timeout time.Duration
}

// Note is a note read for an @-mention.
type Note struct {
	// Path is the vault-relative slash path.
	Path  string
	Title string
	// Text is the note's body, capped; Truncated says whether it was cut.
	Text      string
	Truncated bool
}

// Errors a Backend returns; the server maps them onto JSON-RPC errors.
var (
	// ErrNotAVault marks a session cwd that cannot be opened as a vault.
	ErrNotAVault = errors.New("not a vault folder")
	// ErrVaultBusy marks a vault whose index another process holds, or an
	// --index folder already used by another vault.
	ErrVaultBusy = errors.New("vault index busy")
)
