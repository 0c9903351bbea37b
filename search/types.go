package search

import "time"

// Request is one search. Query uses our query language (see query.go);
// the structured filters are ANDed with it.
type Request struct {
	Query string `json:"query"`
	// Limit defaults to 10 and is capped at 100.
	Limit   int      `json:"limit,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Folders []string `json:"folders,omitempty"`
	// Excludes leave out the notes whose paths match these glob patterns
	// (vault.Options.Excludes syntax: "Archive/**", "drafts/"). They filter
	// this search only; the index keeps every note.
	Excludes []string `json:"excludes,omitempty"`
	// From and To bound the note mtime; zero means open.
	From time.Time `json:"-"`
	To   time.Time `json:"-"`
	// Mode is lexical, semantic or hybrid ("": the default of whoever
	// answers). The index answers lexically whatever the mode; a semantic
	// search (the semantic package) reads it.
	Mode string `json:"mode,omitempty"`
	// NoSnippets leaves the results without snippets; Index.AddSnippets
	// adds them to those the caller keeps (hybrid search fuses 30 lexical
	// results and keeps 10: a snippet costs more than the ranking).
	NoSnippets bool `json:"-"`
}

// Result is one matching note. Its JSON is what the agent's localSearch
// tool gives the model; hosts get the wire form of rpc/protocol.
type Result struct {
	Path  string  `json:"path"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// Snippet is text from the best matching chunk with matches wrapped in
	// "**" (markdown bold).
	Snippet    string   `json:"snippet"`
	Heading    string   `json:"heading,omitempty"`
	ChunkIndex int      `json:"chunkIndex"`
	Tags       []string `json:"tags,omitempty"`
	// MTime is the note's modification time in epoch milliseconds.
	MTime int64 `json:"mtime"`
	// Date is the note's own date in epoch milliseconds (frontmatter date
	// or created, or a date its file name starts with), absent when none.
	Date int64 `json:"date,omitempty"`
	// Matches are the lines where the query's line:, block:, section:
	// and task operators matched, in line order (at most 10).
	Matches []LineMatch `json:"matches,omitempty"`
}

// Results is a page of results.
type Results struct {
	Results []Result `json:"results"`
	// Total counts all matching notes, not just this page.
	Total  int     `json:"total"`
	TookMs float64 `json:"tookMs"`
	// Fuzzy is true when a word of the query is in no note and its likely
	// spellings were searched for instead (a typo corrected).
	Fuzzy bool `json:"fuzzy,omitempty"`
	// Partial is true when no note holds half of the free terms (rounded
	// up): the results match only some of them.
	Partial bool `json:"partial,omitempty"`
	// Match says how well the query's words matched, for a caller that
	// weighs this ranking against another (hybrid search).
	Match Match `json:"-"`
	// terms are the query's terms, for AddSnippets.
	terms []snipTerm
}

// Match describes how the free words of a query matched the notes.
type Match struct {
	// Words counts the content words searched for (filler left out).
	Words int
	// Held is the largest share of the query's words, each weighted by its
	// rarity (IDF), that one note holds: 1 when a note holds them all,
	// small when the vault barely has the query's words (a word no note
	// holds, even misspelt, counts as missing from every note).
	Held float64
	// Exact counts the results whose title or alias is exactly the query;
	// they come first.
	Exact int
	// Terms are the words searched for, each with its weight in the
	// vault, in query order: what tells a note that answers from one
	// that shares a common word, for a caller that judges passages
	// itself (the offline model sees only the notes found, too few to
	// know which words are rare).
	Terms []TermWeight
}

// TermWeight is one word of a query and how rare it is in the vault.
type TermWeight struct {
	// Word is the word as typed, lower-cased.
	Word string `json:"word"`
	// IDF is BM25's inverse document frequency of the word over the
	// vault's notes (of its likely spelling, for a misspelt word): about
	// 0 for a word nearly every note has, 5 or more for one a handful of
	// notes have.
	IDF float64 `json:"idf"`
	// Filler marks a word of questions that says nothing about which
	// note is meant ("way", "want", "need"): it weighs a fraction of a
	// content word.
	Filler bool `json:"filler,omitempty"`
	// Missing marks a word no note holds, even misspelt.
	Missing bool `json:"missing,omitempty"`
}

// Status describes the index for vault/status.
type Status struct {
	Notes         int       `json:"notes"`
	Indexing      bool      `json:"indexing"`
	Watching      bool      `json:"watching"`
	LastIndexedAt time.Time `json:"lastIndexedAt"`
}

// SyncStats reports what a reconcile or rebuild did.
type SyncStats struct {
	Added     int           `json:"added"`
	Updated   int           `json:"updated"`
	Removed   int           `json:"removed"`
	Unchanged int           `json:"unchanged"`
	Failed    int           `json:"failed"`
	Took      time.Duration `json:"-"`
	// Rebuilt is true when the whole index was rebuilt; Reason says why.
	Rebuilt bool   `json:"rebuilt,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// ProgressFunc receives indexing progress; it is called from the indexing
// goroutine and must not block.
type ProgressFunc func(done, total int)

// TagCount is one tag with the number of notes carrying it.
type TagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}
