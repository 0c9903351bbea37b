package search

import (
	"context"
	"errors"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vault-agent/vault-agent/vault"
)

// The link graph: the outgoing links of the indexed notes, kept from the
// parse the index makes anyway when it indexes a note, so that backlinks
// cost a walk of memory, not a read of the vault. It is kept from the start
// with Options.Links, and otherwise from the first Backlinks call; then the
// notes whose links it lacks (all, or those an index reopened without
// parsing) are read once, and every write keeps it current.

// Backlink is a note linking to another one, Count times.
type Backlink struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	Count int    `json:"count"`
}

// linkGraph caches the outgoing links of the indexed notes. The zero value
// is ready to use.
type linkGraph struct {
	// on says the writers keep the graph; complete says it holds the links
	// of every indexed note. Both are read without mu by the writers.
	on       atomic.Bool
	complete atomic.Bool
	// reads counts the notes fillLinks read (tests).
	reads atomic.Int64
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
	markdown bool
	n        int32
}

// keepLinks records the links of n, a note just parsed by a writer, when
// the graph is kept.
func (ix *Index) keepLinks(n *vault.Note) {
	if ix.opts.Links || ix.links.on.Load() {
		ix.links.set(n)
	}
}

// set records the links of n.
func (g *linkGraph) set(n *vault.Note) {
	refs := make([]linkRef, 0, len(n.Links))
next:
	for _, l := range n.Links {
		if l.Target == "" {
			continue
		}
		md := l.Kind == "markdown"
		for i := range refs {
			if refs[i].target == l.Target && refs[i].markdown == md {
				refs[i].n++
				continue next
			}
		}
		// A clone, so that the cache does not keep the note's text alive.
		refs = append(refs, linkRef{target: strings.Clone(l.Target), markdown: md, n: 1})
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

// clear forgets every note (the index is rebuilt): the next question reads
// the links of the notes the rebuild did not keep.
func (g *linkGraph) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.notes = nil
	g.complete.Store(false)
}

// mayName is the cheap test before resolving a link: can target name the
// note whose path without ".md" is full and whose file name without ".md"
// is base (both lower-cased)? Case is ignored, a leading "/" and a
// trailing ".md" too.
func mayName(target, full, base string) bool {
	k := stripMD(strings.TrimPrefix(target, "/"))
	if strings.EqualFold(k, full) || strings.EqualFold(k, base) {
		return true
	}
	i := len(full) - len(k)
	return i > 0 && full[i-1] == '/' && strings.EqualFold(full[i:], k)
}

func stripMD(p string) string {
	if len(p) > 3 && strings.EqualFold(p[len(p)-3:], ".md") {
		return p[:len(p)-3]
	}
	return p
}

// fillLinks completes the graph once: it turns keeping it on and reads the
// links of the indexed notes it lacks, or has for another content. It
// holds the write lock meanwhile, so that no note is indexed between the
// two.
func (ix *Index) fillLinks(ctx context.Context) error {
	g := &ix.links
	if g.complete.Load() {
		return nil
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if g.complete.Load() {
		return nil
	}
	g.on.Store(true)
	// ix.meta is only written with writeMu held, which we hold.
	var missing []string
	g.mu.Lock()
	for p, m := range ix.meta {
		if nl, ok := g.notes[p]; !ok || nl.hash != m.Hash {
			missing = append(missing, p)
		}
	}
	g.mu.Unlock()
	sort.Strings(missing)
	// A note that vanished or cannot be read has no links now; its next
	// change brings it back.
	err := ix.readNotes(ctx, missing, func(_ string, n *vault.Note, err error) error {
		if err == nil {
			g.set(n)
			g.reads.Add(1)
		}
		return nil
	})
	if err == nil {
		g.complete.Store(true)
	}
	return err
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
			if mayName(r.target, full, base) {
				cands = append(cands, candidate{src, r})
			}
		}
	}
	ix.links.mu.Unlock()
	paths := ix.Paths()
	counts := map[string]int{}
	for _, c := range cands {
		if resolveLink(c.ref.target, c.ref.markdown, c.src, paths) == target {
			counts[c.src] += int(c.ref.n)
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
