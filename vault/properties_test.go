package vault

import (
	"strings"
	"testing"
	"time"
)

// TestSetPropertiesKeepsEveryOtherByte sets and removes properties in
// frontmatter written by hand: only the lines of the keys set change.
func TestSetPropertiesKeepsEveryOtherByte(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		props map[string]any
		want  string
	}{
		{"document end marker",
			"---\na: 1\n...\nb: 2\n---\nbody\n", map[string]any{"status": "done"},
			"---\na: 1\nstatus: done\n...\nb: 2\n---\nbody\n"},
		{"comment only",
			"---\n# keep me\n---\nbody\n", map[string]any{"status": "done"},
			"---\n# keep me\nstatus: done\n---\nbody\n"},
		{"untouched values, blank lines and list indentation",
			"---\nemoji: 😀\n\nnotes: |\n  two trailing spaces  \n  end\n\ntags:\n    - a\n    - b\nstatus: draft\n---\n",
			map[string]any{"status": "done"},
			"---\nemoji: 😀\n\nnotes: |\n  two trailing spaces  \n  end\n\ntags:\n    - a\n    - b\nstatus: done\n---\n"},
		{"a value in the middle, with its comment",
			"---\ntitle: 'My note'   # quoted\nstatus: draft # was todo\n# about the date\ncreated: 2026-03-02\n---\n",
			map[string]any{"status": "in progress"},
			"---\ntitle: 'My note'   # quoted\nstatus: in progress # was todo\n# about the date\ncreated: 2026-03-02\n---\n"},
		{"a block list replaced, the next key's comment kept",
			"---\ntags:\n  - old\n  - older\n# next\nstatus: x\n---\n",
			map[string]any{"tags": []any{"new", "😀"}},
			"---\ntags:\n  - new\n  - 😀\n# next\nstatus: x\n---\n"},
		{"a flow list stays a flow list",
			"---\naliases: [a, b]\n---\n", map[string]any{"aliases": []any{"c", "d e"}},
			"---\naliases: [c, d e]\n---\n"},
		{"removed, its comment above kept",
			"---\na: 1\n# about b\nb: |\n  text\n  more\nc: 3\n---\n", map[string]any{"b": nil},
			"---\na: 1\n# about b\nc: 3\n---\n"},
		{"a block value becomes a scalar",
			"---\nsummary: >\n  folded\n  text\nnext: 1\n---\n", map[string]any{"summary": "short"},
			"---\nsummary: short\nnext: 1\n---\n"},
		{"quoted key",
			"---\n\"my key\": 1\nother: 2\n---\n", map[string]any{"my key": float64(2)},
			"---\n\"my key\": 2\nother: 2\n---\n"},
		{"new keys in name order, with an emoji",
			"---\nz: 1\n---\n", map[string]any{"mood": "😀 good", "date": "2026-03-09"},
			"---\nz: 1\ndate: 2026-03-09\nmood: 😀 good\n---\n"},
		{"CRLF",
			"---\r\na: 1\r\nstatus: draft\r\nb: 2\r\n---\r\nbody\r\n", map[string]any{"status": "done", "tags": []any{"x"}},
			"---\r\na: 1\r\nstatus: done\r\nb: 2\r\ntags:\r\n  - x\r\n---\r\nbody\r\n"},
		{"no frontmatter",
			"body\n", map[string]any{"status": "done"},
			"---\nstatus: done\n---\nbody\n"},
		{"empty frontmatter",
			"---\n---\nbody\n", map[string]any{"status": "done"},
			"---\nstatus: done\n---\nbody\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := setProperties(tt.in, tt.props)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			n := Parse("x.md", []byte(got), time.Time{}, DefaultChunkSize)
			if n.FrontmatterError != "" {
				t.Fatalf("the result does not parse: %s", n.FrontmatterError)
			}
			for k, v := range tt.props {
				if v == nil {
					if _, ok := n.Properties[k]; ok {
						t.Errorf("%s is still set", k)
					}
				} else if _, ok := n.Properties[k]; !ok && !strings.Contains(tt.in, "...") {
					t.Errorf("%s is not set: %v", k, n.Properties)
				}
			}
		})
	}
}

func TestSetPropertiesRefusesFlowMapping(t *testing.T) {
	if _, err := setProperties("---\n{a: 1, b: 2}\n---\n", map[string]any{"c": "d"}); err == nil {
		t.Fatal("a flow-style frontmatter was rewritten")
	}
}

// FuzzSetProperties edits arbitrary frontmatter: no panic, and an edit
// made leaves frontmatter that parses with the property set.
func FuzzSetProperties(f *testing.F) {
	for _, s := range []string{
		"---\na: 1\n---\n", "---\n? complex\n: key\nb: 2\n---\n", "---\nbase: &b {x: 1}\nuse:\n  <<: *b\n---\n",
		"---\n\ta: 1\n---\n", "---\na: 1\n...\n---\n", "---\n- list\n---\n", "---\na: |\n  x\n# c\n---\n",
		"---\r\na: 1\r\n---\r\n", "\xEF\xBB\xBF---\nstatus: x\n---\n", "---\nstatus: [a,\n  b]\n---\n",
	} {
		f.Add(s, "status", "done")
	}
	f.Fuzz(func(t *testing.T, note, key, value string) {
		if strings.TrimSpace(key) == "" {
			return
		}
		out, err := setProperties(note, map[string]any{key: value})
		if err != nil {
			return
		}
		if _, _, ok := splitFrontmatter([]byte(out)); !ok {
			t.Fatalf("no frontmatter in %q", out)
		}
	})
}
