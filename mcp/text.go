package mcp

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/truncate"
)

// The text of a tool result is what most clients hand to the model, so it
// is written to be read by one and to cost few tokens: one line per item,
// no JSON punctuation, nothing said twice (a title equal to the file name is
// not repeated). The structured content beside it carries the same data as
// JSON for programs.

// A search_notes result stays under searchBudget bytes of text per hit
// (ten hits under 2 KB): snippets get at most snippetBytes, less when long
// paths and headings leave less room, never under minSnippetBytes.
const (
	searchBudget    = 190
	snippetBytes    = 150
	minSnippetBytes = 40
	// snippetLineBytes is what a snippet line costs besides the snippet:
	// indent, newline and the ellipses at both ends.
	snippetLineBytes = len("   \n") + 2*len("…")
)

var (
	reComment    = regexp.MustCompile(`%%.*?%%`)
	reEmbed      = regexp.MustCompile(`!\[\[[^\]]*(\]\]|$)`)
	reWikiLink   = regexp.MustCompile(`\[\[([^\]|]*)(?:\|([^\]]*))?\]\]`)
	reOpenLink   = regexp.MustCompile(`\[\[([^\]|]*)(?:\|([^\]]*))?$`)
	reClosedLink = regexp.MustCompile(`^([^\[\]]*?)\]\]`)
	reMDImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	reMDLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	reURL        = regexp.MustCompile(`\(?\S*(://|%[0-9A-Fa-f]{2}\S*%[0-9A-Fa-f]{2})\S*`)
	// Markup at the start of a line or after the collapsing of lines:
	// headings, quotes, list bullets, task boxes, table rules.
	reBlockMark = regexp.MustCompile(`(^|\s)(#{1,6}|>+|[-*+]\s\[[ xX]\]|[-*+])\s+`)
	reTableRule = regexp.MustCompile(`\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?`)
	reSpaces    = regexp.MustCompile(`\s+`)
	rePipes     = regexp.MustCompile(`\s*\|(\s*\|)*\s*`)
)

// linkText is what a wikilink shows: its alias, else the last part of its
// target, with a heading after a space.
func linkText(target, alias string) string {
	if alias != "" {
		return alias
	}
	target = strings.Replace(target, "#", " ", 1)
	if i := strings.LastIndexByte(target, '/'); i >= 0 {
		target = target[i+1:]
	}
	return strings.TrimSpace(target)
}

