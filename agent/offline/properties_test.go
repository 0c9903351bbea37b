package offline

import (
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
)

func TestPropertyQuery(t *testing.T) {
	tests := []struct{ goal, query string }{
		{"which notes have the property rating?", "[rating]"},
		{"notes with the field status set to draft", "[status:draft]"},
		{"notes whose status is draft", "[status:draft]"},
		{"notes where type = lecture", "[type:lecture]"},
		{"notes whose owner is Ann Lee", `[owner:"Ann Lee"]`},
		{"[status:draft OR review] [priority:>2]", "[status:draft OR review] [priority:>2]"},
		{"which notes have the [area] property", "[area]"},
		{"summarize [[Meeting: Q3]]", ""}, // a wikilink
		{"what is [this] about", ""},      // brackets, no property
		{"notes whose title is longer than the others", ""},
		{"how do I add a property", ""},
	}
	for _, tt := range tests {
		st := &convState{goal: tt.goal, tools: true, offered: map[string]bool{agent.ToolNotesByProperty: true}}
		if got := st.propertyQuery(); got != tt.query {
			t.Errorf("propertyQuery(%q) = %q, want %q", tt.goal, got, tt.query)
		}
	}
}

var propertyVault = map[string]string{
	"Draft one.md":    "---\nstatus: draft\nrating: 3\n---\n# Draft one\n\nA first draft.\n",
	"Draft two.md":    "---\nstatus: draft\nrating: 5\n---\n# Draft two\n\nAnother draft.\n",
	"Published.md":    "---\nstatus: published\n---\n# Published\n\nOut in the world.\n",
	"Python links.md": "# Python links\n\nLinks to Python docs: the tutorial and the library reference.\n",
}

// TestPropertyQuestionListsTheNotes: a question about notes by a property
// lists them, with their values when they differ; one that names no
// property any note has is searched as any other question.
func TestPropertyQuestionListsTheNotes(t *testing.T) {
	answerStartsWith(t, propertyVault, "notes whose status is draft", "2 notes match [status:draft]:\n\n- [[Draft one]]\n- [[Draft two]]\n")
	answerStartsWith(t, propertyVault, "which notes have the property rating", "2 notes match [rating]:\n\n- [[Draft one]] (rating: 3)\n- [[Draft two]] (rating: 5)\n")
	answer := answerOver(t, propertyVault, "notes whose links is python docs")
	if strings.Contains(answer, "match [") || !strings.Contains(answer, "[[Python links]]") {
		t.Errorf("a question naming no property of the vault was not searched:\n%s", answer)
	}
}
