package offline

import (
	"regexp"
	"strings"
)

// Tables: a markdown table is a passage like a list, its rows the items.
// The answer to "which ... costs how much" or "what does {{date}} do" is
// often a row of a table; it is quoted with the table's header row, so the
// row's cells keep their meaning.

// reTableRule matches the cells of a table's delimiter row ("---", ":-:").
var reTableRule = regexp.MustCompile(`^:?-+:?$`)

// tableCells splits a table line into its cells, trimmed: "| a | b |" and
// "a | b" give [a b]. An escaped pipe (\|) stays in its cell.
func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cell.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// isTableRule reports whether cells are those of a delimiter row.
func isTableRule(cells []string) bool {
	for _, c := range cells {
		if !reTableRule.MatchString(strings.ReplaceAll(c, " ", "")) {
			return false
		}
	}
	return len(cells) > 0
}

// tableParser gathers the lines of one table: its header row, then its
// delimiter row, then its rows. Lines that do not make a table (a header
// without a delimiter row under it) are dropped, as before tables were
// read at all.
type tableParser struct {
	lines [][]string
}

// add takes the next line of the table.
func (tp *tableParser) add(line string) { tp.lines = append(tp.lines, tableCells(line)) }

// block is the table read so far, ok false when it is no table or has no
// row with words.
func (tp *tableParser) block(heading string) (block, bool) {
	defer func() { tp.lines = nil }()
	if len(tp.lines) < 3 || !isTableRule(tp.lines[1]) {
		return block{}, false
	}
	b := block{kind: tableBlock, heading: heading}
	for _, c := range tp.lines[0] {
		b.header = append(b.header, plainText(c))
	}
	for _, row := range tp.lines[2:] {
		it := blockItem{}
		var words []string
		for _, c := range row {
			s := plainText(c)
			it.cells = append(it.cells, s)
			if s != "" {
				words = append(words, s)
			}
			it.links = append(it.links, linkNames(c)...)
		}
		if it.text = cleanInline(strings.Join(words, "; ")); it.text != "" {
			b.items = append(b.items, it)
		}
	}
	return b, len(b.items) > 0
}

// headerText is the words of a table's header row.
func (b block) headerText() string { return strings.Join(b.header, " ") }

// renderTable writes a table as markdown: the header row, the delimiter
// row and at most leadItems rows, within listRunes. It reports whether it
// was cut.
func renderTable(b block) (string, bool) {
	width := len(b.header)
	for _, it := range b.items {
		width = max(width, len(it.cells))
	}
	row := func(cells []string) string {
		out := make([]string, width)
		for i := range out {
			if i < len(cells) {
				out[i] = strings.ReplaceAll(cells[i], "|", `\|`)
			}
		}
		return "| " + strings.Join(out, " | ") + " |"
	}
	lines := []string{row(b.header), "|" + strings.Repeat(" --- |", width)}
	n := 0
	for i, it := range b.items {
		if i == leadItems || n > 0 && n+len([]rune(it.text)) > listRunes {
			return strings.Join(lines, "\n"), true
		}
		n += len([]rune(it.text))
		lines = append(lines, row(it.cells))
	}
	return strings.Join(lines, "\n"), false
}

// rowLine is a table row as one line, each cell after its column's
// header ("Plan: Standard; Price: $4"), for a supporting point.
func rowLine(b block, it blockItem) string {
	var parts []string
	for i, c := range it.cells {
		switch {
		case c == "":
		case i < len(b.header) && b.header[i] != "":
			parts = append(parts, b.header[i]+": "+c)
		default:
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "; ")
}

// attributeAsked reports whether a table answers the question, as far as
// its kind says: a table of a note's attributes (a label and its value
// under "... | Value": "Level | 3", "Range | 60 ft.") answers a question
// that names one of its labels ("what level is the spell shield"), not one
// that asks what the note is or does: its rows hold the note's name, not
// an answer. Any other table may answer (a table of CSS variables is what
// the note Status bar says). names is the note's name and folders, as
// stems.
func attributeAsked(b block, names map[string]bool, rel relevance) bool {
	if len(b.header) != 2 || !strings.EqualFold(b.header[1], "value") && !strings.EqualFold(b.header[1], "values") {
		return true
	}
	for _, it := range b.items {
		if len(it.cells) != 2 {
			return true
		}
	}
	for _, it := range b.items {
		label := stemSet(it.cells[0])
		for s := range names {
			delete(label, s)
		}
		if rel.count(label) > 0 {
			return true
		}
	}
	return false
}