// cleanSnippet turns a search snippet (matches wrapped in "**", markdown
// around them, cut mid-word or mid-link at both ends) into plain text of
// at most max bytes, kept around the first match: links become their
// text, comments, URLs, markup and emphasis go, table cells are separated
// by " · ".
func cleanSnippet(s string, max int) string {
	lead := strings.HasPrefix(s, "…")
	s = strings.TrimPrefix(s, "…")
	trail := strings.HasSuffix(s, "…")
	s = strings.TrimSuffix(s, "…")

	// Obsidian comments; one cut by the window is dropped to the end, or,
	// when nothing would be left, from the start.
	s = reComment.ReplaceAllString(s, " ")
	if i := strings.Index(s, "%%"); i >= 0 {
		if strings.TrimSpace(s[:i]) != "" {
			s, trail = s[:i], true
		} else {
			s = s[i+2:]
		}
	}
	s = reEmbed.ReplaceAllString(s, " ")
	link := func(re *regexp.Regexp) func(string) string {
		return func(m string) string {
			sub := re.FindStringSubmatch(m)
			alias := ""
			if len(sub) > 2 {
				alias = sub[2]
			}
			return linkText(sub[1], alias)
		}
	}
	s = reWikiLink.ReplaceAllStringFunc(s, link(reWikiLink))
	s = reOpenLink.ReplaceAllStringFunc(s, link(reOpenLink))
	s = reClosedLink.ReplaceAllStringFunc(s, func(m string) string {
		t := strings.TrimSuffix(m, "]]")
		if i := strings.LastIndexByte(t, '|'); i >= 0 {
			return t[i+1:]
		}
		return linkText(t, "")
	})
	s = reMDImage.ReplaceAllString(s, "$1")
	s = reMDLink.ReplaceAllString(s, "$1")
	s = reURL.ReplaceAllString(s, " ")
	s = reTableRule.ReplaceAllString(s, " ")
	s = reBlockMark.ReplaceAllString(s, "$1")
	s = rePipes.ReplaceAllString(s, " · ")
	s = strings.NewReplacer("==", "", "__", "", "`", "", "[", "", "]", "").Replace(s)
	s = strings.Trim(reSpaces.ReplaceAllString(s, " "), " ·")

	// The window starts a little before the first match; the "**" marks
	// are dropped only after it is chosen.
	if i := strings.Index(s, "**"); i > max/4 {
		j := i - max/4
		for j < i && !utf8.RuneStart(s[j]) {
			j++
		}
		// Start at a word.
		if sp := strings.IndexByte(s[j:i], ' '); sp >= 0 {
			j += sp + 1
		}
		s, lead = s[j:], true
	}
	s = strings.Map(func(r rune) rune {
		if r == '*' || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > max {
		cut := s[:max]
		for len(cut) > 0 && !utf8.RuneStart(s[len(cut)]) {
			cut = cut[:len(cut)-1]
		}
		if sp := strings.LastIndexByte(cut, ' '); sp > len(cut)/2 {
			cut = cut[:sp]
		}
		s, trail = strings.TrimRight(cut, " ,;:·-"), true
	}
	if s == "" {
		return ""
	}
	if lead {
		s = "…" + s
	}
	if trail {
		s += "…"
	}
	return s
}

// label is a note's path, with its title when that differs from the file
// name.
func label(p, title string) string {
	if title == "" || strings.EqualFold(title, strings.TrimSuffix(path.Base(p), ".md")) {
		return p
	}
	return p + " (" + title + ")"
}

// lastHeading is the last part of a heading path "A > B > C".
func lastHeading(h string) string {
	if i := strings.LastIndex(h, " > "); i >= 0 {
		return h[i+3:]
	}
	return h
}

func renderSearch(o SearchOutput) string {
	var b strings.Builder
	switch {
	case len(o.Hits) == 0:
		fmt.Fprintf(&b, "No notes match %q.", o.Query)
		return b.String()
	case o.Total > len(o.Hits):
		fmt.Fprintf(&b, "%d of %d notes", len(o.Hits), o.Total)
	default:
		fmt.Fprintf(&b, "%d notes", len(o.Hits))
	}
	if o.Fuzzy {
		b.WriteString(" (fuzzy matches)")
	}
	if o.Partial {
		b.WriteString(" (matching only some terms)")
	}
	b.WriteString("; read one with read_note {path, chunk}:\n")
	for i, h := range o.Hits {
		fmt.Fprintf(&b, "%d. %s", i+1, label(h.Path, h.Title))
		if hd := lastHeading(h.Heading); hd != "" && !strings.EqualFold(hd, h.Title) {
			fmt.Fprintf(&b, " › %s", hd)
		}
		fmt.Fprintf(&b, " [chunk %d, %s]\n", h.Chunk, strconv.FormatFloat(h.Score, 'f', -1, 64))
		if h.Snippet != "" {
			b.WriteString("   " + h.Snippet + "\n")
		}
		for j, m := range h.Matches {
			if j == maxMatchLines {
				fmt.Fprintf(&b, "   (%d more lines)\n", len(h.Matches)-j)
				break
			}
			fmt.Fprintf(&b, "   L%d: %s\n", m.Line, truncate.Runes(m.Text, matchLineRunes))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// A search result's text shows at most maxMatchLines of the lines its
// operators matched, each cut at matchLineRunes; the structured result has
// them all, whole.
const (
	maxMatchLines  = 3
	matchLineRunes = 120
)

func renderNote(o ReadOutput) string {
	var b strings.Builder
	b.WriteString(label(o.Path, o.Title))
	if o.ChunkCount > 1 {
		fmt.Fprintf(&b, " — chunk %d of %d (0-based)", o.Chunk, o.ChunkCount)
	}
	if o.Heading != "" {
		fmt.Fprintf(&b, " — %s", o.Heading)
	}
	fmt.Fprintf(&b, "\nmodified %s", o.Modified)
	if len(o.Tags) > 0 {
		b.WriteString("; tags #" + strings.Join(o.Tags, " #"))
	}
	if o.NextChunk != nil {
		fmt.Fprintf(&b, "; next: chunk %d", *o.NextChunk)
	}
	if o.FrontmatterError != "" {
		fmt.Fprintf(&b, "\nfrontmatter does not parse: %s", o.FrontmatterError)
	}
	if len(o.Headings) > 0 {
		b.WriteString("\nheadings: " + strings.Join(o.Headings, " | "))
	}
	if len(o.Links) > 0 {
		b.WriteString("\nlinks: " + strings.Join(o.Links, ", "))
	}
	b.WriteString("\n---\n")
	b.WriteString(strings.TrimSpace(o.Content))
	return b.String()
}

// writeHeader writes a list's header, saying when the list shows only the
// first of its total items.
func writeHeader(b *strings.Builder, header string, total, shown int) {
	b.WriteString(header)
	if total > shown {
		fmt.Fprintf(b, " (first %d shown)", shown)
	}
}

func renderList(o ListOutput, header string) string {
	var b strings.Builder
	writeHeader(&b, header, o.Total, len(o.Notes))
	b.WriteString(":")
	for _, n := range o.Notes {
		d := n.Modified
		if n.Date != "" {
			d = n.Date
		}
		fmt.Fprintf(&b, "\n%s  %s", d, label(n.Path, n.Title))
	}
	return b.String()
}

func renderTags(o TagsOutput) string {
	if len(o.Tags) == 0 {
		return "The vault has no tags."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tags (notes per tag)", o.Total)
	if o.Total > len(o.Tags) {
		fmt.Fprintf(&b, ", the %d most used", len(o.Tags))
	}
	b.WriteString(":\n")
	for i, t := range o.Tags {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%s %d", t.Tag, t.Notes)
	}
	return b.String()
}

func renderLinks(o LinksOutput) string {
	var b strings.Builder
	b.WriteString(label(o.Path, o.Title))
	fmt.Fprintf(&b, "\nlinks to (%s):", count(len(o.Outgoing), o.OutgoingTotal))
	for _, l := range o.Outgoing {
		t := l.Target
		if l.Heading != "" {
			t += "#" + l.Heading
		}
		switch {
		case l.Path == "":
			fmt.Fprintf(&b, "\n- %s (unresolved)", t)
		case l.Path == t || l.Path == t+".md":
			fmt.Fprintf(&b, "\n- %s", l.Path)
		default:
			fmt.Fprintf(&b, "\n- %s → %s", t, l.Path)
		}
		if l.Embed {
			b.WriteString(" (embedded)")
		}
	}
	fmt.Fprintf(&b, "\nlinked from (%s):", count(len(o.Backlinks), o.BacklinkTotal))
	for _, l := range o.Backlinks {
		fmt.Fprintf(&b, "\n- %s", label(l.Path, l.Title))
		if l.Count > 1 {
			fmt.Fprintf(&b, " (%d links)", l.Count)
		}
	}
	return b.String()
}

// count is "n", or "the first n of total" when a list was cut.
func count(n, total int) string {
	if total > n {
		return fmt.Sprintf("the first %d of %d", n, total)
	}
	return strconv.Itoa(n)
}

func renderAnswer(o AskOutput) string {
	var b strings.Builder
	b.WriteString(o.Answer)
	if len(o.Citations) > 0 {
		b.WriteString("\n\nCited notes:")
		for _, c := range o.Citations {
			fmt.Fprintf(&b, "\n- %s", label(c.Path, c.Title))
		}
	}
	if o.StopReason != agent.StopFinalAnswer {
		fmt.Fprintf(&b, "\n\n(The run ended early: %s after %d iteration(s); the answer may be incomplete.)", o.StopReason, o.Iterations)
	}
	return b.String()
}
