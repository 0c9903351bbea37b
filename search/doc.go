// Package search is the full-text index of a vault: a bleve (scorch, BM25)
// index with one document per note, kept in step with the disk.
//
// Indexing. Each note becomes one document with weighted fields: title and
// aliases (boost 5), headings (3), tags (2, plus a keyword field holding
// every tag and its parents for tag filters), the path (1.5, plus a
// lower-cased keyword for folder prefixes and the basename for file:) and
// the body (1). Text goes through one analyzer: unicode tokenizer, English
// possessives, lower case, diacritic folding ("café" finds "cafe",
// "Müller" finds "muller"), English stop words, Porter stemming. Notes with
// Chinese, Japanese or Korean text also get bigram fields (bleve's cjk
// analyzer) that CJK queries run against. Nothing is stored in the index;
// titles, tags and mtimes come from the metadata cache.
//
// Persistence. The index lives in the folder it is given, outside the
// vault (the service package picks one per vault under the user cache
// dir), or in memory for tests. Alongside the documents it keeps a state
// record (path, mtime, size, content hash, title, aliases, tags of every
// note) written in the same bleve batch as the documents, so both always
// agree. Sync compares the disk with that record: only notes whose mtime
// or size changed are read, and only those whose hash changed are
// reindexed. A schema stamp
// (schemaVersion plus a hash of the mapping), the vault path, the state
// record and a probe search are checked at Open; any mismatch or damage
// makes the next Sync rebuild from the vault, logging why. A lock file
// (flock) in the index directory makes a second process fail at once with
// ErrLocked.
//
// Bulk indexing parses notes with a pool of GOMAXPROCS workers, maps them
// to bleve documents on the single writer goroutine and writes batches of
// Options.BatchSize (500) notes. Scorch runs with unsafe_batch: a batch is
// searchable when Batch returns and persisted in the background while the
// next one is analysed; each Sync waits for its last batch to be persisted
// before returning.
//
// Phrase queries need term positions, so the title, headings and body
// fields keep term vectors (bleve's phrase searcher reads them); the other
// fields do not.
//
// Searching: see query.go for the query language and compile.go for how it
// maps onto bleve queries and ranking. In short: free terms are BM25-ranked
// over the weighted fields and all of them must match when there are one
// or two, half of them (rounded up) when there are more; stop words are
// ignored; "phrases" must match; tag:, path:, file: and the Request filters
// do not score; a search with only filters lists notes newest first; a
// search that matches nothing is retried with fuzziness 1 (2 for terms of
// 7+ characters) on terms of 4+ characters and sets Results.Fuzzy.
// Request.Tags and Request.Folders match any of their values. file: and
// path: are resolved against the in-memory path list (faster than term
// expansion in bleve). Snippets come from the chunk of the note with the
// most distinct query-term matches, about 200 characters around the
// densest run of matches, each wrapped in "**".
//
// Reading: ReadChunk returns one chunk of a note named the way a person or a
// model would (path, title, [[wikilink]], basename), with the note's
// outline; the agent's readNote and the hosts' vault/readNote both use it.
// ParseTimeRange turns "last week" or "2026-03" into a range for From/To.
// ReadNote and Lookup resolve such a name to the whole parsed note, or to
// its path.
//
// Links (linkgraph.go): the index keeps the outgoing links of the notes it
// parses (from the start with Options.Links, else from the first
// question), so Backlinks (the notes linking to one, resolved as Obsidian
// resolves links) costs a walk of memory, not a read of the vault; the
// notes whose links it lacks (an index reopened without parsing them) are
// read once, at the first question. Changes (changes.go): SubscribeChanges tells
// a subscriber which notes each applied change added, updated or removed.
//
// The package never writes into the vault and reads notes only through
// vault.Vault, which resolves every path inside the vault.
package search
