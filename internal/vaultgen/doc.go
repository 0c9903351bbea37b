// Package vaultgen generates deterministic, realistic Obsidian-style vaults
// for benchmarks: nested folders, frontmatter, headings, prose with a
// Zipf-like vocabulary, inline and nested tags, wikilinks between the
// generated notes, code blocks, daily notes and some non-ASCII text.
//
// The same Options (including Seed) always produce byte-identical files with
// identical modification times, whatever the number of workers. TouchNotes
// modifies existing notes for incremental-indexing benchmarks.
//
// vaultgen writes only into the directory it is given; it is a test and
// benchmark helper and is not used by the vault-agent binary itself.
// The hand-written fixture vault in testdata/vault is described in
// FIXTURE_NOTES.md next to this file.
package vaultgen
