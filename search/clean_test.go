package search

import (
	"strings"
	"testing"
)

func TestDisplayText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"percent comment", "Before %% hidden note %% after", "Before   after"},
		{"multi-line percent comment", "Keep\n%%\nhidden\nlines\n%%\nthis", "Keep\nthis"},
		{"html comment", "a <!-- secret --> b", "a   b"},
		{"html tags keep their text", `<span class="git-footer">Edit <b>this</b></span>`, "Edit  this"},
		{"a callout needs a quote", "[!not a callout] text", "[!not a callout] text"},
		{"a lone angle bracket is text", "if a < b then", "if a < b then"},
		{"autolink is a URL", "see <https://example.com/x> here", "see  here"},
		{"bare URL", "docs at https://example.com/a/b?c=d, then more", "docs at , then more"},
		{"markdown link keeps its text", "read [the guide](https://x.org/g) now", "read the guide now"},
		{"link to a note", "see [notes](../Other%20Note.md)", "see notes"},
		{"image", "![diagram](img/flow.png) caption", "caption"},
		{"badge in a link", "[![build](https://img.shields.io/b.svg)](https://ci) passing", "passing"},
		{"wikilink", "see [[Folder/Page preview]]", "see Page preview"},
		{"wikilink alias", "see [[Page preview|the hover card]]", "see the hover card"},
		{"wikilink heading", "see [[Starter#Feeding]]", "see Starter › Feeding"},
		{"embed", "![[diagram.png]] and ![[Other note]]", "and"},
		{"bold and italics", "**Canvas** is *new* and __big__", "Canvas is new and big"},
		{"snake_case kept", "set max_open_conns here", "set max_open_conns here"},
		{"highlight and strike", "==key== and ~~old~~", "key and old"},
		{"heading", "## Setup #tag", "Setup #tag"},
		{"list and task", "- [ ] buy flour\n- [x] feed starter\n1. first", "buy flour\nfeed starter\nfirst"},
		{"quote and callout", "> [!tip] Remember\n> the rule", "Remember\nthe rule"},
		{"table", "| Name | Role |\n|---|:--:|\n| Ana | garden |", "Name | Role\nAna | garden"},
		{"rule", "above\n---\nbelow", "above\nbelow"},
		{"footnote and block id", "A claim[^1] here ^abc-12", "A claim here"},
		{"code kept", "run `go test ./...` first", "run go test ./... first"},
		{"fenced code kept, fences dropped", "```sh\n<b>echo</b> %% x %%\n```\nafter", "<b>echo</b> %% x %%\nafter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.TrimSpace(displayText(tc.in))
			if got != tc.want {
				t.Errorf("displayText(%q) =\n%q\nwant\n%q", tc.in, got, tc.want)
			}
		})
	}
}

// visibleText is what the index holds: comments and tags out, markdown as
// written otherwise.
func TestVisibleText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a %% b %% c", "a   c"},
		{"x <!-- y\nz --> w", "x \n  w"},
		{"<div align=center>**Title**</div>", " **Title** "},
		{"`%% not a comment %%` and `<b>`", "`%% not a comment %%` and `<b>`"},
		{"```\n%% in code %%\n```", "```\n%% in code %%\n```"},
		{"50% off, 3 < 4", "50% off, 3 < 4"},
	}
	for _, tc := range tests {
		if got := visibleText(tc.in); got != tc.want {
			t.Errorf("visibleText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	body, urls := indexBody("See https://github.com/x/wordcount-dashboard and [docs](https://d.org/p) %% edit me %%")
	if strings.Contains(body, "github") || strings.Contains(body, "edit") || !strings.Contains(body, "docs") {
		t.Errorf("indexed body %q", body)
	}
	if !strings.Contains(urls, "github.com/x/wordcount-dashboard") || !strings.Contains(urls, "https://d.org/p") {
		t.Errorf("urls %q", urls)
	}
}

// Snippets are the best sentences of the best chunk, as a reader sees
// them, with matches in "**" that never nest in the note's own bold.
func TestSnippetsAreClean(t *testing.T) {
	dir := writeVault(t, map[string]string{
		"Canvas.md": joinLines("---", "aliases: [Board]", "---",
			"%% Template: do not edit this section %%",
			`<span class="badge">![GitHub stars](https://img.shields.io/github/stars/x/canvas?style=flat)</span>`,
			"# Canvas",
			"Intro sentence about nothing in particular. **Canvas** lets you lay out notes on a board, see [[Page preview|previews]] and [the docs](https://obsidian.md/canvas).",
			"Another sentence about the weather.",
			"Links: [Repo](https://github.com/x/canvas) | [Copy this note](https://raw.githubusercontent.com/x/canvas.md)"),
	})
	ix := openIndex(t, dir, "")
	res := search(t, ix, Request{Query: "canvas board notes"})
	if len(res.Results) != 1 {
		t.Fatalf("results %v", paths(res))
	}
	s := res.Results[0].Snippet
	for _, bad := range []string{"%%", "Template", "<span", "shields", "https://", "](", "[[", "****", "***"} {
		if strings.Contains(s, bad) {
			t.Errorf("snippet %q holds %q", s, bad)
		}
	}
	for _, want := range []string{"**Canvas** lets you lay out **notes** on a **board**", "previews", "the docs"} {
		if !strings.Contains(s, want) {
			t.Errorf("snippet %q lacks %q", s, want)
		}
	}
}

func TestBestSentences(t *testing.T) {
	text := "First sentence is filler. The starter needs flour and water daily. Unrelated words follow here.\nA list line about flour"
	at := func(word, term string) hit {
		i := strings.Index(text, word)
		return hit{span{i, i + len(word)}, term}
	}
	hits := []hit{at("starter", "starter"), at("flour", "flour")}
	got := bestSentences(text, hits, 80)
	if !strings.HasPrefix(got, "…The **starter** needs **flour**") && !strings.HasPrefix(got, "First") {
		t.Errorf("got %q: want the sentence with both terms", got)
	}
	if !strings.Contains(got, "**starter** needs **flour** and water daily.") {
		t.Errorf("got %q", got)
	}
	if n := len([]rune(got)); n > 90 {
		t.Errorf("snippet of %d runes: %q", n, got)
	}
	// Lines of a list read as separate items.
	got = bestSentences("Shopping\nflour\nwater", []hit{{span{9, 14}, "flour"}}, 80)
	if got != "Shopping · **flour** · water" {
		t.Errorf("list snippet %q", got)
	}
	// A long best sentence is cut around its matches.
	long := strings.Repeat("pad ", 80) + "the key is here " + strings.Repeat("pad ", 80)
	i := strings.Index(long, "key")
	got = bestSentences(long, []hit{{span{i, i + 3}, "key"}}, 60)
	if !strings.Contains(got, "**key**") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Errorf("long sentence snippet %q", got)
	}
}
