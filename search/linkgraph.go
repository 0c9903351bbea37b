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

// LinkGraph is what LinksOf needs of an index; *Index and the index a
// follower process shares (search/shared) have it.
type LinkGraph interface {
	Backlinks(ctx context.Context, target string) ([]Backlink, error)
	ResolveLink(l vault.Link, from string) string
}

// NoteLinks are a note's links both ways, each list cut at the limit it
// was asked with; the totals count them all.
type NoteLinks struct {
	Path          string     `json:"path"`
	Title         string     `json:"title"`
	Outgoing      []LinkOut  `json:"outgoing"`
	Backlinks     []Backlink `json:"backlinks"`
	OutgoingTotal int        `json:"outgoingTotal"`
	BacklinkTotal int        `json:"backlinkTotal"`
}

// LinkOut is one link of a note: its target as written, and the note it
// resolves to ("" when none: an unresolved link, an attachment).
type LinkOut struct {
	Target  string `json:"target"`
	Path    string `json:"path,omitempty"`
	Heading string `json:"heading,omitempty"`
	Embed   bool   `json:"embed,omitempty"`
}

// LinksOf returns the links of note n, read from the vault, and the notes
// linking to it: its links in order, each target and heading once, at
// most limit of each.
func LinksOf(ctx context.Context, g LinkGraph, n *vault.Note, limit int) (*NoteLinks, error) {
	out := &NoteLinks{Path: n.Path, Title: n.Title, Outgoing: []LinkOut{}, Backlinks: []Backlink{}}
	seen := map[string]bool{}
	for _, l := range n.Links {
		key := l.Target + "#" + l.Heading
		if seen[key] || l.Target == "" {
			continue
		}
		seen[key] = true
		out.OutgoingTotal++
		if len(out.Outgoing) < limit {
			out.Outgoing = append(out.Outgoing, LinkOut{Target: l.Target, Heading: l.Heading, Embed: l.Embed, Path: g.ResolveLink(l, n.Path)})
		}
	}
	back, err := g.Backlinks(ctx, n.Path)
	if err != nil {
		return nil, err
	}
	out.BacklinkTotal = len(back)
	out.Backlinks = append(out.Backlinks, back[:min(len(back), limit)]...)
	return out, nil
}
