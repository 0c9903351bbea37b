package offline

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/internal/truncate"
	"github.com/vault-agent/vault-agent/vault"
)

// Passages: a section of a note read as its author wrote it, in blocks
// (paragraphs, bulleted lists, numbered steps), so that the answer quotes
// the block that answers as it stands: a list stays a list and steps keep
// their numbers and order.

type blockKind int

const (
	paragraphBlock blockKind = iota
	listBlock                // a bulleted list
	stepsBlock               // a numbered list
	tableBlock               // a table: its rows are the items (table.go)
)

// blockItem is a sentence of a paragraph or an item of a list.
type blockItem struct {
	text  string
	depth int // nesting of a list item, 0 at the top
	// links are the notes it links to, by key (vault.LinkKey).
	links []string
	// cells are a table row's cells, as plain text; text is them joined.
	cells []string
	// code is the code block that goes with it: one inside its list item,
	// or right after a sentence or item that introduces it ("run:").
	code *codeListing
	// tail is the item's text after its code block.
	tail string
	// named is set when the item is only a link to a note: its text is
	// the note's name ("- [[American Fuzzy Lop]]").
	named bool
}

// reNamedItem is a list item that is one wikilink and nothing else.
var reNamedItem = regexp.MustCompile(`^!?\[\[[^\]]+\]\][.,;]?$`)

// linkList reports whether the block is a list of links to notes and
// nothing else (an index of notes under a heading: "# Tools").
func (b block) linkList() bool {
	if b.kind != listBlock || len(b.items) == 0 {
		return false
	}
	for _, it := range b.items {
		if !it.named {
			return false
		}
	}
	return true
}

// linkNames are the keys (vault.LinkKey) of the notes a line of markdown
// links to: the targets of its wikilinks, and the text of its markdown
// links (which, to a note of the vault, is most often its name, the URL
// being that of a published copy).
func linkNames(s string) []string {
	var out []string
	for _, m := range reMdLink.FindAllStringSubmatch(s, -1) {
		if t := strings.TrimSpace(m[1]); t != "" && !strings.HasPrefix(m[0], "!") {
			out = append(out, vault.LinkKey(t))
		}
	}
	for _, re := range []*regexp.Regexp{reWikiAlias, reWiki} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			if m[1] != "" {
				out = append(out, vault.LinkKey(m[1]))
			}
		}
	}
	return out
}

// block is one paragraph or list of a section.
type block struct {
	kind    blockKind
	items   []blockItem
	heading string   // the innermost heading it sits under
	pos     int      // order within the chunk
	omitted int      // top-level items of the note's list left out (relevantItems)
	header  []string // a table's header cells
	start   int      // the number of the first of a note's steps, 0 when unknown
}

// text is the block's words, for scoring.
func (b block) text() string {
	parts := make([]string, len(b.items))
	for i, it := range b.items {
		parts[i] = it.text
	}
	return strings.Join(parts, " ")
}

// introduces reports whether the block is a paragraph ending with a colon:
// the sentence that opens the list or steps after it.
func (b block) introduces() bool {
	return b.kind == paragraphBlock && len(b.items) > 0 && introduces(b.items[len(b.items)-1].text)
}

// introduces reports whether a sentence or item opens what follows it: it
// ends with a colon (or a full-width one, as Chinese and Japanese write).
func introduces(text string) bool {
	return strings.HasSuffix(text, ":") || strings.HasSuffix(text, "：")
}

var (
	reCodeLine  = regexp.MustCompile("^`([^`]+)`$")
	reListLine  = regexp.MustCompile(`^(\s*)([-*+]|\d{1,3}[.)])\s+(?:\[[ xX/-]\]\s+)?(.*)$`)
	reCallout   = regexp.MustCompile(`^\[![^\]]+\][+-]?\s*`)
	reQuoteMark = regexp.MustCompile(`^(?:>\s?)+`)
)

// maxItemRunes caps one sentence or list item of a passage.
const maxItemRunes = 400

