package search

import (
	"strings"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/vault"
)

// Cleaning note text. A note's markdown holds text nobody reads: %%
// comments %% and HTML comments (Obsidian hides both; templates leave
// boilerplate in them), HTML tags and their attributes, URLs, image and
// badge markup, link targets. Indexed, that text makes every note made from
// one template look alike; shown in a snippet, it is noise. visibleText
// keeps what a reader of the note sees, for the index; displayText goes
// further and renders the markdown inline syntax as plain text, for
// snippets.

// visibleText returns body without comments and HTML tags; fenced code
// and inline code are kept as written. Text without '%' or '<' is returned
// as is.
func visibleText(body string) string {
	if !strings.Contains(body, "%%") && !strings.Contains(body, "<") {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	var fence string
	inPercent, inHTML := false, false
	for len(body) > 0 {
		line, rest, nl := cutLine(body)
		body = rest
		if fence != "" {
			b.WriteString(line)
			b.WriteString(nl)
			if isFenceClose(line, fence) {
				fence = ""
			}
			continue
		}
		if !inPercent && !inHTML {
			if f := vault.FenceOpening(line); f != "" {
				fence = f
				b.WriteString(line)
				b.WriteString(nl)
				continue
			}
		}
		line, inPercent, inHTML = stripHiddenLine(line, inPercent, inHTML)
		b.WriteString(line)
		b.WriteString(nl)
	}
	return b.String()
}

// cutLine splits s after its first line; nl is the line ending ("" at the
// end of s).
func cutLine(s string) (line, rest, nl string) {
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s, "", ""
	}
	return s[:i], s[i+1:], "\n"
}

func isFenceClose(line, fence string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// stripHiddenLine removes from one line the comments (possibly continued
// from earlier lines, as the in* flags say) and HTML tags, leaving inline
// code alone; each removed piece becomes a space so words stay apart.
func stripHiddenLine(line string, inPercent, inHTML bool) (string, bool, bool) {
	if !inPercent && !inHTML && !strings.Contains(line, "%%") && !strings.Contains(line, "<") {
		return line, false, false
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		switch {
		case inPercent:
			j := strings.Index(line[i:], "%%")
			if j < 0 {
				return b.String(), true, false
			}
			i += j + 2
			inPercent = false
			b.WriteByte(' ')
		case inHTML:
			j := strings.Index(line[i:], "-->")
			if j < 0 {
				return b.String(), false, true
			}
			i += j + 3
			inHTML = false
			b.WriteByte(' ')
		case line[i] == '`':
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			if j := strings.Index(line[i+n:], line[i:i+n]); j >= 0 {
				b.WriteString(line[i : i+n+j+n])
				i += n + j + n
			} else {
				b.WriteString(line[i : i+n])
				i += n
			}
		case strings.HasPrefix(line[i:], "%%"):
			inPercent = true
			i += 2
		case strings.HasPrefix(line[i:], "<!--"):
			inHTML = true
			i += 4
		case line[i] == '<':
			if end := htmlTagEnd(line, i); end > 0 {
				b.WriteByte(' ')
				i = end
				continue
			}
			b.WriteByte('<')
			i++
		default:
			j := strings.IndexAny(line[i:], "`%<")
			if j < 0 {
				b.WriteString(line[i:])
				i = len(line)
			} else if j == 0 {
				b.WriteByte(line[i]) // a lone '%'
				i++
			} else {
				b.WriteString(line[i : i+j])
				i += j
			}
		}
	}
	return b.String(), inPercent, inHTML
}

// htmlTagEnd returns the offset after the HTML tag starting at s[i] == '<'
// ("<span class=x>", "</div>", "<br/>"), or 0 when it is no tag ("a < b",
// an autolink "<https://...>").
func htmlTagEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '/' {
		j++
	}
	start := j
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] == '-') {
		j++
	}
	if j == start || !(s[start] >= 'a' && s[start] <= 'z' || s[start] >= 'A' && s[start] <= 'Z') {
		return 0
	}
	if j < len(s) && s[j] == ':' {
		return 0 // a URL or "<mailto:...>"
	}
	if j >= len(s) || (s[j] != ' ' && s[j] != '\t' && s[j] != '/' && s[j] != '>') {
		return 0
	}
	end := strings.IndexByte(s[j:], '>')
	if end < 0 {
		return 0
	}
	return j + end + 1
}

// indexBody is the body as indexed: visible text without its URLs, and the
// URLs (see splitURLs).
func indexBody(body string) (text, urls string) {
	return splitURLs(visibleText(body))
}

// displayText renders a chunk of markdown as the plain text a reader sees,
// for snippets: no comments, HTML, URLs, images or badges; links become
// their text; emphasis, heading, list, quote and table markup go; lines
// stay lines.
func displayText(s string) string {
	s = visibleText(s)
	var b strings.Builder
	b.Grow(len(s))
	var fence string
	for len(s) > 0 {
		line, rest, nl := cutLine(s)
		s = rest
		if fence != "" {
			if isFenceClose(line, fence) {
				fence = ""
				continue
			}
			b.WriteString(strings.TrimRight(line, " \t\r"))
			b.WriteString(nl)
			continue
		}
		if f := vault.FenceOpening(line); f != "" {
			fence = f
			continue
		}
		if t := displayLine(line); t != "" {
			b.WriteString(t)
			b.WriteString(nl)
		}
	}
	return b.String()
}

