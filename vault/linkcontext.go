package vault

import (
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LinkContext is one link from a note to another note with the words
// around it: what a reader of the linking note learns about the target.
// People describe a note in the words of the notes that link to it ("[[Page
// preview]]: hover over a link to see the note"), so a search index can
// file those words under the target.
type LinkContext struct {
	// Target is the link target as written ("Page preview", "folder/Note")
	// for a wikilink or embed, and the vault-relative path for a markdown
	// link (resolved against the linking note's folder).
	Target string
	// Markdown is set for markdown links ([text](note.md)), whose Target
	// is a path.
	Markdown bool
	// Anchor is the link's own text when it says more than the target's
	// name: the alias of [[target|alias]], the text of [text](note.md).
	Anchor string
	// Text is the sentence, list item, table row or heading holding the
	// link, without the link's own text, with markup, link targets and
	// URLs removed, cut to MaxContextWords words around the link.
	Text string
}

// MaxContextWords bounds LinkContext.Text: a long paragraph gives the link
// the words nearest to it.
const MaxContextWords = 12

// LinkScanLimit is how much of a note LinkContexts reads: links past the
// first MiB of a huge note (an exported log) are not worth the time.
const LinkScanLimit = 1 << 20

// LinkContexts returns the links of a note to other notes (wikilinks with
// or without alias, [[x#heading]], embeds, markdown links to .md files) in
// order, with their context. content is the whole file; only its first
// LinkScanLimit bytes are read, frontmatter is skipped, and links inside
// code (fenced or inline), %% comments %% and HTML comments do not count.
// It never fails: text it cannot make sense of yields no links.
func LinkContexts(notePath string, content []byte) []LinkContext {
	if len(content) > LinkScanLimit {
		content = trimPartialRune(content[:LinkScanLimit])
	}
	_, off, _ := splitFrontmatter(content)
	body := string(content[off:])
	if !strings.Contains(body, "[[") && !strings.Contains(body, "](") {
		return nil
	}
	s := linkScanner{notePath: notePath}
	s.scan(body)
	return s.out
}

type linkScanner struct {
	notePath string
	out      []LinkContext
	unit     []string // the lines of the paragraph or list item being gathered
	hasLink  bool     // some line of unit may hold a link
	para     bool     // unit is a paragraph (split into sentences)
}

// add appends a line to the unit being gathered.
func (s *linkScanner) add(line string) {
	s.unit = append(s.unit, line)
	s.hasLink = s.hasLink || strings.Contains(line, "[[") || strings.Contains(line, "](")
}

func (s *linkScanner) scan(body string) {
	var fence string // the opening fence while inside a fenced code block
	inPercent, inHTML := false, false
	for len(body) > 0 {
		line := body
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = ""
		}
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if f := FenceOpening(line); f != "" && !inPercent && !inHTML {
			s.flush()
			fence = f
			continue
		}
		line, inPercent = cutComments(line, "%%", "%%", inPercent)
		line, inHTML = cutComments(line, "<!--", "-->", inHTML)
		trimmed = strings.TrimSpace(line)
		for strings.HasPrefix(trimmed, ">") { // blockquotes and callouts
			trimmed = strings.TrimSpace(trimmed[1:])
		}
		switch {
		case trimmed == "":
			s.flush()
		case trimmed[0] == '#' && isHeadingLine(trimmed):
			s.flush()
			s.add(strings.TrimLeft(trimmed, "#"))
			s.flush()
		case trimmed[0] == '|':
			s.flush()
			s.add(trimmed) // a table row
			s.flush()
		default:
			if item, ok := ListItem(trimmed); ok {
				s.flush()
				s.add(item)
				continue
			}
			if len(s.unit) == 0 {
				s.para = true
			}
			s.add(trimmed)
		}
	}
	s.flush()
}

// FenceOpening returns the fence of a line opening a fenced code block
// (three or more backticks or tildes, indented by at most three spaces),
// or "".
func FenceOpening(line string) string {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return ""
	}
	t := line[indent:]
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 && (c == '~' || !strings.Contains(t[n:], "`")) {
			return t[:n]
		}
	}
	return ""
}

// cutComments removes comment spans (open ... close, possibly continuing
// from an earlier line when inside is set) from line.
func cutComments(line, open, close string, inside bool) (string, bool) {
	if !inside && !strings.Contains(line, open) {
		return line, false
	}
	var b strings.Builder
	for {
		if inside {
			i := strings.Index(line, close)
			if i < 0 {
				return b.String(), true
			}
			line, inside = line[i+len(close):], false
			continue
		}
		i := strings.Index(line, open)
		if i < 0 {
			b.WriteString(line)
			return b.String(), false
		}
		b.WriteString(line[:i])
		b.WriteByte(' ')
		line, inside = line[i+len(open):], true
	}
}

func isHeadingLine(t string) bool {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n <= 6 && (n == len(t) || t[n] == ' ' || t[n] == '\t')
}

