package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// DefaultChunkSize is the chunk cap, in runes, used when none is given.
const DefaultChunkSize = 1500

// mdParser is shared: goldmark parsers keep per-parse state in a context, so
// one parser serves concurrent callers.
var mdParser = goldmark.DefaultParser()

// Parse turns the content of the note at path into a Note. It never fails
// and never panics: broken frontmatter is reported in FrontmatterError and
// the body is still parsed.
//
// Line numbers (Heading.Line, Chunk.StartLine) are 1-based lines of the
// whole file, frontmatter included, so they match what an editor shows.
//
// Hash is the hex SHA-256 of content. SHA-256 is in the standard library,
// stable across processes and versions, and hardware-accelerated on current
// amd64/arm64 CPUs (well above 1 GB/s, so hashing a 60 MB vault costs tens of
// milliseconds); a faster non-cryptographic hash would need a new module
// for no measurable gain next to parsing and indexing.
func Parse(path string, content []byte, modTime time.Time, chunkSize int) *Note {
	return parse(path, content, modTime, chunkSize, true)
}

// ParseForIndex is Parse without the chunks (Note.Chunks is nil), which a
// search index does not need.
func ParseForIndex(path string, content []byte, modTime time.Time) *Note {
	return parse(path, content, modTime, 0, false)
}

func parse(path string, content []byte, modTime time.Time, chunkSize int, chunks bool) *Note {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	sum := sha256.Sum256(content)
	n := &Note{
		Path:    path,
		ModTime: modTime,
		Size:    int64(len(content)),
		Hash:    hex.EncodeToString(sum[:]),
	}

	var cut []string
	fm, bodyOff, hasFM := splitFrontmatter(content)
	body := content[bodyOff:]
	if len(body) > MaxBodyBytes {
		body = cutBody(body)
		cut = append(cut, fmt.Sprintf("body: only the first %s of %s is indexed", byteSize(len(body)), byteSize(len(content)-bodyOff)))
	}
	n.Body = cleanText(body)
	bodyLine := 1 + countLineEnds(content[:bodyOff])

	var fmTags []string
	switch {
	case hasFM && len(fm) > MaxFrontmatterBytes:
		n.FrontmatterError = fmt.Sprintf("frontmatter: larger than %s (%s), not read", byteSize(MaxFrontmatterBytes), byteSize(len(fm)))
		cut = append(cut, fmt.Sprintf("frontmatter: %s, over the %s limit, is not read", byteSize(len(fm)), byteSize(MaxFrontmatterBytes)))
	case hasFM:
		props, errMsg := parseFrontmatter([]byte(cleanText(fm)))
		n.Properties = props
		n.FrontmatterError = errMsg
		n.Title = strings.TrimSpace(scalarOrEmpty(props["title"]))
		n.Aliases = dedupe(stringList(firstOf(props, "aliases", "alias"), splitComma), nil)
		if len(n.Aliases) > MaxTags {
			cut = append(cut, fmt.Sprintf("aliases: only the first %d of %d are kept", MaxTags, len(n.Aliases)))
			n.Aliases = n.Aliases[:MaxTags]
		}
		for _, t := range stringList(firstOf(props, "tags", "tag"), splitTags) {
			if t = normalizeTag(t); t != "" {
				fmTags = append(fmTags, t)
			}
		}
	}
	if n.Title == "" {
		n.Title = baseTitle(path)
	}
	n.Date = noteDate(path, n.Properties)

	b := parseBody(path, []byte(n.Body), bodyLine)
	n.Tags = dedupe(append(fmTags, b.tags...), nil)
	if len(n.Tags) > MaxTags || b.tagsCut {
		cut = append(cut, fmt.Sprintf("tags: only the first %d are kept", MaxTags))
		n.Tags = n.Tags[:min(len(n.Tags), MaxTags)]
	}
	if b.linksCut {
		cut = append(cut, fmt.Sprintf("links: only the first %d are kept", MaxLinks))
	}
	if b.headingsCut {
		cut = append(cut, fmt.Sprintf("headings: only the first %d are kept", MaxHeadings))
	}
	n.Headings = b.headings
	n.Links = b.links
	st := scanStructure(n.Body, bodyLine, b.headings)
	n.Tasks, n.Sections, n.Blocks = st.tasks, st.sections, st.blocks
	if st.cut {
		cut = append(cut, fmt.Sprintf("tasks: only the first %d are kept", MaxTasks))
	}
	if chunks {
		n.Chunks = chunk(n.Body, b.sections, bodyLine, chunkSize)
	}
	n.Cut = cut
	return n
}

