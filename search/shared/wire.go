package shared

import (
	"time"

	"github.com/vault-agent/vault-agent/search"
)

// protocolVersion is the version of the socket protocol: a process refuses
// a holder that speaks another (an older or newer vault-agent).
const protocolVersion = 1

// Methods of the socket besides the ops: the first request of every
// connection, and the holder's notifications.
const (
	methodHello    = "index/hello"
	methodProgress = "index/progress"
	methodChanged  = "index/changed"
)

// helloParams introduce a connecting process.
type helloParams struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version,omitempty"`
	PID      int    `json:"pid"`
	FrontEnd string `json:"frontEnd,omitempty"`
	// Vault is the vault folder the process opened.
	Vault string `json:"vault"`
	// Inspect marks a look at the holder (`vault-agent status`), which
	// neither counts as a client nor hears of changes.
	Inspect bool `json:"inspect,omitempty"`
}

// helloResult introduces the holder.
type helloResult struct {
	Protocol   int    `json:"protocol"`
	Version    string `json:"version,omitempty"`
	PID        int    `json:"pid"`
	FrontEnd   string `json:"frontEnd,omitempty"`
	Vault      string `json:"vault"`
	Created    bool   `json:"created,omitempty"`
	EmbedModel string `json:"embedModel,omitempty"`
}

// callMeta is the meta of a request that wants progress: the token its
// progress notifications carry.
type callMeta struct {
	Token int64 `json:"token"`
}

// progressParams are one progress notification of a long operation; the
// holder also sends the last one again every second, as a heartbeat.
type progressParams struct {
	Token int64  `json:"token"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Phase string `json:"phase,omitempty"`
}

// changedParams tell a connected process which notes the index added,
// updated or removed.
type changedParams struct {
	Changes []change `json:"changes"`
}

type change struct {
	Path string            `json:"path"`
	Kind search.ChangeKind `json:"kind"`
}

// Status describes the process holding an index, for `vault-agent status`.
type Status struct {
	PID      int       `json:"pid"`
	FrontEnd string    `json:"frontEnd,omitempty"`
	Version  string    `json:"version,omitempty"`
	Since    time.Time `json:"since"`
	// Clients counts the other processes connected to it.
	Clients int    `json:"clients"`
	Vault   string `json:"vault"`
	Index   string `json:"index"`
	// Ready is false while the holder's first sync runs.
	Ready         bool      `json:"ready"`
	Notes         int       `json:"notes"`
	Indexing      bool      `json:"indexing"`
	Watching      bool      `json:"watching"`
	LastIndexedAt time.Time `json:"lastIndexedAt,omitzero"`
	// IndexBytes is the size of the index folder on disk, VectorsBytes
	// that of the vectors' file.
	IndexBytes   int64  `json:"indexBytes"`
	VectorsBytes int64  `json:"vectorsBytes,omitempty"`
	EmbedModel   string `json:"embedModel,omitempty"`
}

// searchReply is index/search's result: the results with how the query's
// words matched, which search.Results keeps off its JSON (the protocols'
// results do not carry it) but hybrid fusion and the offline model read.
type searchReply struct {
	*search.Results
	Match search.Match `json:"match"`
}
