package main

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTermRenderer renders each markdown element without colour (the
// "notty" style: no escape sequence at all) and checks what the terminal
// shows.
func TestTermRenderer(t *testing.T) {
	for _, tc := range []struct {
		name, md, want string
		width          int // 0: 40
	}{
		{"emphasis and code lose their marks", "Keep it **fed**, *warm* and `dry`.", "Keep it fed, warm and dry.", 0},
		{"heading", "## Keeping it\n\nFeed it weekly.", "Keeping it\n\nFeed it weekly.", 0},
		{"numbered steps keep their numbers", "3. mix\n4. knead\n5. bake", "3. mix\n4. knead\n5. bake", 0},
		{"bullets, nested under their item", "- flour\n  - rye\n- water", "• flour\n  • rye\n• water", 0},
		{"a loose list keeps its blank lines", "1. mix\n\n2. bake", "1. mix\n\n2. bake", 0},
		{"wrapped at the width, under the item", "- one two three four five six seven eight nine ten",
			"• one two three four\n  five six seven eight\n  nine ten", 22},
		{"link with its address", "See [the site](https://obsidian.md).", "See the site (https://obsidian.md).", 0},
		{"wikilinks stay as written", "See [[Sourdough Starter#Keeping it]].", "See [[Sourdough Starter#Keeping it]].", 0},
		{"quote", "> keep it cool", "│ keep it cool", 0},
		{"code block indented, never wrapped", "```\nfor i := 0; i < 10; i++ { fmt.Println(i) }\n```",
			"  for i := 0; i < 10; i++ { fmt.Println(i) }", 20},
		{"table rows stay rows", "| os | share |\n|---|---|\n| Linux | 12% |", "| os | share |\n|---|---|\n| Linux | 12% |", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			width := tc.width
			if width == 0 {
				width = 40
			}
			got := newTermRenderer("notty", width).Render(tc.md)
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if strings.Contains(got, "\x1b") {
				t.Errorf("escape sequence without colour: %q", got)
			}
		})
	}
}

// TestTermRendererStyles checks the colour style: a style closed inside
// another opens the outer one again, and no line is wider than the width.
func TestTermRendererStyles(t *testing.T) {
	got := newTermRenderer("dark", 80).Render("**bold *both* bold**")
	want := ansiBold + "bold " + "\x1b[3m" + "both" + ansiReset + ansiBold + " bold" + ansiReset
	if got != want {
		t.Errorf("nested emphasis %q, want %q", got, want)
	}
	long := strings.Repeat("a **bold** word and `code` too ", 12)
	for _, l := range strings.Split(newTermRenderer("dark", 30).Render(long), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("line of %d columns: %q", w, l)
		}
	}
}