// parseBlocks splits the markdown of a chunk into blocks. Code blocks,
// embeds, comments, frontmatter and boilerplate lines (see boilerplate)
// are left out; a quote or callout is read as the text it holds; a table
// is a block of rows (table.go). heading is the chunk's heading until its
// first heading line.
func parseBlocks(content, heading string) []block {
	var (
		out    []block
		para   []string
		list   *block
		indent []int // the indentation of each open list level
		blank  bool  // a blank line since the last list item
		table  tableParser
	)
	flushPara := func() {
		if len(para) == 0 {
			return
		}
		b := block{kind: paragraphBlock, heading: heading}
		for _, s := range splitText(strings.Join(para, " ")) {
			if c := cleanInline(s); c != "" {
				b.items = append(b.items, blockItem{text: c, links: linkNames(s)})
			}
		}
		para = nil
		if len(b.items) > 0 {
			out = append(out, b)
		}
	}
	flushList := func() {
		if list != nil && !list.linkList() {
			// A link among items that say something is not one of
			// them: only a list of links alone is one.
			kept := list.items[:0]
			for _, it := range list.items {
				if !it.named {
					kept = append(kept, it)
				}
			}
			list.items = kept
		}
		if list != nil && len(list.items) > 0 {
			out = append(out, *list)
		}
		list, indent, blank = nil, nil, false
	}
	flushTable := func() {
		if b, ok := table.block(heading); ok {
			out = append(out, b)
		}
	}
	flush := func() { flushPara(); flushList(); flushTable() }
	// attach gives a code block to the item it belongs to: the last item
	// of the open list when the block is inside it (indented, or with no
	// blank line before it) or when that item introduces it, else the
	// last sentence of the paragraph just before it when that sentence
	// introduces it. It reports whether it did; a code block that goes
	// with nothing is left out, as code is, and ends what was open.
	attach := func(c codeListing) bool {
		if c.empty() {
			return false
		}
		flushPara()
		flushTable()
		if list != nil && len(list.items) > 0 {
			last := &list.items[len(list.items)-1]
			if last.code == nil && (!blank || c.indent > 0 || introduces(last.text)) {
				last.code = &c
				return true
			}
			flushList()
			return false
		}
		if n := len(out); n > 0 && out[n-1].kind == paragraphBlock && out[n-1].heading == heading && out[n-1].introduces() {
			last := &out[n-1].items[len(out[n-1].items)-1]
			if last.code == nil {
				last.code = &c
				return true
			}
		}
		return false
	}
	proseLines(content, &heading, func(line string) {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, ">") {
			// A quote or callout: its text, without the markers; a
			// callout's title is a line of its own.
			t = strings.TrimSpace(reQuoteMark.ReplaceAllString(t, ""))
			if reCallout.MatchString(t) {
				flush()
				if title := strings.TrimSpace(reCallout.ReplaceAllString(t, "")); title != "" && !boilerplateLine(title) {
					para = append(para, title)
					flushPara()
				}
				return
			}
			line = t
		}
		if t == "" {
			flushPara()
			flushTable()
			blank = list != nil
			return
		}
		if strings.HasPrefix(t, "|") {
			if len(table.lines) == 0 {
				flush()
			}
			table.add(t)
			return
		}
		flushTable()
		if strings.HasPrefix(t, "![") && list != nil {
			// A picture between the steps of a guide (a screenshot of
			// each step) leaves the list going.
			return
		}
		if strings.HasPrefix(t, "|") || strings.HasPrefix(t, "![") || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "%%") ||
			strings.HasPrefix(t, "***") || strings.HasPrefix(t, "___") {
			flush()
			return
		}
		if m := reCodeLine.FindStringSubmatch(t); m != nil && len(para) == 0 {
			// A line that is all code ("`lsof -i :8080`") after what
			// introduces it is that item's code block.
			if attach(codeListing{lines: []string{m[1]}, indent: indentWidth(line)}) {
				return
			}
		}
		if m := reListLine.FindStringSubmatch(line); m != nil {
			flushPara()
			kind := listBlock
			if m[2][0] >= '0' && m[2][0] <= '9' {
				kind = stepsBlock
			}
			width := indentWidth(m[1])
			depth := 0
			for depth < len(indent) && width > indent[depth] {
				depth++
			}
			if list == nil || depth == 0 && list.kind != kind {
				flushList()
				list = &block{kind: kind, heading: heading}
				if kind == stepsBlock {
					// Steps the part read begins in the middle of keep
					// the note's numbers.
					list.start, _ = strconv.Atoi(strings.TrimRight(m[2], ".)"))
				}
			}
			indent = append(indent[:depth], width)
			blank = false
			switch text := strings.TrimSpace(m[3]); {
			case text == "":
			case !boilerplateLine(text):
				if s := cleanInline(text); s != "" {
					list.items = append(list.items, blockItem{text: s, depth: depth, links: linkNames(text)})
				}
			case reNamedItem.MatchString(text):
				// Quoted as the link it is: the answer names the notes.
				list.items = append(list.items, blockItem{text: strings.TrimRight(strings.TrimPrefix(text, "!"), ".,;"), depth: depth, links: linkNames(text), named: true})
			}
			return
		}
		if list != nil && len(list.items) > 0 && (!blank || indentWidth(line) > 0) && !boilerplateLine(t) {
			// The item goes on: a lazy or indented continuation line.
			last := &list.items[len(list.items)-1]
			if last.code != nil {
				// Text after the item's code reads after it.
				last.tail = strings.TrimSpace(truncate.Runes(last.tail+" "+cleanInline(t), maxItemRunes))
				last.links = append(last.links, linkNames(t)...)
				return
			}
			last.text = truncate.Runes(last.text+" "+cleanInline(t), maxItemRunes)
			last.links = append(last.links, linkNames(t)...)
			return
		}
		flushList()
		if boilerplateLine(t) {
			flushPara()
			return
		}
		para = append(para, t)
	}, flush, func(c codeListing) {
		if !attach(c) {
			flush()
		}
	})
	flush()
	for i := range out {
		out[i].pos = i
	}
	return out
}

