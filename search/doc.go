// Package search is the full-text index of a vault: a bleve (scorch, BM25)
// index with one document per note, kept in step with the disk.
//
// Indexing. Each note becomes one document with fields: title and
// aliases (an alias repeating the title's words is left out), headings,
// tags (as text, plus a keyword field holding every tag and its parents
// for tag filters), the path (as text, plus a lower-cased keyword for
// folder prefixes and the basename for file:), the body as a reader sees
// it (comments, HTML tags and URLs removed; see clean.go) and the words of
// its URLs apart. Two fields describe the note in other notes' words: the
// anchor text and the sentence or list item around every link pointing to
// it (see links.go, which also keeps them exact as notes change). Text goes
// through one analyzer: unicode tokenizer, English possessives, lower case,
// diacritic folding ("café" finds "cafe", "Müller" finds "muller"), English
// stop words, Porter stemming. Notes with Chinese, Japanese or Korean text
// also get bigram fields (bleve's cjk analyzer) that CJK queries run
// against. Nothing is stored in the index; titles, tags, mtimes and field
// lengths come from the metadata cache.
//
// Persistence. The index lives in the folder it is given, outside the
// vault (the service package picks one per vault under the user cache
// dir), or in memory for tests. Beside bleve's files, a bbolt file
// (notes.db, notestore.go) holds one record per note (mtime, size, content
// hash, title, aliases, tags, field lengths, link keys), so a save writes
// the records of the notes it changed and nothing else. The records are
// written once bleve has persisted their batch, after the batch's notes
// were marked dirty: after a crash, a note not marked has a record exactly
// when it has a document, of the same version, and the next Sync reads the
// marked ones again and scans the links of the whole vault (kill_test.go
// kills syncs to check this). Sync compares the disk with the records:
// only notes whose mtime or size changed are read, and only those whose
// hash changed are reindexed. A schema stamp (schemaVersion plus a hash of
// the mapping), the vault path, the id the index shares with its records,
// the records themselves and a probe search are checked at Open; any
// mismatch or damage makes the next Sync rebuild from the vault, logging
// why. A lock file (flock) in the index directory makes a second process
// fail at once with ErrLocked.
//
// Bulk indexing parses notes with a pool of GOMAXPROCS workers (reading
// up to half a batch ahead), maps them to bleve documents on the single
// writer goroutine and writes batches of Options.BatchSize (500) notes, or
// 4 MB of note text. Scorch runs with unsafe_batch: a batch is searchable
// when Batch returns and persisted in the background while the next one is
// analysed; each Sync waits for its batches to be persisted, and their
// records written, before returning. A first index keeps the notes it
// wrote out of memory, in the note store, until it ends. A full index scans the
// links of every note first and spills them, resolved, to partitions
// beside the index (links.go), then indexes one partition at a time; a
// sync of 2,000 notes or more runs under a soft memory limit, and returns
// only once scorch's merges and persisting after its last batch are done,
// then collects and restores the collector's settings (settle.go). So the
// memory of a first index does not grow with the vault. The watcher's
// batches are applied as they come (watch.go); the changes made meanwhile
// make the next batch, and a batch of many notes (a branch switch) is read
// twice, for its links and then to be written in batches (incremental.go).
// The text analyzer
// gives the tokens of bleve's unicode tokenizer and porter stemmer,
// faster (tokenizer.go).
//
// Phrase queries need term positions, so the title, headings and body
// fields keep term vectors (bleve's phrase searcher reads them); the other
// fields do not.
//
// Searching: see query.go for the query language, compile.go for how it
// maps onto bleve queries and rank.go for how free words are ranked. In
// short: the free words of a group are scored by our own BM25F over the
// weighted fields with an IDF-weighted coordination factor, and no word is
// required (a note needs any one of them); filler words ("way", "want")
// weigh a quarter; a note whose title or alias is exactly the query comes
// first; misspelt words also match their likeliest spellings (typo.go);
// the best hits are re-scored for words close together (proximity.go).
// "Phrases" must match; tag:, path:, file: and the Request filters do not
// score; a search with only filters lists notes newest first; a query with
// no word to search for is ErrEmptyQuery. Request.Tags and Request.Folders
// match any of their values. file: and path: are resolved against the
// in-memory path list (faster than term expansion in bleve). Snippets are
// the best sentences of the chunk with the most distinct query terms, as a
// reader sees them (sentences.go, clean.go), matches wrapped in "**".
//
// Reading: ReadChunk returns one chunk of a note named the way a person or a
// model would (path, title, [[wikilink]], basename), with the note's
// outline; the agent's readNote and the hosts' vault/readNote both use it.
// ParseTimeRange turns "last week" or "2026-03" into a range for From/To.
// ReadNote and Lookup resolve such a name to the whole parsed note, or to
// its path.
//
// Links (linkgraph.go): Backlinks (the notes linking to one, resolved as
// Obsidian resolves links) and ResolveLink answer from the inbound links
// each note's document stores for link context, so they cost one stored
// field, never a read of the vault. Changes (changes.go): SubscribeChanges tells
// a subscriber which notes each applied change added, updated or removed.
//
// The package never writes into the vault and reads notes only through
// vault.Vault, which resolves every path inside the vault.
package search
