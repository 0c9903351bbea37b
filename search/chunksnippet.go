package search

import "fmt"

// ChunkSnippet returns the heading of the chunk-th chunk of the note at
// path (0-based, as vault.Note.Chunks) and the start of its text as a
// reader sees it, cleaned as search's snippets are (see clean.go): no
// comments, HTML, images, embeds, link targets or markup. It is the
// snippet of a note found by other means than its words: semantic search,
// related notes.
func (ix *Index) ChunkSnippet(path string, chunk int) (heading, snippet string, err error) {
	chunks, err := ix.readForSnippet(path)
	if err != nil {
		return "", "", err
	}
	if chunk >= len(chunks) {
		// A chunk past what snippets read of a large note.
		raw, err := ix.v.ReadRaw(path, -1)
		if err != nil {
			return "", "", err
		}
		chunks = ix.chunks.chunks(raw, ix.v.ChunkSize())
	}
	if chunk < 0 || chunk >= len(chunks) {
		return "", "", fmt.Errorf("%s has no chunk %d", path, chunk)
	}
	c := chunks[chunk]
	return c.Heading, bestSentences(c.Text, nil, snippetRunes), nil
}

// AddSnippets fills the snippets (and headings and chunk indexes) of rs,
// results of the search that answered from, made with Request.NoSnippets,
// as that search would have.
func (ix *Index) AddSnippets(from *Results, rs []Result) {
	ix.addSnippets(&Results{Results: rs}, &compiler{terms: from.terms})
}