// ParseProperties returns the frontmatter properties of a note's content
// as Parse reads them (nil when it has none or they do not parse).
func ParseProperties(content []byte) map[string]any {
	fm, _, ok := splitFrontmatter(content)
	if !ok || len(fm) > MaxFrontmatterBytes {
		return nil
	}
	props, _ := parseFrontmatter([]byte(cleanText(fm)))
	return props
}

// cutBody returns the first MaxBodyBytes of body, ending at a line end
// when there is one in the last 64 KiB, else at a character boundary.
func cutBody(body []byte) []byte {
	b := body[:MaxBodyBytes]
	if i := bytes.LastIndexByte(b, '\n'); i >= MaxBodyBytes-64<<10 {
		return b[:i+1]
	}
	return trimPartialRune(b)
}

// cleanText is b as a string the rest of the program can rely on: bytes
// that are not UTF-8 become U+FFFD (the search analyzer would otherwise
// drop the words around them), and old Mac line endings (a lone CR) become
// LF, which is all the markdown parser and the line numbers know.
func cleanText(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	i := strings.IndexByte(s, '\r')
	if i < 0 || !hasLoneCR(s[i:]) {
		return s
	}
	out := []byte(s)
	for j := i; j < len(out); j++ {
		if out[j] == '\r' && (j+1 == len(out) || out[j+1] != '\n') {
			out[j] = '\n'
		}
	}
	return string(out)
}

func hasLoneCR(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' && (i+1 == len(s) || s[i+1] != '\n') {
			return true
		}
	}
	return false
}

// countLineEnds counts LF, CRLF and lone CR line endings.
func countLineEnds(b []byte) int {
	n := 0
	for i, c := range b {
		if c == '\n' || c == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			n++
		}
	}
	return n
}

// byteSize is n in KiB or MiB, as a person reads it.
func byteSize(n int) string {
	if n < 1<<20 {
		return strconv.Itoa((n+1<<10-1)>>10) + " KiB"
	}
	return strings.TrimSuffix(strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64), ".0") + " MiB"
}

func scalarOrEmpty(v any) string {
	switch v.(type) {
	case nil, map[string]any, []any:
		return ""
	}
	return scalarString(v)
}

func firstOf(props map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := props[k]; ok && v != nil {
			return v
		}
	}
	return nil
}

