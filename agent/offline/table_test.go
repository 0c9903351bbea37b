package offline

import (
	"strings"
	"testing"
)

// TestParseTable: a markdown table is a block of rows under its header,
// an escaped pipe stays in its cell, and lines that only look like a table
// (no delimiter row, or no row under it) are left out.
func TestParseTable(t *testing.T) {
	content := "# Plans\n\nThe plans:\n\n| Plan | Price | Notes |\n|:---|---:|---|\n" +
		"| Standard | $4 | one vault |\n| Plus | $8 | [[Vaults\\|ten vaults]] |\n| | | |\n\n" +
		"| not | a table |\n| just | pipes |\n\nAfter.\n"
	blocks := parseBlocks(content, "")
	if len(blocks) != 3 || blocks[1].kind != tableBlock || blocks[2].text() != "After." {
		t.Fatalf("blocks = %+v", blocks)
	}
	tb := blocks[1]
	if strings.Join(tb.header, ",") != "Plan,Price,Notes" || len(tb.items) != 2 {
		t.Fatalf("table = %+v", tb)
	}
	if it := tb.items[1]; it.text != "Plus; $8; ten vaults" || strings.Join(it.cells, ",") != "Plus,$8,ten vaults" || len(it.links) != 1 || it.links[0] != "vaults" {
		t.Errorf("row = %+v", it)
	}
	if got := rowLine(tb, tb.items[0]); got != "Plan: Standard; Price: $4; Notes: one vault" {
		t.Errorf("rowLine = %q", got)
	}
	if got, cut := renderTable(tb); got != "| Plan | Price | Notes |\n| --- | --- | --- |\n| Standard | $4 | one vault |\n| Plus | $8 | ten vaults |" || cut {
		t.Errorf("renderTable = %q, %v", got, cut)
	}
}

// TestAnswerQuotesTheTableRow: an answer held in a table is quoted as a
// table, its header row with the rows that hold the question; a table
// none of whose rows holds the question is not quoted for its header.
func TestAnswerQuotesTheTableRow(t *testing.T) {
	files := map[string]string{
		"kb/Templates.md": "# Templates\n\nTemplates fill a new note from a pattern.\n\n## Variables\n\nA template can use these variables:\n\n" +
			"| Variable | Description |\n|---|---|\n| `{{title}}` | The title of the new note. |\n| `{{date}}` | Today's date, as YYYY-MM-DD. |\n" +
			"| `{{time}}` | The time of day, as HH:mm. |\n| `{{folder}}` | The folder of the new note. |\n| `{{vault}}` | The name of the vault. |\n",
		"kb/Daily notes.md": "# Daily notes\n\nA daily note opens each morning.\n",
	}
	answer := answerOver(t, files, "which template variable gives the time of day")
	if !strings.HasPrefix(answer, "A template can use these variables: [[Templates#Variables]]\n\n| Variable | Description |\n| --- | --- |\n") ||
		!strings.Contains(answer, "| `{{time}}` | The time of day, as HH:mm. |") {
		t.Fatalf("the table row is not quoted with its header:\n%s", answer)
	}
	if strings.Contains(answer, "{{vault}}") || !strings.Contains(answer, "more rows of this table in the note are about other things") {
		t.Errorf("rows about other things are quoted:\n%s", answer)
	}

	// The rows that would hold the question are cut off from the table
	// (no delimiter row above them): only the header says "syntax".
	answer = answerOver(t, map[string]string{
		"kb/Markdown.md": "# Markdown\n\n| Syntax | Description |\n|---|---|\n| `**b**` | Bold |\n| `*i*` | Italic |\n\n" +
			"| `> [!note]` | Callouts |\n| `- [ ]` | Tasks |\n",
		"kb/Callouts.md": "# Callouts\n\nA callout is a quote whose first line names its type, such as [!note].\n",
	}, "callout syntax")
	if !strings.HasPrefix(answer, "A callout is a quote") {
		t.Errorf("a table whose rows do not hold the question leads:\n%s", answer)
	}
}
