// Package semantic adds vectors to the text index: it embeds every chunk of
// every indexed note through an Embedder (any OpenAI-compatible embeddings
// endpoint, llm.Embedder), keeps the vectors in a bbolt file beside the
// index, and answers semantic, hybrid and "related notes" searches.
//
// Vectors are stored under the chunk's content hash (heading path and
// text), per model, so an unchanged chunk is never embedded twice: not
// after a restart, a rename or a move. Each batch of vectors is committed
// with the records of the notes it completes in one transaction, so a
// killed process loses at most the batch in flight and the next Sync
// resumes. A store made by another model, or by one now answering in
// another dimension, is emptied with a message and embedded again.
//
// Search is an exact scan: every chunk's vector is held as int8 (its
// components scaled so the largest is 127), one row of dims rounded up to
// 32 bytes, and scored against the query with an AVX2 kernel (a portable
// loop elsewhere). Memory is (dims rounded up to 32) + 12 bytes per chunk:
// 780 bytes for 768 dimensions, 78 MB for 100,000 chunks; the scan of
// 100,000 such chunks takes a few milliseconds on one core, so no
// approximate index is needed at the sizes of a notes vault.
//
// Hybrid search fuses the lexical ranking (search.Index.Search) and the
// semantic one by a convex combination of their normalised scores, the
// vectors weighed per query by how much of the query the vault's words
// hold, and by how far the model can be trusted on this vault, so that a
// model without signal leaves the lexical order as it was (fuse.go,
// trust.go). Every filter of a request applies in every mode
// (search.Index.FilterPaths). An embedding endpoint that fails costs a
// search one attempt of at most a second; searches then answer lexically
// until it answers again (health.go).
//
// The package must not write into the vault, and makes no network call of
// its own: only its Embedder does.
package semantic