// ListItem returns the text of a list item line ("- x", "* x", "+ x",
// "1. x", "2) x", tasks "- [ ] x"), without its marker and leading blanks.
func ListItem(t string) (string, bool) {
	rest := ""
	switch {
	case len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t'):
		rest = t[2:]
	default:
		n := 0
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n == 0 || n+1 >= len(t) || (t[n] != '.' && t[n] != ')') || (t[n+1] != ' ' && t[n+1] != '\t') {
			return "", false
		}
		rest = t[n+2:]
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 3 && rest[0] == '[' && rest[2] == ']' && (len(rest) == 3 || rest[3] == ' ') {
		rest = strings.TrimSpace(rest[3:]) // task checkbox
	}
	return rest, true
}

// renderedLink is a link found in a unit, with the span of its display
// text in the rendered unit.
type renderedLink struct {
	lc         LinkContext
	start, end int
}

// flush renders the gathered unit and records the context of its links.
func (s *linkScanner) flush() {
	defer func() {
		s.unit = s.unit[:0]
		s.para, s.hasLink = false, false
	}()
	if !s.hasLink {
		return
	}
	text, links := s.render(strings.Join(s.unit, " "))
	if len(links) == 0 {
		return
	}
	for _, l := range links {
		from, to := 0, len(text)
		if s.para {
			from, to = sentenceAround(text, l.start, l.end)
			// "... fixed it. [[Sourdough Starter]]": a link standing
			// alone after a sentence is about that sentence.
			if from > 0 && len(strings.Fields(text[from:l.start]))+len(strings.Fields(text[l.end:to])) < 3 {
				from, _ = sentenceAround(text, from-1, from-1)
			}
		}
		l.lc.Text = wordWindow(text[from:to], l.start-from, l.end-from, MaxContextWords)
		// The strings point into the note's text: copies let it go.
		l.lc.Target, l.lc.Anchor, l.lc.Text = strings.Clone(l.lc.Target), strings.Clone(l.lc.Anchor), strings.Clone(l.lc.Text)
		s.out = append(s.out, l.lc)
	}
}

// render turns a unit's markdown into plain text: links become their
// display text, markdown links to URLs their text, bare URLs and code
// markup disappear. It returns the links to notes it found.
func (s *linkScanner) render(raw string) (string, []renderedLink) {
	var b strings.Builder
	var links []renderedLink
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '`':
			n := 0
			for i+n < len(raw) && raw[i+n] == '`' {
				n++
			}
			ticks := raw[i : i+n]
			if j := strings.Index(raw[i+n:], ticks); j >= 0 {
				b.WriteString(raw[i+n : i+n+j]) // code text, no links inside
				i += n + j + n
				continue
			}
			i += n
		case c == '[' || (c == '!' && i+1 < len(raw) && raw[i+1] == '['):
			embed := c == '!'
			at := i
			if embed {
				at++
			}
			if strings.HasPrefix(raw[at:], "[[") {
				end := strings.Index(raw[at+2:], "]]")
				if end < 0 {
					b.WriteString(raw[i : at+2])
					i = at + 2
					continue
				}
				inside := raw[at+2 : at+2+end]
				i = at + 2 + end + 2
				if l, ok := parseWikilink(inside); ok {
					display := l.Alias
					if display == "" && !embed {
						display = path.Base(stripMD(l.Target))
						if l.Heading != "" {
							display += " " + l.Heading
						}
					}
					anchor := ""
					if l.Alias != "" && !strings.EqualFold(l.Alias, path.Base(stripMD(l.Target))) {
						anchor = l.Alias
					}
					start := b.Len()
					b.WriteString(display)
					links = append(links, renderedLink{lc: LinkContext{Target: l.Target, Anchor: anchor}, start: start, end: b.Len()})
				}
				continue
			}
			text, dest, next, ok := markdownLinkAt(raw, at)
			if !ok {
				b.WriteByte(c)
				i++
				continue
			}
			i = next
			inner, innerLinks := s.render(text) // [![badge](img)](url) and the like
			if l, ok := markdownLink(s.notePath, dest, embed); ok {
				start := b.Len()
				b.WriteString(inner)
				anchor := ""
				if strings.TrimSpace(inner) != "" && !strings.EqualFold(strings.TrimSpace(inner), path.Base(stripMD(l.Target))) {
					anchor = strings.TrimSpace(inner)
				}
				links = append(links, renderedLink{lc: LinkContext{Target: l.Target, Markdown: true, Anchor: anchor}, start: start, end: b.Len()})
				continue
			}
			if !embed {
				off := b.Len()
				b.WriteString(inner)
				for _, il := range innerLinks {
					il.start += off
					il.end += off
					links = append(links, il)
				}
			}
		case (c == 'h' || c == 'w') && isURLStart(raw[i:]):
			for i < len(raw) && raw[i] != ' ' && raw[i] != '\t' && raw[i] != ')' && raw[i] != ']' && raw[i] != '>' {
				i++
			}
		case c == '*' || c == '_' || c == '~' || c == '=' || c == '<' || c == '>' || c == '|':
			// Emphasis, highlight, table and HTML punctuation carry no words.
			b.WriteByte(' ')
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), links
}

// isURLStart reports s starting with an http(s) URL or "www.".
func isURLStart(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "www.")
}

