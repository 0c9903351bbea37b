package offline

import (
	"strings"
	"testing"
)

func TestQuestionFolder(t *testing.T) {
	tests := []struct{ goal, folder string }{
		{"what notes are in the Templates folder?", "Templates"},
		{"list the notes in Templates/University", "Templates/University"},
		{"what's in my Daily folder", "Daily"},
		{"files under \"Projects/2026\"", "Projects/2026"},
		{"how do I move notes into a folder", ""},
		{"what is a folder", ""},
		{"notes in the meeting about the budget for the spring campaign", ""}, // a clause, not a folder
	}
	for _, tt := range tests {
		st := &convState{goal: tt.goal}
		if got := st.questionFolder(); got != tt.folder {
			t.Errorf("questionFolder(%q) = %q, want %q", tt.goal, got, tt.folder)
		}
	}
}

var folderVault = map[string]string{
	"Projects/Alpha.md":      "# Alpha\n\nThe first project.\n",
	"Projects/Beta.md":       "# Beta\n\nThe second project.\n",
	"Projects/old/Gamma.md":  "# Gamma\n\nAn old project.\n",
	"Journal/2026-03-01.md":  "# 2026-03-01\n\nA day.\n",
	"Recipes in my notes.md": "# Recipes in my notes\n\nBread, soup and the notes in Projects.\n",
}

// TestFolderQuestionListsTheNotes: a folder's notes are listed with their
// number, subfolders included; a folder no note is in is searched as any
// other question; "how many notes do I have" counts them.
func TestFolderQuestionListsTheNotes(t *testing.T) {
	answer := answerOver(t, folderVault, "what notes are in the Projects folder?")
	if !strings.HasPrefix(answer, "3 notes are in Projects/:\n\n") {
		t.Errorf("answer:\n%s", answer)
	}
	for _, c := range []string{"[[Alpha]]", "[[Beta]]", "[[Gamma]]"} {
		if !strings.Contains(answer, "- "+c) {
			t.Errorf("the answer does not list %s:\n%s", c, answer)
		}
	}
	if strings.Contains(answer, "2026-03-01") || strings.Contains(answer, "Recipes") {
		t.Errorf("a note outside the folder is listed:\n%s", answer)
	}
	answer = answerOver(t, folderVault, "what notes are in the Bread folder?")
	if strings.Contains(answer, "are in Bread/") || !strings.Contains(answer, "[[Recipes in my notes]]") {
		t.Errorf("a folder no note is in was not searched:\n%s", answer)
	}
	answerStartsWith(t, folderVault, "how many notes do I have?", "Your vault has 5 notes in 3 folders. The largest:\n\n- Projects/: 3 notes\n")
}
