package offline

import (
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/search"
)

// A misspelt goal word matches the spelling the search's snippets
// highlight, so the note the search found by the correction is quoted
// rather than a note holding only the goal's other word.
func TestOfflineMisspeltWordMatchesHighlightedSpelling(t *testing.T) {
	st := &convState{goal: "catpuccin theme", offered: map[string]bool{}, progressed: map[string]bool{}, readAsked: map[string]bool{}}
	st.terms = extractTerms(st.goal, false)
	st.searches = []searchRec{{query: st.goal, total: 2, results: []search.Result{
		{Path: "Themes/Catppuccin.md", Title: "Catppuccin", Snippet: "**Catppuccin** · Designed by: someone"},
		{Path: "Themes/Themes.md", Title: "Themes", Snippet: "Every **theme** of the vault"},
	}}}
	st.reads = []readRec{
		{path: "Themes/Catppuccin.md", title: "Catppuccin", content: "Catppuccin is a soothing pastel colour scheme for the app, in four flavours.", chunkCount: 1},
		{path: "Themes/Themes.md", title: "Themes", content: "Every theme of the vault is listed here, with a link to its page.", chunkCount: 1},
	}
	groups := st.goalGroups()
	found := false
	for _, g := range groups {
		if len(g) == 1 && hasUnit(map[string]bool{stemOf("catppuccin"): true}, g[0]) {
			found = true
		}
	}
	if !found {
		t.Fatalf("goal groups %v lack the highlighted spelling", groups)
	}
	lead, _, _ := strings.Cut(st.answer(), "\n")
	if !strings.Contains(lead, "[[Catppuccin]]") {
		t.Fatalf("lead %q does not cite [[Catppuccin]]", lead)
	}
}

// A word the snippets highlight as typed is not a typo: no other spelling
// is added to it (its spellings in British and American English are the
// word itself: TestOtherSpellingIsTheWord).
func TestOfflineCorrectWordKeepsItsStem(t *testing.T) {
	st := &convState{goal: "theme cards"}
	st.terms = extractTerms(st.goal, false)
	st.searches = []searchRec{{results: []search.Result{{Path: "a.md", Snippet: "**theme** and **themes**, **cards** and **carts**"}}}}
	for _, g := range st.goalGroups() {
		if len(g) != 1 || strings.Contains(g[0], "|") {
			t.Fatalf("group %v has more than the word's own stem", g)
		}
	}
}