// displayLine renders one line of markdown outside code blocks.
func displayLine(line string) string {
	t := strings.TrimSpace(strings.TrimRight(line, "\r"))
	quoted := false
	for strings.HasPrefix(t, ">") { // quotes and callouts
		t = strings.TrimSpace(t[1:])
		quoted = true
	}
	if quoted && strings.HasPrefix(t, "[!") { // callout type: "[!note]- Title"
		if j := strings.IndexByte(t, ']'); j > 0 {
			t = strings.TrimLeft(strings.TrimSpace(t[j+1:]), "+-")
			t = strings.TrimSpace(t)
		}
	}
	if strings.HasPrefix(t, "#") {
		if h := strings.TrimLeft(t, "#"); len(t)-len(h) <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t') {
			t = strings.TrimSpace(h)
		}
	}
	if item, ok := vault.ListItem(t); ok {
		t = item
	}
	if strings.HasPrefix(t, "|") || strings.Count(t, "|") >= 2 {
		if isTableRule(t) {
			return ""
		}
		t = strings.Trim(t, "| ")
	}
	if isRule(t) {
		return ""
	}
	return strings.TrimSpace(renderInline(t))
}

// isTableRule reports a table's header rule, "|---|:--:|".
func isTableRule(t string) bool {
	return strings.Trim(t, "|-: \t") == "" && strings.Contains(t, "-")
}

// isRule reports a thematic break ("---", "***", "___").
func isRule(t string) bool {
	if len(t) < 3 {
		return false
	}
	return strings.Trim(t, "-* _") == "" && (strings.Count(t, "-") >= 3 || strings.Count(t, "*") >= 3 || strings.Count(t, "_") >= 3)
}

// renderInline renders inline markdown: links become their text, images,
// embeds, badges, URLs, footnote marks and block ids go, and emphasis,
// highlight and strike markers are dropped (snippets mark matches with
// "**", which must never nest in a note's own bold).
func renderInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			if j := strings.Index(s[i+n:], s[i:i+n]); j >= 0 {
				b.WriteString(strings.TrimSpace(s[i+n : i+n+j]))
				i += n + j + n
				continue
			}
			i += n
		case c == '!' && strings.HasPrefix(s[i:], "![["):
			end := strings.Index(s[i+3:], "]]")
			if end < 0 {
				i += 3
				continue
			}
			i += 3 + end + 2 // an embed shows the embedded thing, not words
		case c == '[' && strings.HasPrefix(s[i:], "[["):
			end := strings.Index(s[i+2:], "]]")
			if end < 0 {
				b.WriteString("[[")
				i += 2
				continue
			}
			inside := s[i+2 : i+2+end]
			i += 2 + end + 2
			target, alias, hasAlias := strings.Cut(inside, "|")
			if hasAlias && strings.TrimSpace(alias) != "" {
				b.WriteString(strings.TrimSpace(alias))
				continue
			}
			target, heading, _ := strings.Cut(strings.TrimSuffix(target, `\`), "#")
			if k := strings.LastIndexByte(target, '/'); k >= 0 {
				target = target[k+1:]
			}
			target = strings.TrimSpace(strings.TrimSuffix(target, ".md"))
			switch {
			case target != "" && heading != "":
				b.WriteString(target + " › " + strings.TrimSpace(heading))
			case target != "":
				b.WriteString(target)
			default:
				b.WriteString(strings.TrimSpace(heading))
			}
		case c == '[' && strings.HasPrefix(s[i:], "[^"):
			if j := strings.IndexByte(s[i:], ']'); j > 0 {
				i += j + 1 // a footnote mark
				continue
			}
			b.WriteByte(c)
			i++
		case c == '[' || c == '!' && i+1 < len(s) && s[i+1] == '[':
			at := i
			if c == '!' {
				at++
			}
			text, next, ok := mdLink(s, at)
			if !ok {
				b.WriteByte(c)
				i++
				continue
			}
			i = next
			if c == '!' {
				continue // an image or a badge
			}
			b.WriteString(renderInline(text))
		case (c == 'h' || c == 'w') && (i == 0 || !isWordByte(s[i-1])) && isURLPrefix(s[i:]):
			i = urlEnd(s, i)
		case c == '<' && isURLPrefix(s[i+1:]):
			i = urlEnd(s, i+1) // an autolink
			if i < len(s) && s[i] == '>' {
				i++
			}
		case c == '*' || (c == '~' || c == '=') && i+1 < len(s) && s[i+1] == c:
			for i < len(s) && s[i] == c {
				i++
			}
		case c == '_':
			n := 0
			for i+n < len(s) && s[i+n] == '_' {
				n++
			}
			if i > 0 && isAlnumByte(s[i-1]) && i+n < len(s) && isAlnumByte(s[i+n]) {
				b.WriteString(s[i : i+n]) // inside a word: snake_case
			}
			i += n // else emphasis
		case c == '^' && (i == 0 || s[i-1] == ' ') && isBlockID(s[i+1:]):
			i = len(s)
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

func isAlnumByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}

// isBlockID reports a block id at the end of a line ("^abc-123").
func isBlockID(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// mdLink parses "[text](dest)" at s[at] == '['; it returns the text and
// the offset after the link.
func mdLink(s string, at int) (text string, next int, ok bool) {
	depth := 0
	j := at
	for ; j < len(s); j++ {
		if s[j] == '[' {
			depth++
		} else if s[j] == ']' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if j+1 >= len(s) || s[j+1] != '(' {
		return "", 0, false
	}
	depth = 0
	for k := j + 1; k < len(s); k++ {
		switch s[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[at+1 : j], k + 1, true
			}
		}
	}
	return "", 0, false
}
