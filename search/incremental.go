package search

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"

	"github.com/vault-agent/vault-agent/vault"
)

// heldNotes is how many changed notes applyIncremental holds in memory,
// read and parsed, until it writes them. A larger change (a branch switch
// in a git-backed vault) is read twice: first for the notes' links, which
// tell whose inbound link context changes, then again to be written, in
// batches as they are read.
var heldNotes = 500 // a variable for tests

// applyIncremental indexes the notes of toRead and removes those of
// removed, and rewrites the notes whose inbound link context they change
// (see links.go): a change of part of the vault, where applyFull would
// read every note.
func (ix *Index) applyIncremental(ctx context.Context, toRead, removed []string, progress ProgressFunc, stats *SyncStats) (err error) {
	w := ix.newWriter(ctx, len(toRead)+len(removed), progress)
	defer func() {
		if eerr := w.end(err); err == nil {
			err = eerr
		}
	}()
	held := len(toRead) <= heldNotes
	var reads []noteRead
	err = ix.readNotes(ctx, toRead, !held, func(r noteRead) error {
		reads = append(reads, r)
		return nil
	})
	if err != nil {
		return err
	}
	// What changes: notes to remove, notes whose content changed (new or
	// updated), and notes only touched.
	gone := map[string]bool{}
	for _, p := range removed {
		switch {
		case ix.meta.get(p) != nil:
			gone[p] = true
		case ix.suspect[p]:
			w.remove(p) // its document may be left over
		}
	}
	changed := map[string]noteRead{}
	var failed []noteRead
	for _, r := range reads {
		switch old := ix.meta.get(r.path); {
		case r.err != nil && (isNotExist(r.err) || errors.Is(r.err, vault.ErrNotMarkdown)):
			if old != nil {
				gone[r.path] = true
			}
		case r.err != nil:
			failed = append(failed, r)
		default:
			changed[r.path] = r // touched notes too: their inbound context may change
		}
	}
	ins := ix.inboundAfter(changed, gone)
	for p := range gone {
		w.remove(p)
		stats.Removed++
	}
	for _, r := range failed {
		ix.classify(w, r, nil, stats)
	}
	var reread []string
	for p, in := range ins {
		if _, ok := changed[p]; !ok {
			if m := ix.meta.get(p); m != nil && m.inHash != in.hashOrZero() {
				reread = append(reread, p)
			}
		}
	}
	// inOf is the inbound context of a changed note: new, or the one it
	// had.
	inOf := func(p string) *inbound {
		if in, ok := ins[p]; ok {
			return in
		}
		return ix.storedInbound(p)
	}
	if held {
		for p, r := range changed {
			ix.classify(w, r, inOf(p), stats)
		}
	} else {
		// Read again, written as they come. A note may have changed
		// since the first read: it is written as it is now, with the
		// links the inbound contexts were worked out from, so that its
		// next change (which the watcher reports) relinks it from
		// there.
		paths := slices.Sorted(maps.Keys(changed))
		err = ix.readNotes(ctx, paths, false, func(r noteRead) error {
			if r.err == nil {
				r.links = changed[r.path].links
			}
			ix.classify(w, r, inOf(r.path), stats)
			return w.maybeFlush(false)
		})
		if err != nil {
			return ix.finish(w, err, progress)
		}
	}
	sort.Strings(reread)
	w.total += len(reread)
	err = ix.readNotes(ctx, reread, false, func(r noteRead) error {
		var discard SyncStats // a linked note rewritten is not a change of the vault
		ix.classify(w, r, ins[r.path], &discard)
		return w.maybeFlush(false)
	})
	return ix.finish(w, err, progress)
}

