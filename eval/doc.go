// Package eval measures search relevance: it runs a set of questions with
// known answers against vault-agent's search and against a baseline a
// developer could write in twenty lines (SQLite FTS5), over the same vault,
// and reports MRR@10, top-1 and recall@10 overall and by kind of question.
//
// A question file is a JSON array of {q, expect[], kind}: the text a person
// types, the vault-relative paths of the notes that answer it (best first)
// and an optional kind (paraphrase, keyword, typo, vocabulary...).
//
// The FTS5 baseline runs in python3's sqlite3 module (present wherever
// python3 is), so the repository needs no cgo or SQLite dependency: one
// python3 process indexes the vault in memory and answers every question.
// It is exactly: title (file name), headings and body (the text after the
// frontmatter) columns, tokenize
// 'porter unicode61', the question's words joined by OR, ranked by
// bm25(10, 5, 1).
//
// vault-agent's index is searched as a later run sees it: when the sync
// before the questions wrote anything, the index is closed and opened
// again first, so the figures are those of the index on disk.
//
// The answer check asks every question with the offline model, as
// `vault-agent ask` does with no key, and judges the answer's citations;
// with an embedding model it asks again over hybrid search, as `ask` does
// when a model is configured.
//
// The package is a measuring tool for `make eval`; the vault-agent binary
// does not use it.
package eval
