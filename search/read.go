package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/vault-agent/vault-agent/vault"
)

// NoteChunk is one chunk of a note: the result of readNote and of the vault/readNote method.
type NoteChunk struct {
	Path string `json:"path"`
	// Link is the shortest [[wikilink]] target that opens this note and
	// no other in the vault (vault.LinkTarget): what to cite it by.
	Link             string          `json:"link"`
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
// A name with a heading ("[[Note#Heading]]", "Note.md#Heading") asks for
// that section: chunk 0 is then the section's first chunk (the note's
// first chunk when no heading matches).
func ReadChunkOf(v *vault.Vault, paths []string, name string, chunk int) (*NoteChunk, error) {
	n, err := ReadNoteOf(v, paths, name)
	if err != nil {
		return nil, err
	}
	if h := headingOf(name); h != "" && chunk == 0 {
		chunk = SectionChunk(n, h)
	}
	p := n.Path
	count := max(len(n.Chunks), 1)
	if chunk < 0 || chunk >= count {
		return nil, fmt.Errorf("%w: chunkIndex %d is out of range: %s has %d chunk(s), 0..%d", ErrChunkRange, chunk, p, count, count-1)
	}
	out := &NoteChunk{
		Path:             n.Path,
		Link:             vault.LinkTarget(n.Path, paths),
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

// headingOf returns the heading part of a note name, "" when it has none:
// what follows the first '#' (Obsidian forbids '#' in file names), before
// any "|alias" and "]]".
func headingOf(name string) string {
	_, h, ok := strings.Cut(name, "#")
	if !ok {
		return ""
	}
	h, _, _ = strings.Cut(h, "|")
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(h), "]]"))
}

// SectionChunk returns the first chunk of n under heading (compared
// without case, blanks or markup, against the innermost heading of each
// chunk, then any level of its heading path), or 0 when none is.
func SectionChunk(n *vault.Note, heading string) int {
	want := headingKey(heading)
	if want == "" {
		return 0
	}
	for pass := 0; pass < 2; pass++ {
		for _, c := range n.Chunks {
			parts := strings.Split(c.Heading, " > ")
			if pass == 0 {
				parts = parts[len(parts)-1:]
			}
			for _, p := range parts {
				if headingKey(p) == want {
					return c.Index
				}
			}
		}
	}
	return 0
}

// headingKey is a heading as a link compares it: lower case, letters and
// digits only.
func headingKey(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
