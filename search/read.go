package search

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vault-agent/vault-agent/vault"
)

// NoteChunk is one chunk of a note: the result of readNote and of the vault/readNote method.
type NoteChunk struct {
	Path             string          `json:"path"`
	Title            string          `json:"title"`
	Aliases          []string        `json:"aliases,omitempty"`
	ChunkIndex       int             `json:"chunkIndex"`
	ChunkCount       int             `json:"chunkCount"`
	Heading          string          `json:"heading"`
	Content          string          `json:"content"`
	Headings         []vault.Heading `json:"headings"`
	Links            []vault.Link    `json:"links"`
	Tags             []string        `json:"tags"`
	MTime            int64           `json:"mtime"`
	FrontmatterError string          `json:"frontmatterError,omitempty"`
}

// ReadChunk reads one chunk of the indexed note that name designates (see
// ReadChunkOf).
func (ix *Index) ReadChunk(name string, chunk int) (*NoteChunk, error) {
	return ReadChunkOf(ix.v, ix.Paths(), name, chunk)
}

// ReadNote reads and parses the indexed note that name designates (see
// ReadNoteOf): its chunks, headings, links and tags.
func (ix *Index) ReadNote(name string) (*vault.Note, error) {
	return ReadNoteOf(ix.v, ix.Paths(), name)
}

// ReadNoteOf resolves what a person or model typed (path, title, wikilink,
// basename, path tail) to one of the note paths of v and reads that note.
// A name that would leave the vault is refused as such
// (vault.ErrUnsafePath), not merely "not found", so the caller learns why;
// an ambiguous name is a *vault.AmbiguousError; an unknown one wraps
// vault.ErrNotFound and lists close names.
func ReadNoteOf(v *vault.Vault, paths []string, name string) (*vault.Note, error) {
	p, err := lookupNote(v, paths, name)
	if err != nil {
		return nil, err
	}
	return v.ReadNote(p)
}

// Lookup resolves what a person or model typed to the path of an indexed
// note, with the errors of ReadNoteOf, without reading it.
func (ix *Index) Lookup(name string) (string, error) {
	return lookupNote(ix.v, ix.Paths(), name)
}

func lookupNote(v *vault.Vault, paths []string, name string) (string, error) {
	if _, err := v.Resolve(strings.TrimSpace(name)); errors.Is(err, vault.ErrUnsafePath) {
		return "", err
	}
	return vault.LookupIn(name, paths)
}

// ReadChunkOf reads the note name designates, as ReadNoteOf does, and
// returns its chunk number chunk; a chunk out of range wraps ErrChunkRange.
func ReadChunkOf(v *vault.Vault, paths []string, name string, chunk int) (*NoteChunk, error) {
	n, err := ReadNoteOf(v, paths, name)
	if err != nil {
		return nil, err
	}
	p := n.Path
	count := max(len(n.Chunks), 1)
	if chunk < 0 || chunk >= count {
		return nil, fmt.Errorf("%w: chunkIndex %d is out of range: %s has %d chunk(s), 0..%d", ErrChunkRange, chunk, p, count, count-1)
	}
	out := &NoteChunk{
		Path:             n.Path,
		Title:            n.Title,
		Aliases:          nonNil(n.Aliases),
		ChunkIndex:       chunk,
		ChunkCount:       count,
		Headings:         n.Headings,
		Links:            n.Links,
		Tags:             nonNil(n.Tags),
		MTime:            n.ModTime.UnixMilli(),
		FrontmatterError: n.FrontmatterError,
	}
	if out.Headings == nil {
		out.Headings = []vault.Heading{}
	}
	if out.Links == nil {
		out.Links = []vault.Link{}
	}
	if len(n.Chunks) > 0 {
		out.Heading = n.Chunks[chunk].Heading
		out.Content = n.Chunks[chunk].Text
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