// markdownLinkAt parses a markdown link "[text](dest)" starting at raw[at]
// == '['. It returns the text, the destination, the offset after the link
// and whether there was one.
func markdownLinkAt(raw string, at int) (text, dest string, next int, ok bool) {
	depth := 0
	j := at
	for ; j < len(raw); j++ {
		switch raw[j] {
		case '[':
			depth++
		case ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(raw) || j+1 >= len(raw) || raw[j+1] != '(' {
		return "", "", 0, false
	}
	text = raw[at+1 : j]
	k := j + 2
	if k < len(raw) && raw[k] == '<' {
		e := strings.IndexByte(raw[k:], '>')
		if e < 0 {
			return "", "", 0, false
		}
		dest = raw[k+1 : k+e]
		k += e + 1
		if c := strings.IndexByte(raw[k:], ')'); c >= 0 {
			return text, dest, k + c + 1, true
		}
		return "", "", 0, false
	}
	depth = 1
	for e := k; e < len(raw); e++ {
		switch raw[e] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				dest = raw[k:e]
				if sp := strings.IndexAny(dest, " \t"); sp >= 0 {
					dest = dest[:sp] // [t](note.md "title")
				}
				return text, dest, e + 1, true
			}
		}
	}
	return "", "", 0, false
}

// sentenceAround returns the byte span of the sentence of text holding
// [start, end): sentences end at '.', '!' or '?' followed by a space.
func sentenceAround(text string, start, end int) (int, int) {
	from := 0
	for i := start - 1; i > 0; i-- {
		if (text[i] == ' ') && (text[i-1] == '.' || text[i-1] == '!' || text[i-1] == '?') {
			from = i + 1
			break
		}
	}
	to := len(text)
	for i := end; i+1 < len(text); i++ {
		if (text[i] == '.' || text[i] == '!' || text[i] == '?') && text[i+1] == ' ' {
			to = i + 1
			break
		}
	}
	return from, to
}

// wordWindow returns the words of text around [start, end) (the link's
// own display text, left out: it names the target, whose title already has
// those words), at most limit of them, as many before as after when there
// are enough, white space collapsed.
func wordWindow(text string, start, end, limit int) string {
	var before, after []string
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		switch {
		case j <= start:
			before = append(before, text[i:j])
		case i >= end:
			if len(after) == limit {
				i = len(text)
				continue
			}
			after = append(after, text[i:j])
		}
		i = j
	}
	nb := min(len(before), max(limit/2, limit-len(after)))
	na := min(len(after), limit-nb)
	return strings.Join(append(before[len(before)-nb:], after[:na]...), " ")
}

// LinkKey is the key under which a link target is filed: the lower-cased
// last path segment without ".md". A link can only resolve to a note with
// the same NoteKey.
func LinkKey(target string) string {
	t := strings.TrimSpace(strings.ReplaceAll(target, `\`, "/"))
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	return strings.ToLower(strings.TrimSpace(stripMD(t)))
}

// NoteKey is the key of the note at a vault-relative path (see LinkKey).
func NoteKey(notePath string) string { return LinkKey(notePath) }

// ResolveLink picks the note a link of the note at from points to, among
// candidates (the vault-relative paths of the notes whose NoteKey is the
// link's LinkKey), the way Obsidian does: a markdown link names a path; a
// wikilink with folders names the path or its tail ("folder/Note" finds
// "a/folder/Note.md"); a bare name that several notes share prefers the one
// in the linking note's folder, then the one nearest the vault root. A
// link to the note itself resolves to nothing.
func ResolveLink(l LinkContext, from string, candidates []string) (string, bool) {
	if len(candidates) == 0 {
		return "", false
	}
	var to string
	switch t := strings.TrimSpace(strings.ReplaceAll(l.Target, `\`, "/")); {
	case l.Markdown:
		for _, c := range candidates {
			if strings.EqualFold(c, t) {
				to = c
				break
			}
		}
	case strings.Contains(t, "/"):
		if strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
			t = path.Join(path.Dir(from), t)
		}
		want := strings.ToLower(stripMD(strings.TrimPrefix(t, "/")))
		var tails []string
		for _, c := range candidates {
			lc := strings.ToLower(stripMD(c))
			if lc == want {
				tails = []string{c}
				break
			}
			if strings.HasSuffix(lc, "/"+want) {
				tails = append(tails, c)
			}
		}
		to = nearest(tails, "")
	default:
		to = nearest(candidates, path.Dir(from))
	}
	if to == "" || to == from {
		return "", false
	}
	return to, true
}

// nearest picks the path in dir, else the one with the fewest folders,
// then the first in sort order.
func nearest(paths []string, dir string) string {
	if len(paths) == 0 {
		return ""
	}
	if len(paths) == 1 {
		return paths[0]
	}
	for _, p := range paths {
		if dir != "" && path.Dir(p) == dir {
			return p
		}
	}
	ps := append([]string(nil), paths...)
	sort.Slice(ps, func(i, j int) bool {
		di, dj := strings.Count(ps[i], "/"), strings.Count(ps[j], "/")
		if di != dj {
			return di < dj
		}
		return ps[i] < ps[j]
	})
	return ps[0]
}
