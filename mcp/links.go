package mcp

import (
	"context"
	"errors"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// The index keeps no link graph, so backlinks are computed here: the
// outgoing links of every note, read once and re-read only for notes whose
// content hash changed. It belongs with the index (search) in the long run;
// nothing outside this file knows how it is kept.

// linkGraph caches the outgoing links of every note.
type linkGraph struct {
	vault Vault

	// mu guards notes; refresh holds it while it reads, so concurrent
	// calls wait for one refresh instead of each reading the vault.
	mu    sync.Mutex
	notes map[string]noteLinks
}

// noteLinks are the links of one note as of one content hash.
type noteLinks struct {
	hash  string
	links []vault.Link
}

func newLinkGraph(v Vault) *linkGraph {
	return &linkGraph{vault: v, notes: map[string]noteLinks{}}
}

// backlink is one note linking to another, count times.
type backlink struct {
	path  string
	count int
}

// backlinks returns the notes that link to target, sorted by path. notes
// and paths are the index's current notes and their paths (sorted).
func (g *linkGraph) backlinks(ctx context.Context, target string, notes []search.NoteMeta, paths []string) ([]backlink, error) {
	snap, err := g.refresh(ctx, notes)
	if err != nil {
		return nil, err
	}
	full := strings.ToLower(stripMD(target))
	base := strings.ToLower(stripMD(path.Base(target)))
	var out []backlink
	for _, src := range paths {
		if src == target {
			continue
		}
		n := 0
		for _, l := range snap[src].links {
			if !mayResolveTo(l, full, base) {
				continue
			}
			if resolveLink(l, src, paths) == target {
				n++
			}
		}
		if n > 0 {
			out = append(out, backlink{path: src, count: n})
		}
	}
	return out, nil
}

// mayResolveTo is a cheap filter before resolveLink: can link l name the
// note whose lower-cased path without ".md" is full and base name is base?
func mayResolveTo(l vault.Link, full, base string) bool {
	t := strings.ToLower(stripMD(strings.TrimPrefix(l.Target, "/")))
	return t == full || t == base || strings.HasSuffix(full, "/"+t)
}

// resolveLink returns the note path link l of note src resolves to, or ""
// when it resolves to none. Markdown links carry vault paths already;
// wikilinks are resolved as Obsidian does: by path, then by file name,
// preferring, among several notes of that name, the one in src's folder,
// then the one with the shortest path.
func resolveLink(l vault.Link, src string, paths []string) string {
	if l.Kind == "markdown" {
		p, err := vault.LookupIn(l.Target, paths)
		if err != nil || !strings.EqualFold(stripMD(p), stripMD(l.Target)) {
			return ""
		}
		return p
	}
	p, err := vault.LookupIn(l.Target, paths)
	if err == nil {
		return p
	}
	var amb *vault.AmbiguousError
	if !errors.As(err, &amb) {
		return ""
	}
	dir := path.Dir(src)
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

func stripMD(p string) string {
	if len(p) > 3 && strings.EqualFold(p[len(p)-3:], ".md") {
		return p[:len(p)-3]
	}
	return p
}

// refresh brings the cache in step with notes and returns it. It reads
// (with a few workers) the notes that are new or whose hash changed.
func (g *linkGraph) refresh(ctx context.Context, notes []search.NoteMeta) (map[string]noteLinks, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	live := make(map[string]bool, len(notes))
	var stale []search.NoteMeta
	for _, m := range notes {
		live[m.Path] = true
		if c, ok := g.notes[m.Path]; !ok || c.hash != m.Hash {
			stale = append(stale, m)
		}
	}
	for p := range g.notes {
		if !live[p] {
			delete(g.notes, p)
		}
	}
	if len(stale) > 0 {
		type read struct {
			path string
			nl   noteLinks
		}
		jobs := make(chan search.NoteMeta)
		results := make(chan read)
		var wg sync.WaitGroup
		for range max(1, min(runtime.GOMAXPROCS(0), 4)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for m := range jobs {
					nl := noteLinks{hash: m.Hash}
					// A note that vanished or cannot be read has no links
					// now; the next change brings it back.
					if n, err := g.vault.Note(ctx, m.Path); err == nil && n.Path == m.Path {
						nl.links = n.Links
					}
					results <- read{m.Path, nl}
				}
			}()
		}
		go func() {
			defer close(jobs)
			for _, m := range stale {
				select {
				case jobs <- m:
				case <-ctx.Done():
					return
				}
			}
		}()
		go func() { wg.Wait(); close(results) }()
		for r := range results {
			g.notes[r.path] = r.nl
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	snap := make(map[string]noteLinks, len(g.notes))
	for k, v := range g.notes {
		snap[k] = v
	}
	return snap, nil
}
