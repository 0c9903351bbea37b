// Package vault reads an Obsidian-style markdown vault: it finds the notes
// (skipping dot-folders and user excludes), parses each note (frontmatter,
// tags, headings, wikilinks, embeds, markdown links, heading-delimited
// chunks), reads the context of each link to another note and resolves it
// as Obsidian does (linkcontext.go), resolves every path a host or a model sends safely inside the
// vault, looks notes up by what a person would type, and watches the vault
// with fsnotify so an index can stay fresh. IsNotePath is the one rule of
// what a note path looks like (a .md file outside dot-folders).
//
// The vault is read-only to this package except for edits (edit.go): a
// Proposal worked out by Propose is written by Apply only when a front-end
// has had it approved, atomically and only if the note is unchanged since
// it was read; the Journal (kept outside the vault) records each applied
// edit so that Undo can revert it. Nothing else here creates, writes,
// renames or deletes a file in the vault. Paths crossing the package boundary are
// vault-relative slash paths ("projects/Alpha.md"); absolute paths, ".."
// escapes, NUL bytes and symlinks leaving the vault are refused with
// ErrUnsafePath. Parsing never fails and never panics: a note with broken
// frontmatter is still indexed from its body.
//
// The package knows nothing about the search index, JSON-RPC or the agent;
// package search builds on Walk, ReadNote/Parse, IsNotePath and Watch.
package vault
