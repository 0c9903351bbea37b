package offline

import (
	"strings"
	"testing"
)

func TestQuestionTag(t *testing.T) {
	tests := []struct{ goal, tag string }{
		{"which notes are tagged news", "news"},
		{"which notes are tagged as #book?", "book"},
		{"notes with the tag toProcess", "toProcess"},
		{"list my #LeetCode notes about dynamic programming", "LeetCode"},
		{"what has the tag project/alpha", "project/alpha"},
		{"how do I rename a tag", ""},            // about tags in general
		{"how do I find notes tagged draft", ""}, // a how-to question
		{"what is C# used for", ""},
		{"what's my #1 priority", ""},
		{"notes with tags", ""},
	}
	for _, tt := range tests {
		st := &convState{goal: tt.goal}
		if got := st.questionTag(); got != tt.tag {
			t.Errorf("questionTag(%q) = %q, want %q", tt.goal, got, tt.tag)
		}
	}
}

var tagVault = map[string]string{
	"food/Sourdough.md":   "---\ntags: [recipe]\n---\n# Sourdough\n\nFeed the starter, then bake the bread.\n",
	"food/Pancakes.md":    "---\ntags: [recipe/breakfast]\n---\n# Pancakes\n\nFlour, milk and eggs.\n",
	"food/Soup.md":        "# Soup\n\nA #recipe for leek soup.\n",
	"food/Bread ideas.md": "# Bread ideas\n\nBread with seeds, not tagged at all.\n",
}

// TestTagQuestionListsTheTagsNotes: a question about the notes of a tag
// lists them all (nested tags too), cited, and no note without the tag;
// the question's other words narrow the list; a tag no note has is said
// to be missing.
func TestTagQuestionListsTheTagsNotes(t *testing.T) {
	answer := answerOver(t, tagVault, "which notes are tagged recipe")
	if !strings.HasPrefix(answer, "3 notes have the tag #recipe:\n\n") {
		t.Errorf("answer:\n%s", answer)
	}
	for _, c := range []string{"[[Sourdough]]", "[[Pancakes]]", "[[Soup]]"} {
		if !strings.Contains(answer, "- "+c) {
			t.Errorf("the answer does not list %s:\n%s", c, answer)
		}
	}
	if strings.Contains(answer, "Bread ideas") {
		t.Errorf("a note without the tag is listed:\n%s", answer)
	}
	answer = answerOver(t, tagVault, "my #recipe notes about bread")
	if !strings.HasPrefix(answer, "1 note with the tag #recipe mentions bread:\n\n- [[Sourdough]]: ") || strings.Contains(answer, "Bread ideas") {
		t.Errorf("answer:\n%s", answer)
	}
	answer = answerOver(t, tagVault, "my #recipe notes about gardening")
	if !strings.HasPrefix(answer, "No note with the tag #recipe mentions gardening.") {
		t.Errorf("answer:\n%s", answer)
	}
	answer = answerOver(t, tagVault, "which notes are tagged #gardening")
	if !strings.HasPrefix(answer, "No note has the tag #gardening.") {
		t.Errorf("answer:\n%s", answer)
	}
	// A tag read from the words, which no note has, was a guess: the
	// question is searched.
	answer = answerOver(t, tagVault, "is filtering with tags in bread recipes possible")
	if strings.Contains(answer, "#in") || !strings.Contains(answer, "[[") {
		t.Errorf("a guessed tag no note has was not searched:\n%s", answer)
	}
	answer = answerOver(t, tagVault, "how do I tag a recipe")
	if strings.Contains(answer, "have the tag") {
		t.Errorf("a how-to question is answered by a tag listing:\n%s", answer)
	}
}
