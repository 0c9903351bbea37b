package search

// maxFixes is how many notes replaced while a table was built buildTable
// applies under the lock; past it, it builds the table again.
const maxFixes = 1000

// buildTable builds one of the tables derived from the notes (the title
// keys, the keys of note names, the linking notes) without holding mu
// while it works, so that searches are not held up meanwhile (a second at
// 100,000 notes), and without starting over when notes change meanwhile
// (saves every few hundred milliseconds would keep it from ever ending):
// it builds from a copy of the notes, then applies the notes replaced
// since to it under the lock, and installs it. build makes the table from
// the notes; fix applies one note replaced (old or m nil) to it; installed
// reports whether a table is in place already; install puts the new one in
// place. fix, installed and install are called with mu held for writing
// (installed also for reading).
func (ix *Index) buildTable(build func(notes *noteMap), fix func(old, m *noteRec), installed func() bool, install func()) {
	for {
		ix.mu.RLock()
		if installed() {
			ix.mu.RUnlock()
			return
		}
		gen := ix.metaGen
		snap := ix.meta.clone()
		ix.mu.RUnlock()
		build(snap)

		ix.mu.Lock()
		if installed() {
			ix.mu.Unlock()
			return
		}
		if ix.metaGen != gen {
			var changed []string
			for m := range ix.meta.all() {
				if snap.get(m.Path) != m {
					changed = append(changed, m.Path)
				}
			}
			for m := range snap.all() {
				if ix.meta.get(m.Path) == nil {
					changed = append(changed, m.Path)
				}
			}
			if len(changed) > maxFixes {
				ix.mu.Unlock() // replaced wholesale (a reopen, a first index): again
				continue
			}
			for _, p := range changed {
				fix(snap.get(p), ix.meta.get(p))
			}
		}
		install()
		ix.mu.Unlock()
		return
	}
}
