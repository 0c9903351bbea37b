package vault

import (
	"reflect"
	"strings"
	"testing"
)

func TestLinkContexts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []LinkContext
	}{
		{"list item with plain wikilink", "# Plugins\n\n- [[Page preview]] - hover over a link to see the note\n- [[Other]]\n",
			[]LinkContext{{Target: "Page preview", Text: "- hover over a link to see the note"}, {Target: "Other", Text: ""}}},
		{"alias is the anchor", "See [[Feeding schedule|how often to feed it]] for details.",
			[]LinkContext{{Target: "Feeding schedule", Anchor: "how often to feed it", Text: "See for details."}}},
		{"alias equal to the name is no anchor", "Read [[notes/Bread|bread]] today.",
			[]LinkContext{{Target: "notes/Bread", Text: "Read today."}}},
		{"heading link", "The [[Starter#Feeding]] part matters.",
			[]LinkContext{{Target: "Starter", Text: "The part matters."}}},
		{"sentence of a paragraph", "First sentence here. Then [[A]] is described\nacross two lines! Last one.",
			[]LinkContext{{Target: "A", Text: "Then is described across two lines!"}}},
		{"a link after its sentence", "Feed it twice a day. It was sluggish. [[Starter]]\n",
			[]LinkContext{{Target: "Starter", Text: "It was sluggish."}}},
		{"embed has no display text", "Diagram: ![[Flow]] below.",
			[]LinkContext{{Target: "Flow", Text: "Diagram: below."}}},
		{"markdown link to a note, relative to the folder", "Use [the checklist](../ops/Check%20list.md) before a release.",
			[]LinkContext{{Target: "ops/Check list.md", Markdown: true, Anchor: "the checklist", Text: "Use before a release."}}},
		{"urls and link targets dropped", "See [[Sync]] and [docs](https://example.com/a/b) or https://x.org/y for sync.",
			[]LinkContext{{Target: "Sync", Text: "See and docs or for sync."}}},
		{"badge in a link", "[![build](https://img.shields.io/x.svg)](https://ci.example) [[Build notes]] status",
			[]LinkContext{{Target: "Build notes", Text: "status"}}},
		{"table row", "| Name | About |\n|---|---|\n| [[Dataview\\|DV]] | query your notes |\n",
			[]LinkContext{{Target: "Dataview", Anchor: "DV", Text: "query your notes"}}},
		{"task and numbered items", "1. [[One]] first\n- [x] [[Two]] done\n",
			[]LinkContext{{Target: "One", Text: "first"}, {Target: "Two", Text: "done"}}},
		{"quote and callout", "> [!tip] Try\n> [[Tip note]] saves time\n",
			[]LinkContext{{Target: "Tip note", Text: "[!tip] Try saves time"}}},
		{"code is not a link", "```\n[[Fenced]]\n```\n`[[Inline]]` and [[Real]]\n    ~~~\n",
			[]LinkContext{{Target: "Real", Text: "[[Inline]] and"}}},
		{"comments are not links", "%% [[Hidden]] %% visible [[Shown]]\n%%\n[[Also hidden]]\n%%\n<!-- [[Html]] -->",
			[]LinkContext{{Target: "Shown", Text: "visible"}}},
		{"frontmatter is skipped", "---\nup: \"[[Parent]]\"\n---\nBody [[Child]].",
			[]LinkContext{{Target: "Child", Text: "Body"}}},
		{"same-note heading link is none", "Jump to [[#Setup]].", nil},
		{"url and image links are none", "[site](https://a.b) ![img](pic.png) [file](doc.pdf)", nil},
		{"no links at all", "plain text with [brackets] and (parens)", nil},
		{"unclosed link", "broken [[link and more", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := LinkContexts("notes/Here.md", []byte(tc.in))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("LinkContexts =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestLinkContextWindow(t *testing.T) {
	long := strings.Repeat("word ", 50) + "[[Target]] " + strings.Repeat("after ", 50)
	got := LinkContexts("n.md", []byte(long))
	if len(got) != 1 {
		t.Fatalf("got %+v", got)
	}
	words := strings.Fields(got[0].Text)
	if len(words) != MaxContextWords || !strings.Contains(got[0].Text, "word after") || strings.Contains(got[0].Text, "Target") {
		t.Errorf("window of %d words: %q", len(words), got[0].Text)
	}
	huge := make([]byte, LinkScanLimit+100)
	for i := range huge {
		huge[i] = 'x'
	}
	copy(huge[LinkScanLimit+10:], "[[Late]]")
	if got := LinkContexts("n.md", huge); got != nil {
		t.Errorf("a link past LinkScanLimit was read: %+v", got)
	}
}

func TestResolveLink(t *testing.T) {
	tests := []struct {
		name  string
		l     LinkContext
		from  string
		cands []string
		want  string
	}{
		{"single", LinkContext{Target: "Note"}, "a/x.md", []string{"b/Note.md"}, "b/Note.md"},
		{"case and .md", LinkContext{Target: "note.md"}, "x.md", []string{"Note.md"}, "Note.md"},
		{"same folder first", LinkContext{Target: "Note"}, "b/x.md", []string{"a/Note.md", "b/Note.md", "Note.md"}, "b/Note.md"},
		{"nearest the root", LinkContext{Target: "Note"}, "c/x.md", []string{"a/b/Note.md", "z/Note.md"}, "z/Note.md"},
		{"folder path", LinkContext{Target: "a/b/Note"}, "x.md", []string{"a/b/Note.md", "Note.md"}, "a/b/Note.md"},
		{"path tail", LinkContext{Target: "b/Note"}, "x.md", []string{"a/b/Note.md", "c/Note.md"}, "a/b/Note.md"},
		{"relative wikilink", LinkContext{Target: "../b/Note"}, "a/x.md", []string{"b/Note.md", "a/b/Note.md"}, "b/Note.md"},
		{"folder path that does not exist", LinkContext{Target: "q/Note"}, "x.md", []string{"a/Note.md"}, ""},
		{"markdown path", LinkContext{Target: "a/Note.md", Markdown: true}, "x.md", []string{"a/Note.md", "Note.md"}, "a/Note.md"},
		{"markdown path missing", LinkContext{Target: "b/Note.md", Markdown: true}, "x.md", []string{"a/Note.md"}, ""},
		{"self link", LinkContext{Target: "x"}, "x.md", []string{"x.md"}, ""},
		{"no candidates", LinkContext{Target: "x"}, "y.md", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ResolveLink(tc.l, tc.from, tc.cands)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("ResolveLink = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
	if k := LinkKey(" folder/Sub/Page Preview.MD "); k != "page preview" {
		t.Errorf("LinkKey = %q", k)
	}
	if NoteKey("a/Page Preview.md") != LinkKey("Page preview") {
		t.Error("a note and a link to it have different keys")
	}
}

func FuzzLinkContexts(f *testing.F) {
	for _, s := range []string{"[[a|b]] [c](d.md) ![[e]] `[[f]]`", "```\n[[x]]", "%% [[y", "[![a](b)](c.md)", "[a](<b c.md>)", "[[]]", "[x](", "- [ ] [[t]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range LinkContexts("dir/n.md", []byte(s)) {
			if l.Target == "" {
				t.Fatalf("empty target from %q", s)
			}
			if n := len(strings.Fields(l.Text)); n > MaxContextWords {
				t.Fatalf("%d words from %q", n, s)
			}
		}
	})
}

func TestOSADistance(t *testing.T) {
	for _, tc := range []struct {
		a, b    string
		osa, lv int
	}{
		{"zettlekasten", "zettelkasten", 1, 2},
		{"tempalter", "templater", 1, 2},
		{"ab", "ba", 1, 2},
		{"kitten", "sitting", 3, 3},
		{"café", "cafe", 1, 1},
		{"same", "same", 0, 0},
	} {
		if got := OSADistance(tc.a, tc.b, 5); got != tc.osa {
			t.Errorf("OSADistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.osa)
		}
		if got := EditDistance(tc.a, tc.b, 5); got != tc.lv {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.lv)
		}
	}
	if got := OSADistance("abcdefgh", "hgfedcba", 2); got != 2 {
		t.Errorf("bounded: %d, want the bound 2", got)
	}
}
