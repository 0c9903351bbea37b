package search

import (
	"context"
	"sort"

	"github.com/vault-agent/vault-agent/vault"
)

// Backlinks and link resolution answer from what the index already keeps for
// link context (links.go): every note's document stores the links pointing
// to it, exact through edits, renames and deletes, so a backlink costs one
// stored-field read, never a read of the vault.

// Backlink is a note linking to another one, Count times.
type Backlink struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	Count int    `json:"count"`
}

// Backlinks returns the notes whose links resolve to the indexed note at
// the exact path target (see ResolveLink), sorted by path, each with how
// many of its links do.
func (ix *Index) Backlinks(ctx context.Context, target string) ([]Backlink, error) {
	if ix.isClosed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	m := ix.meta.get(target)
	linked := m != nil && m.inHash != 0
	ix.mu.RUnlock()
	var items []inboundItem
	if linked {
		items = ix.docItems(target)
	}
	counts := map[string]int{}
	for _, it := range items {
		if it.Src != target {
			counts[it.Src]++
		}
	}
	out := make([]Backlink, 0, len(counts))
	for src, n := range counts {
		if m, ok := ix.Note(src); ok { // else removed meanwhile
			out = append(out, Backlink{Path: src, Title: m.Title, Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ResolveLink returns the indexed note that the link l, found in the note
// at from, points to, or "" when it points to none (an unresolved link, a
// link to an attachment), resolved as link context resolves it: the way
// Obsidian does (vault.ResolveLink).
func (ix *Index) ResolveLink(l vault.Link, from string) string {
	p, _ := ix.keys().resolve(vault.LinkContext{Target: l.Target, Markdown: l.Kind == "markdown"}, from)
	return p
}
