package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanSnippet(t *testing.T) {
	for _, c := range []struct {
		in, want string
		max      int
	}{
		{"# **Sourdough Starter** How I made my **starter**.", "Sourdough Starter How I made my starter.", 150},
		{"…the [[**Sourdough Starter**]] the night before: 25 g **starter**…", "…the Sourdough Starter the night before: 25 g starter…", 150},
		{"see [[Crêpes Bretonnes|crêpes]] and [[Postgres Indexing#Partial indexes]]", "see crêpes and Postgres Indexing Partial indexes", 150},
		{"| Flour | 500 g | 100% |\n|---|---|---|\n| **Water** | 375 g |", "Flour · 500 g · 100% · Water · 375 g", 150},
		{"- [ ] call **Lena**\n- [x] done\n> quoted", "call Lena done quoted", 150},
		{"Desktop-only plugins #placeholder/description %% Hub footer: do not edit %%", "Desktop-only plugins #placeholder/description", 150},
		{"…Expansions/Plugins/dynamodb|dynamodb]] and **groups** - [[02 Community Expansions/Themes/Apex…", "…dynamodb and groups Apex…", 150},
		{"read [the **docs**](https://example.com/a%20b) at https://x.y/z?q=%20 now", "read the docs at now", 150},
		{"![[diagram.png]] **plain** text", "plain text", 150},
	} {
		if got := cleanSnippet(c.in, c.max); got != c.want {
			t.Errorf("cleanSnippet(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	long := strings.Repeat("lorem ipsum dolor ", 20) + "**needle** " + strings.Repeat("sit amet ", 20)
	got := cleanSnippet(long, 80)
	if !strings.Contains(got, "needle") || len(strings.Trim(got, "…")) > 80 || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Errorf("window: %q", got)
	}
	cjk := strings.Repeat("红烧肉", 40) + "**肉**"
	if got := cleanSnippet(cjk, 50); !utf8.ValidString(got) || len(strings.Trim(got, "…")) > 50 {
		t.Errorf("cjk: %q", got)
	}
}