// inboundAfter works out which notes' inbound link context the changed
// (read, with their links) and gone notes may change, and returns their new
// inbound context (nil for none). A changed note not in the result keeps
// the inbound context it had (storedInbound). Called with writeMu held.
func (ix *Index) inboundAfter(changed map[string]noteRead, gone map[string]bool) map[string]*inbound {
	// The notes after the change, by key.
	keys := keyView{base: ix.keys(), over: map[string][]string{}}
	added, dropped := map[string]bool{}, map[string]bool{}
	for p := range changed {
		if ix.meta.get(p) == nil {
			added[p] = true
		}
	}
	for p := range gone {
		dropped[p] = true
	}
	for _, set := range []map[string]bool{added, dropped} {
		for p := range set {
			k := vault.NoteKey(p)
			var ps []string
			for _, q := range keys.get(k) {
				if !dropped[q] {
					ps = append(ps, q)
				}
			}
			if added[p] {
				ps = append(ps, p)
			}
			sort.Strings(ps)
			keys.over[k] = ps
		}
	}

	// A changed note whose links (with their context) are the same as
	// before changes nothing for the notes it links to: most edits.
	relinked := map[string]bool{}
	for p, r := range changed {
		if m := ix.meta.get(p); m == nil || m.outHash != outHash(r.links) {
			relinked[p] = true
		}
	}
	dirty := map[string]bool{}
	for p := range added {
		dirty[p] = true // a new note's inbound context is not known yet
	}
	for p := range relinked {
		for _, lc := range changed[p].links {
			if to, ok := keys.resolve(lc, p); ok {
				dirty[to] = true
			}
		}
	}
	// The old targets of a relinked or removed note: every note named
	// as one of its links was (a superset; recomputing is exact).
	var unlinked []string
	for _, set := range []map[string]bool{relinked, gone} {
		for p := range set {
			if ix.meta.get(p) != nil {
				unlinked = append(unlinked, p)
			}
		}
	}
	for _, ks := range ix.linkKeysOf(unlinked) {
		for k := range ks.all() {
			for _, t := range keys.get(k) {
				dirty[t] = true
			}
		}
	}
	for _, set := range []map[string]bool{added, dropped} {
		for p := range set {
			for _, q := range keys.get(vault.NoteKey(p)) {
				dirty[q] = true
			}
		}
	}
	for p := range gone {
		delete(dirty, p)
	}

	// The inbound context of each dirty note, from the links to its name.
	// When the notes of that name are the same before and after, those
	// are the links stored with them (from notes that did not change) and
	// the changed notes' own: no note is read. When a note of that name
	// came or went, a link may now resolve elsewhere or where it resolved
	// nowhere before: every note linking to the name is read from disk.
	named := map[string]bool{}
	for _, set := range []map[string]bool{added, dropped} {
		for p := range set {
			named[vault.NoteKey(p)] = true
		}
	}
	before := ix.keys()
	scanned := map[string][]vault.LinkContext{}
	for p, r := range changed {
		scanned[p] = r.links
	}
	ins := make(map[string]*inbound, len(dirty))
	byKey := map[string][]string{}
	for t := range dirty {
		byKey[vault.NoteKey(t)] = append(byKey[vault.NoteKey(t)], t)
	}
	linkersOf := ix.linkersOf(named)
	for k, targets := range byKey {
		var items []inboundItem
		if named[k] {
			for _, src := range linkersOf[k] {
				if _, ok := changed[src]; ok || gone[src] {
					continue
				}
				lcs, ok := scanned[src]
				if !ok {
					lcs, _ = ix.readLinks(src)
					scanned[src] = lcs
				}
				items = appendItems(items, src, lcs, k)
			}
		} else {
			for _, q := range before.get(k) {
				for _, it := range ix.storedItems(q) {
					if _, ok := changed[it.Src]; !ok && !gone[it.Src] {
						items = append(items, it)
					}
				}
			}
		}
		for p, r := range changed {
			items = appendItems(items, p, r.links, k)
		}
		builders := make(map[string]*inboundBuilder, len(targets))
		for _, t := range targets {
			builders[t] = &inboundBuilder{}
		}
		for _, it := range items {
			if to, ok := keys.resolve(it.L, it.Src); ok && builders[to] != nil {
				builders[to].add(it.Src, it.I, it.L)
			}
		}
		for t, b := range builders {
			ins[t] = b.build()
		}
	}
	return ins
}

// appendItems appends the links of lcs (of the note src) whose key is k.
func appendItems(items []inboundItem, src string, lcs []vault.LinkContext, k string) []inboundItem {
	for i, lc := range lcs {
		if vault.LinkKey(lc.Target) == k {
			items = append(items, inboundItem{src, i, lc})
		}
	}
	return items
}
