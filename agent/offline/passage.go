package offline

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/internal/truncate"
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
)

// blockItem is a sentence of a paragraph or an item of a list.
type blockItem struct {
	text  string
	depth int // nesting of a list item, 0 at the top
}

// block is one paragraph or list of a section.
type block struct {
	kind    blockKind
	items   []blockItem
	heading string // the innermost heading it sits under
	pos     int    // order within the chunk
	omitted int    // top-level items of the note's list left out (relevantItems)
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
	return b.kind == paragraphBlock && len(b.items) > 0 && strings.HasSuffix(b.items[len(b.items)-1].text, ":")
}

var (
	reListLine  = regexp.MustCompile(`^(\s*)([-*+]|\d{1,3}[.)])\s+(?:\[[ xX/-]\]\s+)?(.*)$`)
	reCallout   = regexp.MustCompile(`^\[![^\]]+\][+-]?\s*`)
	reQuoteMark = regexp.MustCompile(`^(?:>\s?)+`)
)

// maxItemRunes caps one sentence or list item of a passage.
const maxItemRunes = 400

// parseBlocks splits the markdown of a chunk into blocks. Code blocks,
// tables, embeds, comments, frontmatter and boilerplate lines (see
// boilerplate) are left out; a quote or callout is read as the text it
// holds. heading is the chunk's heading until its first heading line.
func parseBlocks(content, heading string) []block {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	content = reHTMLComment.ReplaceAllString(content, "\n")
	content = reObsComment.ReplaceAllString(content, "\n")
	lines := strings.Split(content, "\n")
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
				start = i + 1
				break
			}
		}
	}
	var (
		out    []block
		para   []string
		list   *block
		indent []int // the indentation of each open list level
		blank  bool  // a blank line since the last list item
		inCode bool
	)
	flushPara := func() {
		if len(para) == 0 {
			return
		}
		b := block{kind: paragraphBlock, heading: heading}
		for _, s := range splitText(strings.Join(para, " ")) {
			if s = cleanInline(s); s != "" {
				b.items = append(b.items, blockItem{text: s})
			}
		}
		para = nil
		if len(b.items) > 0 {
			out = append(out, b)
		}
	}
	flushList := func() {
		if list != nil && len(list.items) > 0 {
			out = append(out, *list)
		}
		list, indent, blank = nil, nil, false
	}
	flush := func() { flushPara(); flushList() }
	for _, line := range lines[start:] {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inCode = !inCode
			flush()
			continue
		}
		if inCode {
			continue
		}
		if m := reHeadingLine.FindStringSubmatch(t); m != nil {
			flush()
			heading = cleanHeading(m[2])
			continue
		}
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
				continue
			}
			line = t
		}
		if t == "" {
			flushPara()
			blank = list != nil
			continue
		}
		if strings.HasPrefix(t, "|") || strings.HasPrefix(t, "![") || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "%%") ||
			strings.HasPrefix(t, "***") || strings.HasPrefix(t, "___") {
			flush()
			continue
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
			}
			indent = append(indent[:depth], width)
			blank = false
			text := strings.TrimSpace(m[3])
			if text == "" || boilerplateLine(text) {
				continue
			}
			if s := cleanInline(text); s != "" {
				list.items = append(list.items, blockItem{text: s, depth: depth})
			}
			continue
		}
		if list != nil && len(list.items) > 0 && (!blank || indentWidth(line) > 0) && !boilerplateLine(t) {
			// The item goes on: a lazy or indented continuation line.
			last := &list.items[len(list.items)-1]
			last.text = truncate.Runes(last.text+" "+cleanInline(t), maxItemRunes)
			continue
		}
		flushList()
		if boilerplateLine(t) {
			flushPara()
			continue
		}
		para = append(para, t)
	}
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
func boilerplateLine(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" || reHTMLStart.MatchString(t) || strings.HasPrefix(t, "[![") || strings.HasPrefix(t, "![") || reTagOnly.MatchString(t) {
		return true
	}
	rest := reWikiAlias.ReplaceAllString(t, " ")
	rest = reWiki.ReplaceAllString(rest, " ")
	rest = reMdLink.ReplaceAllString(rest, " ")
	rest = reURL.ReplaceAllString(rest, " ")
	rest = reCodeSpan.ReplaceAllString(rest, " ")
	rest = reHTMLTag.ReplaceAllString(rest, " ")
	if strings.IndexFunc(rest, unicode.IsLetter) < 0 {
		return true
	}
	if m := reMetaLine.FindStringSubmatch(t); m != nil && strings.TrimSpace(m[1]) != "" {
		val := reMdLink.ReplaceAllString(reWiki.ReplaceAllString(m[1], " "), " ")
		val = reCodeSpan.ReplaceAllString(reURL.ReplaceAllString(val, " "), " ")
		return len(strings.Fields(val)) <= 2
	}
	return false
}

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

// cleanInline reduces markdown to the text a reader sees: links to their
// text, emphasis, block ids and HTML tags gone, blanks collapsed; "" when
// no letter is left.
func cleanInline(s string) string {
	s = linksToText(s)
	s = reEmphasis.ReplaceAllString(s, "")
	s = reEmphasis1.ReplaceAllString(s, "$1$2$3")
	s = reBlockID.ReplaceAllString(s, "$1")
	s = reHTMLTag.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
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
	// listRunes bounds the text of the items of a list shown.
	listRunes = 1200
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
				marker = strconv.Itoa(top) + "."
			}
			lines = append(lines, strings.Repeat("   ", it.depth)+marker+" "+it.text)
		}
		return strings.Join(lines, "\n"), cut
	}
}
