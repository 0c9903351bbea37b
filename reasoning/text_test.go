package reasoning

import "testing"

func TestFirstSentence(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"plain", "I found three notes. Next I will read them.", 0, "I found three notes."},
		{"question", "Which note covers Go? Let me check.", 0, "Which note covers Go?"},
		{"collapses whitespace", "  The   search\nreturned\tnothing.  More.", 0, "The search returned nothing."},
		{"decimal", "Version 3.5 is mentioned in two notes. Done.", 0, "Version 3.5 is mentioned in two notes."},
		{"abbreviation", "Tools, e.g. search, helped. Then done.", 0, "Tools, e.g. search, helped."},
		{"no terminator", "Reading the project note", 0, "Reading the project note"},
		{"heading skipped", "## Summary\n\nThe notes agree on the date. Details follow.", 0, "The notes agree on the date."},
		{"heading only", "# Findings", 0, "Findings"},
		{"bold and code", "**Found** the `config.yaml` note. Next.", 0, "Found the config.yaml note."},
		{"links", "See [the plan](plans/q3.md) and [[Meeting notes|the meeting]]. More.", 0, "See the plan and the meeting."},
		{"wikilink", "Read [[Projects/Alpha]] first.", 0, "Read Projects/Alpha first."},
		{"list first", "- Searched for alpha\n- Read two notes", 0, "Searched for alpha"},
		{"paragraph then list", "I checked two notes\n- a\n- b", 0, "I checked two notes"},
		{"code fence dropped", "```go\nfmt.Println(1)\n```\nThe code prints one. Ok.", 0, "The code prints one."},
		{"marker dropped", "<!--AGENT_REASONING:reasoning:1:[]-->Thinking about it. Yes.", 0, "Thinking about it."},
		{"html dropped", "<b>Bold</b> claim here. More.", 0, "Bold claim here."},
		{"cjk", "我找到了三条笔记。然后阅读。", 0, "我找到了三条笔记。"},
		{"snake case kept", "The note_path field was empty. Ok.", 0, "The note_path field was empty."},
		{"capped", "This sentence is considerably longer than the cap allows.", 20, "This sentence is co…"},
		{"empty", "   \n\n ", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FirstSentence(tt.in, tt.n); got != tt.want {
				t.Errorf("FirstSentence(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCleanStep(t *testing.T) {
	if got, want := cleanStep("a\x1b[31m red\x00\nnext\u0085line"), "a[31m red next line"; got != want {
		t.Errorf("cleanStep = %q, want %q", got, want)
	}
}
