package offline

import (
	"strings"
	"testing"
)

// TestCodeOnlyNoteIsQuotedByItsCode: a note whose part read has no prose,
// only a code block (a folder tree), leads with that block as written,
// not with a sentence naming the note; a long block is cut and says so.
func TestCodeOnlyNoteIsQuotedByItsCode(t *testing.T) {
	tree := "```text\n.\n├── 00 - Contribute\n│   └── Templates\n├── 01 - Community\n└── 02 - Expansions\n```\n"
	answer := answerOver(t, map[string]string{
		"meta/Vault Tree Structure.md": "# Vault Tree Structure\n\n%% Made by a script %%\n" + tree,
		"plugins/folder-canvas.md":     "# Folder canvas\n\nDraws a canvas of a folder.\n",
	}, "vault tree structure")
	want := "From [[Vault Tree Structure]]:\n\n" + strings.TrimSuffix(tree, "\n")
	if !strings.HasPrefix(answer, want) {
		t.Errorf("the tree is not quoted:\n%s\nwant prefix:\n%s", answer, want)
	}

	var long strings.Builder
	long.WriteString("# Long listing\n\n```\n")
	for i := 0; i < codeLines+5; i++ {
		long.WriteString("line of the listing\n")
	}
	long.WriteString("```\n")
	c, ok := firstCode(long.String(), "")
	if !ok || len(c.lines) != codeLines || !c.cut || !strings.HasSuffix(c.render(), "(The listing goes on in the note.)") {
		t.Errorf("long listing = %+v, %v", c, ok)
	}
	if _, ok := firstCode("# Empty\n\n```\n\n```\n\nText.\n", ""); ok {
		t.Error("an empty code block is a listing")
	}
}
