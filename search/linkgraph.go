package search

import (
	"context"
	"errors"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/vault"
)

// The link graph: the outgoing links of every indexed note, kept from the
// parse the index makes anyway when it indexes a note, so that backlinks
// cost a walk of memory, not a read of the vault. Notes this process did
// not parse (an index reopened with notes unchanged since) are read once,
// on the first question, and then kept current by every write.

// Backlink is a note linking to another one, Count times.
type Backlink struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	Count int    `json:"count"`
}

// linkGraph caches the outgoing links of the indexed notes. The zero value
// is ready to use.
type linkGraph struct {
	// fill serializes fillLinks, so concurrent questions wait for one read
	// of the missing notes.
	fill sync.Mutex
	// mu guards notes.
	mu    sync.Mutex
	notes map[string]noteLinks // by path
}

// noteLinks are the links of one note, as of the content whose hash is hash.
type noteLinks struct {
	hash  string
	links []linkRef
}

// linkRef is one distinct link target of a note and how often it occurs.
type linkRef struct {
	target   string // as written (a vault path for a markdown link)
	key      string // target lower-cased without "/" in front and ".md"
	markdown bool
	n        int
}

// set records the links of n (a note just parsed).
func (g *linkGraph) set(n *vault.Note) {
	refs := make([]linkRef, 0, len(n.Links))
	at := make(map[string]int, len(n.Links))
	for _, l := range n.Links {
		if l.Target == "" {
			continue
		}
		md := l.Kind == "markdown"
		id := l.Target
		if md {
			id = "\x00" + id
		}
		if i, ok := at[id]; ok {
			refs[i].n++
			continue
		}
		// Clones, so that the cache does not keep the note's text alive.
		t := strings.Clone(l.Target)
		k := linkKey(t)
		if k == t {
			k = t // one string, not two
		}
		at[id] = len(refs)
		refs = append(refs, linkRef{target: t, key: k, markdown: md, n: 1})
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.notes == nil {
		g.notes = make(map[string]noteLinks)
	}
	g.notes[n.Path] = noteLinks{hash: n.Hash, links: refs}
}

// drop forgets the links of the note at p.
func (g *linkGraph) drop(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.notes, p)
}

// clear forgets every note (the index is rebuilt).
func (g *linkGraph) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.notes = nil
}

// linkKey is what a link target is compared by: lower-cased, without a
// leading "/" or a trailing ".md".
func linkKey(target string) string {
	return strings.ToLower(stripMD(strings.TrimPrefix(target, "/")))
}

func stripMD(p string) string {
	if len(p) > 3 && strings.EqualFold(p[len(p)-3:], ".md") {
		return p[:len(p)-3]
	}
	return p
}

// fillLinks reads the links of the indexed notes the graph does not know
// as of their indexed content, and forgets notes no longer indexed.
func (ix *Index) fillLinks(ctx context.Context) error {
	g := &ix.links
	g.fill.Lock()
	defer g.fill.Unlock()
	ix.mu.RLock()
	hashes := make(map[string]string, len(ix.meta))
	for p, m := range ix.meta {
		hashes[p] = m.Hash
	}
	ix.mu.RUnlock()
	var missing []string
	g.mu.Lock()
	for p := range g.notes {
		if _, ok := hashes[p]; !ok {
			delete(g.notes, p)
		}
	}
	for p, h := range hashes {
		if nl, ok := g.notes[p]; !ok || nl.hash != h {
			missing = append(missing, p)
		}
	}
	g.mu.Unlock()
	sort.Strings(missing)
	// A note that vanished or cannot be read has no links now; its next
	// change brings it back.
	return ix.readNotes(ctx, missing, func(_ string, n *vault.Note, err error) error {
		if err == nil {
			g.set(n)
		}
		return nil
	})
}

// Backlinks returns the notes whose links resolve to the indexed note at
// the exact path target (see ResolveLink), sorted by path, each with how
// many of its links do.
func (ix *Index) Backlinks(ctx context.Context, target string) ([]Backlink, error) {
	if ix.isClosed() {
		return nil, ErrClosed
	}
	if err := ix.fillLinks(ctx); err != nil {
		return nil, err
	}
	full := strings.ToLower(stripMD(target))
	base := strings.ToLower(stripMD(path.Base(target)))
	type candidate struct {
		src string
		ref linkRef
	}
	var cands []candidate
	ix.links.mu.Lock()
	for src, nl := range ix.links.notes {
		if src == target {
			continue
		}
		for _, r := range nl.links {
			// A cheap test first: can the link name the target at all?
			if r.key == full || r.key == base || strings.HasSuffix(full, "/"+r.key) {
				cands = append(cands, candidate{src, r})
			}
		}
	}
	ix.links.mu.Unlock()
	paths := ix.Paths()
	counts := map[string]int{}
	for _, c := range cands {
		if resolveLink(c.ref.target, c.ref.markdown, c.src, paths) == target {
			counts[c.src] += c.ref.n
		}
	}
	out := make([]Backlink, 0, len(counts))
	for src, n := range counts {
		b := Backlink{Path: src, Count: n}
		if m, ok := ix.Note(src); ok {
			b.Title = m.Title
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ResolveLink returns the indexed note that the link l, found in the note
// at from, points to, or "" when it points to none (an unresolved link, a
// link to an attachment). A markdown link carries a vault path already; a
// wikilink is resolved as Obsidian does: by path, then by file name, and
// among several notes of that name the one in from's folder, else the one
// with the shortest path.
func (ix *Index) ResolveLink(l vault.Link, from string) string {
	return resolveLink(l.Target, l.Kind == "markdown", from, ix.Paths())
}

func resolveLink(target string, markdown bool, from string, paths []string) string {
	p, err := vault.LookupIn(target, paths)
	if markdown {
		if err != nil || !strings.EqualFold(stripMD(p), stripMD(target)) {
			return ""
		}
		return p
	}
	if err == nil {
		return p
	}
	var amb *vault.AmbiguousError
	if !errors.As(err, &amb) {
		return ""
	}
	dir := path.Dir(from)
	best := ""
	for _, c := range amb.Candidates {
		if path.Dir(c) == dir {
			return c
		}
		if best == "" || len(c) < len(best) {
			best = c
		}
	}
	return best
}