// boilerplateLine reports whether a line (list marker removed) is not text
// a person would quote: HTML, a badge or image, a bare tag list, a line
// with no words once its links, URLs and code are gone ("[[A]] · [[B]]",
// "Edit In GitHub | Copy this note"), or a metadata line whose value is a
// few words ("Plugin ID: x", "Mobile compatible: Yes"). Unlike the
// sentences of a snippet, a short line of a passage is kept ("Restart.",
// a list's "Key points:"): it is part of what the note says.
func boilerplateLine(t string) bool { return notProse(t, 1, true) }

// indentWidth is the width of leading blanks, a tab counting four.
func indentWidth(s string) int {
	w := 0
	for _, r := range s {
		switch r {
		case ' ':
			w++
		case '\t':
			w += 4
		default:
			return w
		}
	}
	return w
}

// cleanInline is plainText, "" when no letter is left, cut at
// maxItemRunes.
func cleanInline(s string) string {
	s = plainText(s)
	if strings.IndexFunc(s, unicode.IsLetter) < 0 {
		return ""
	}
	return truncate.Runes(s, maxItemRunes)
}

// Passage limits: a paragraph is cut at a sentence past leadRunes; a list
// shows at most leadItems items (steps: stepItems, since a procedure cut
// short misleads), within listRunes.
const (
	leadRunes = 700
	leadItems = 8
	stepItems = 15
	// listRunes bounds the text of the items of a list shown, their code
	// included; an item's code shows at most itemCodeLines lines.
	listRunes     = 1200
	itemCodeLines = 8
)

// renderBlock writes a block as markdown: a paragraph on one line (from
// sentence first, cut at a sentence past leadRunes), a list as "- " items,
// steps numbered in their order. It reports whether it was cut.
func renderBlock(b block, first int) (string, bool) {
	switch b.kind {
	case paragraphBlock:
		var text strings.Builder
		n := 0
		for _, it := range b.items[first:] {
			if n > 0 && n+len([]rune(it.text)) > leadRunes {
				return text.String(), true
			}
			// CJK sentences follow each other without a space.
			if r, _ := utf8.DecodeLastRuneInString(text.String()); text.Len() > 0 && !isCJK(r) && !strings.ContainsRune("。！？", r) {
				text.WriteByte(' ')
			}
			text.WriteString(it.text)
			n += len([]rune(it.text)) + 1
		}
		return text.String(), first > 0
	case tableBlock:
		return renderTable(b)
	default:
		limit := leadItems
		if b.kind == stepsBlock {
			limit = stepItems
		}
		var lines []string
		top, cut, n := 0, false, 0
		for _, it := range b.items {
			if it.depth == 0 {
				top++
			}
			if top > limit || n > 0 && n+len([]rune(it.text)) > listRunes {
				cut = true
				break
			}
			n += len([]rune(it.text))
			marker := "-"
			if b.kind == stepsBlock && it.depth == 0 {
				marker = strconv.Itoa(max(b.start, 1)+top-1) + "."
			}
			head := strings.Repeat("   ", it.depth) + marker + " "
			lines = append(lines, head+it.text)
			pad := strings.Repeat(" ", len(head))
			if it.code != nil {
				// The item's code, indented under it so that it
				// stays part of the item, and cut shorter than a
				// listing quoted alone: it is one item's.
				code := it.code.head(itemCodeLines)
				if n+code.runes <= listRunes {
					n += code.runes
					for _, l := range strings.Split(code.render(), "\n") {
						lines = append(lines, strings.TrimRight(pad+l, " "))
					}
				}
			}
			if it.tail != "" {
				if it.code != nil {
					lines = append(lines, "")
				}
				lines = append(lines, pad+it.tail)
				n += len([]rune(it.tail))
			}
		}
		return strings.Join(lines, "\n"), cut
	}
}