// baseTitle is the file name without its directory and ".md".
func baseTitle(p string) string {
	base := path.Base(strings.ReplaceAll(p, `\`, "/"))
	if hasMDExt(base) {
		base = base[:len(base)-3]
	}
	if base == "." || base == "/" {
		return ""
	}
	return base
}

// dedupe drops empty and repeated strings, keeping the first occurrence.
func dedupe(in []string, seen map[string]bool) []string {
	if seen == nil {
		seen = make(map[string]bool, len(in))
	}
	out := in[:0]
	for _, s := range in {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// bodyInfo is what the markdown structure of a body yields.
type bodyInfo struct {
	headings []Heading
	links    []Link
	tags     []string  // distinct, at most MaxTags
	sections []section // top-level headings, in order, for chunking
	// Set when more than MaxHeadings, MaxLinks or MaxTags were found.
	headingsCut, linksCut, tagsCut bool
}

func (info *bodyInfo) addLink(l Link) {
	if len(info.links) >= MaxLinks {
		info.linksCut = true
		return
	}
	info.links = append(info.links, l)
}

// section is a top-level heading: where its line starts in the body, and
// its level and text for the heading path.
type section struct {
	off   int
	level int
	text  string
}

// parseBody walks goldmark's AST. A panic in the markdown library must not
// take the process down: the note then keeps whatever was collected and is
// chunked by size only.
func parseBody(notePath string, body []byte, bodyLine int) (info bodyInfo) {
	defer func() {
		if r := recover(); r != nil {
			info = bodyInfo{}
		}
	}()
	lines := newLineIndex(body, bodyLine)
	doc := parseMarkdown(body)

	var run span
	inRun := false
	seenTags := map[string]bool{}
	flush := func() {
		if !inRun {
			return
		}
		inRun = false
		links, covered := scanWikilinks(body, run)
		for _, l := range links {
			info.addLink(l)
		}
		scanTags(body, run, covered, func(t string) {
			switch {
			case seenTags[t]:
			case len(info.tags) >= MaxTags:
				info.tagsCut = true
			default:
				seenTags[t] = true
				info.tags = append(info.tags, t)
			}
		})
	}

	_ = ast.Walk(doc, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := node.(type) {
		case *ast.Text:
			seg := x.Segment
			if seg.Stop <= seg.Start || seg.Start < 0 || seg.Stop > len(body) {
				return ast.WalkContinue, nil
			}
			// goldmark splits text at delimiter candidates ('[', '_', ...);
			// contiguous pieces are glued back so "[[a_b]]" and "#a_b"
			// are seen whole.
			if inRun && seg.Start == run.stop {
				run.stop = seg.Stop
			} else {
				flush()
				run, inRun = span{seg.Start, seg.Stop}, true
			}
		case *ast.CodeSpan:
			flush()
			return ast.WalkSkipChildren, nil
		case *ast.Heading:
			flush()
			if len(info.headings) >= MaxHeadings {
				info.headingsCut = true // its text is still scanned
				break
			}
			h := Heading{Level: x.Level, Text: headingText(x, body), Line: lines.line(headingOffset(x, body))}
			info.headings = append(info.headings, h)
			if x.Parent() != nil && x.Parent().Kind() == ast.KindDocument {
				info.sections = append(info.sections, section{off: lineStart(body, headingOffset(x, body)), level: h.Level, text: h.Text})
			}
		case *ast.Link:
			flush()
			if l, ok := markdownLink(notePath, string(x.Destination), false); ok {
				info.addLink(l)
			}
		case *ast.Image:
			flush()
			if l, ok := markdownLink(notePath, string(x.Destination), true); ok {
				info.addLink(l)
			}
			return ast.WalkSkipChildren, nil
		default:
			if node.Type() == ast.TypeBlock {
				flush()
			}
		}
		return ast.WalkContinue, nil
	})
	flush()
	sort.SliceStable(info.sections, func(i, j int) bool { return info.sections[i].off < info.sections[j].off })
	return info
}

// parseMarkdown parses body with goldmark, in time linear in its length
// (see guardMarkdown). Segments of the returned tree are offsets into body.
func parseMarkdown(body []byte) ast.Node {
	return mdParser.Parse(text.NewReader(guardMarkdown(body)))
}

// headingText is the raw text of a heading (markup kept, as Obsidian uses it
// in [[Note#Heading]]); setext headings spanning lines are joined by spaces.
func headingText(h *ast.Heading, body []byte) string {
	lines := h.Lines()
	parts := make([]string, 0, lines.Len())
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		if seg.Start < 0 || seg.Stop > len(body) || seg.Start > seg.Stop {
			continue
		}
		if p := strings.TrimSpace(string(seg.Value(body))); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// headingOffset is a byte offset on the heading's first line.
func headingOffset(h *ast.Heading, body []byte) int {
	if p := h.Pos(); p >= 0 && p <= len(body) {
		return p
	}
	if h.Lines().Len() > 0 {
		if s := h.Lines().At(0).Start; s >= 0 && s <= len(body) {
			return s
		}
	}
	return 0
}

func lineStart(body []byte, off int) int {
	if off > len(body) {
		off = len(body)
	}
	return bytes.LastIndexByte(body[:off], '\n') + 1
}

// lineIndex maps body byte offsets to file line numbers.
type lineIndex struct {
	starts []int // byte offsets where body lines start
	first  int   // file line number of the body's first line
}

func newLineIndex(body []byte, first int) lineIndex {
	starts := []int{0}
	for i, c := range body {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{starts: starts, first: first}
}

func (li lineIndex) line(off int) int {
	i := sort.SearchInts(li.starts, off+1) - 1
	if i < 0 {
		i = 0
	}
	return li.first + i
}
