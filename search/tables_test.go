package search

import (
	"fmt"
	"maps"
	"testing"
)

// A table built while notes change (saves during a build of a second at
// 100,000 notes) ends as one built from the notes as they are, without the
// build starting over; a change of more than maxFixes notes meanwhile (a
// reopen) builds it again. Searches are not held up: the build holds no
// lock (applyPending, which takes it, runs inside build).
func TestBuildTableWhileNotesChange(t *testing.T) {
	for _, tt := range []struct {
		changes, builds int
	}{{3, 1}, {maxFixes + 1, 2}} {
		t.Run(fmt.Sprint(tt.changes), func(t *testing.T) {
			ix := openIndex(t, writeVault(t, smallVault), "")
			var table map[string]string // path → title
			builds := 0
			ix.buildTable(func(notes *noteMap) {
				builds++
				table = map[string]string{}
				for m := range notes.all() {
					table[m.Path] = m.Title()
				}
				if builds > 1 {
					return
				}
				pending := map[string]*NoteMeta{"recipes/Rye Crackers.md": nil}
				for i := 0; i < tt.changes-2; i++ {
					p := fmt.Sprintf("new %d.md", i)
					pending[p] = &NoteMeta{Path: p, Title: "New"}
				}
				m := notes.get("people/Jürgen Müller.md").meta()
				m.Title = "Renamed"
				pending[m.Path] = &m
				ix.applyPending(pending)
			}, func(old, m *noteRec) {
				if old != nil {
					delete(table, old.Path)
				}
				if m != nil {
					table[m.Path] = m.Title()
				}
			}, func() bool { return false }, func() {})
			want := map[string]string{}
			for m := range ix.meta.all() {
				want[m.Path] = m.Title()
			}
			if !maps.Equal(table, want) {
				t.Errorf("table %v, want %v", table, want)
			}
			if builds != tt.builds {
				t.Errorf("built %d times, want %d", builds, tt.builds)
			}
		})
	}
}
