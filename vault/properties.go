package vault

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// setProperties sets props in the note's frontmatter, creating the block
// when there is none. It edits the YAML text, not a re-encoding of it: the
// frontmatter is parsed only to find where each top-level key's lines are,
// and only the lines of the keys set change. A key set keeps its place,
// the text of its key and the comment on its line (and a flow list stays a
// flow list); a key removed loses its lines only; new keys go after the
// last key, in name order. Every other byte (comments, blank lines,
// quoting, indentation, values the YAML library would write otherwise) is
// kept as written.
func setProperties(before string, props map[string]any) (string, error) {
	if len(props) == 0 {
		return "", fmt.Errorf("%w: no properties given", ErrEdit)
	}
	keys := sortedKeys(props)
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			return "", fmt.Errorf("%w: a property name is empty", ErrEdit)
		}
	}
	bom, rest := bomless(before)
	eol := lineEnding(rest)
	fm, bodyOff, ok := splitFrontmatter([]byte(rest))
	if !ok {
		block, err := newEntries(keys, props, 2, eol)
		if err != nil {
			return "", err
		}
		if block == "" {
			return before, nil // only removals, and nothing to remove
		}
		return bom + "---" + eol + block + "---" + eol + rest, nil
	}
	_, start := lineAt([]byte(rest), 0)
	var doc yaml.Node
	if err := decodeNode(fm, &doc); err != nil {
		return "", fmt.Errorf("%w: the frontmatter is not valid YAML (%v); fix it with %s", ErrEdit, err, EditReplace)
	}
	var m *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		m = doc.Content[0]
		switch {
		case m.Kind != yaml.MappingNode:
			return "", fmt.Errorf("%w: the frontmatter is not a list of key: value pairs", ErrEdit)
		case m.Style&yaml.FlowStyle != 0:
			return "", fmt.Errorf("%w: the frontmatter is written as one {key: value, ...} mapping; change it with %s", ErrEdit, EditReplace)
		}
	}
	lines := splitLines(string(fm))
	entries := entrySpans(m, lines)
	indent := yamlIndent(fm)

	type change struct {
		from, to int // lines replaced
		text     string
	}
	var changes []change
	var added []string
	for _, k := range keys {
		at := -1
		for i, e := range entries {
			if e.key.Value == k {
				at = i
				break
			}
		}
		v := props[k]
		switch {
		case at < 0 && v == nil:
		case at < 0:
			added = append(added, k)
		case v == nil:
			changes = append(changes, change{entries[at].from, entries[at].to, ""})
		default:
			text, err := replaceEntry(entries[at], lines, k, v, indent, eol)
			if err != nil {
				return "", err
			}
			changes = append(changes, change{entries[at].from, entries[at].to, text})
		}
	}
	if len(added) > 0 {
		text, err := newEntries(added, props, indent, eol)
		if err != nil {
			return "", err
		}
		at := len(lines)
		if len(entries) > 0 {
			at = entries[len(entries)-1].to
		} else if i := docEnd(lines, 0); i >= 0 {
			at = i
		}
		if at > 0 && !strings.HasSuffix(lines[at-1], "\n") && !strings.HasSuffix(lines[at-1], "\r") {
			lines[at-1] += eol
		}
		changes = append(changes, change{at, at, text})
	}
	// Apply from the last lines up, so earlier line numbers stay right.
	for i := 1; i < len(changes); i++ {
		for j := i; j > 0 && changes[j].from > changes[j-1].from; j-- {
			changes[j], changes[j-1] = changes[j-1], changes[j]
		}
	}
	for _, c := range changes {
		lines = append(lines[:c.from], append([]string{c.text}, lines[c.to:]...)...)
	}
	out := strings.Join(lines, "")
	return bom + rest[:start] + out + rest[start+len(fm):bodyOff] + rest[bodyOff:], nil
}

// entry is where one top-level key of the frontmatter is written: its
// lines [from, to), the comments and blank lines after its value (which
// belong to what follows) left out.
type entry struct {
	key, value *yaml.Node
	from, to   int
}

// entrySpans finds the lines of each top-level key of the mapping m (nil
// for a frontmatter without keys).
func entrySpans(m *yaml.Node, lines []string) []entry {
	if m == nil {
		return nil
	}
	var out []entry
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		e := entry{key: k, value: m.Content[i+1], from: k.Line - 1}
		if i+2 < len(m.Content) {
			e.to = m.Content[i+2].Line - 1
		} else if e.to = docEnd(lines, e.from+1); e.to < 0 {
			e.to = len(lines)
		}
		// Trailing blank lines and comments no deeper than the key are the
		// next key's (or the block's end).
		for e.to > e.from+1 {
			l := strings.TrimRight(lines[e.to-1], "\r\n")
			t := strings.TrimLeft(l, " \t")
			if t != "" && !(strings.HasPrefix(t, "#") && len(l)-len(t) <= k.Column-1) {
				break
			}
			e.to--
		}
		e.from = min(max(e.from, 0), len(lines))
		e.to = min(max(e.to, e.from), len(lines))
		out = append(out, e)
	}
	return out
}

// docEnd returns the first line from from on that ends the YAML document
// ("..." or "---"), or -1.
func docEnd(lines []string, from int) int {
	for i := from; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r\n")
		if l == "..." || l == "---" {
			return i
		}
	}
	return -1
}

// replaceEntry writes the entry e with the value v: the key as written,
// its line comment, then v encoded as YAML.
func replaceEntry(e entry, lines []string, k string, v any, indent int, eol string) (string, error) {
	val, err := valueNode(v)
	if err != nil {
		return "", fmt.Errorf("%w: property %q: %v", ErrEdit, k, err)
	}
	if val.Kind == yaml.SequenceNode && e.value.Kind == yaml.SequenceNode && e.value.Style&yaml.FlowStyle != 0 {
		val.Style = yaml.FlowStyle
	}
	first, colon := "", -1
	if e.from < e.to {
		first = strings.TrimRight(lines[e.from], "\r\n")
		colon = keyEnd(first, e.key)
	}
	if colon < 0 {
		// A key written in a form this does not follow (a "? " complex
		// key): write the entry anew.
		return newEntries([]string{k}, map[string]any{k: v}, indent, eol)
	}
	body, err := encodeValue(val, indent)
	if err != nil {
		return "", fmt.Errorf("%w: property %q: %v", ErrEdit, k, err)
	}
	comment := e.key.LineComment
	if e.value.Line == e.key.Line && e.value.LineComment != "" {
		comment = e.value.LineComment
	}
	head, tail, _ := strings.Cut(body, "\n")
	text := first[:colon] + head
	if comment != "" {
		text += " " + comment
	}
	text += "\n" + tail
	return withEnding(text, eol), nil
}

// keyEnd returns the offset just past the ':' that ends the key k in line,
// or -1 when the key is not written there as a plain or quoted scalar.
func keyEnd(line string, k *yaml.Node) int {
	i := byteColumn(line, k.Column)
	if i < 0 || i >= len(line) {
		return -1
	}
	switch line[i] {
	case '\'':
		for i++; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				break
			}
		}
		i++
	case '"':
		for i++; i < len(line) && line[i] != '"'; i++ {
			if line[i] == '\\' {
				i++
			}
		}
		i++
	case '?':
		return -1
	default:
		for ; i < len(line); i++ {
			if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
				return i + 1
			}
		}
		return -1
	}
	for ; i < len(line) && (line[i] == ' ' || line[i] == '\t'); i++ {
	}
	if i < len(line) && line[i] == ':' {
		return i + 1
	}
	return -1
}

// byteColumn returns the byte offset of the 1-based character column col
// of line.
func byteColumn(line string, col int) int {
	for i := range line {
		if col--; col == 0 {
			return i
		}
	}
	return -1
}

// newEntries encodes the keys of props that are set (nil values skipped)
// as YAML lines, in the order given.
func newEntries(keys []string, props map[string]any, indent int, eol string) (string, error) {
	var b strings.Builder
	for _, k := range keys {
		if props[k] == nil {
			continue
		}
		val, err := valueNode(props[k])
		if err != nil {
			return "", fmt.Errorf("%w: property %q: %v", ErrEdit, k, err)
		}
		var key yaml.Node
		if err := key.Encode(k); err != nil {
			return "", fmt.Errorf("%w: property %q: %v", ErrEdit, k, err)
		}
		text, err := encodeYAML(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&key, val}}, indent)
		if err != nil {
			return "", fmt.Errorf("%w: property %q: %v", ErrEdit, k, err)
		}
		b.WriteString(text)
	}
	return withEnding(b.String(), eol), nil
}

// encodeValue encodes a value as it follows "key:" (" done\n", or
// "\n  - a\n  - b\n").
func encodeValue(val *yaml.Node, indent int) (string, error) {
	text, err := encodeYAML(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "x"}, val}}, indent)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(text, "x:"), nil
}

// encodeYAML encodes n with the given indentation. The YAML library
// escapes characters beyond the Basic Multilingual Plane ("\U0001F600"
// for an emoji); they are written as themselves, as a person types them.
func encodeYAML(n *yaml.Node, indent int) (string, error) {
	n, back := hideAstral(n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(indent)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return back.Replace(buf.String()), nil
}

// hideAstral returns a copy of n whose string scalars have each character
// beyond the Basic Multilingual Plane replaced by a private-use character
// the library writes as itself, and the replacer that puts them back.
func hideAstral(n *yaml.Node) (*yaml.Node, *strings.Replacer) {
	used := map[rune]bool{}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		for _, r := range n.Value {
			used[r] = true
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	stand := map[rune]rune{}
	var pairs []string
	next := rune(0xE000)
	var clone func(*yaml.Node) *yaml.Node
	clone = func(n *yaml.Node) *yaml.Node {
		c := *n
		c.Content = nil
		for _, k := range n.Content {
			c.Content = append(c.Content, clone(k))
		}
		if n.Kind != yaml.ScalarNode || !hasAstral(n.Value) {
			return &c
		}
		c.Value = strings.Map(func(r rune) rune {
			if r < 0x10000 {
				return r
			}
			if s, ok := stand[r]; ok {
				return s
			}
			for used[next] && next < 0xF8FF {
				next++
			}
			if next >= 0xF8FF {
				return r // out of stand-ins: let the library escape it
			}
			stand[r], used[next] = next, true
			pairs = append(pairs, string(next), string(r))
			return next
		}, n.Value)
		// The quoting the library chose was for the escaped form.
		var plain yaml.Node
		if n.Tag == "!!str" && plain.Encode(c.Value) == nil {
			c.Style = plain.Style
		}
		return &c
	}
	out := clone(n)
	return out, strings.NewReplacer(pairs...)
}

func hasAstral(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x10000 {
			return true
		}
		i += n
	}
	return false
}

// splitLines splits s after each line feed, keeping the line ends.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// decodeNode parses YAML into a node tree, turning a panic of the library
// on hostile input into an error.
func decodeNode(b []byte, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return yaml.Unmarshal(b, n)
}

var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?$`)

// valueNode encodes a property value (as decoded from JSON) as YAML. A
// string that is a date is written plain (date: 2026-03-01), as Obsidian
// writes date properties, not quoted as a string.
func valueNode(v any) (*yaml.Node, error) {
	if s, ok := v.(string); ok && isoDate.MatchString(s) {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: s}, nil
	}
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		v = int64(f)
	}
	if l, ok := v.([]any); ok {
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range l {
			en, err := valueNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, en)
		}
		return n, nil
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return &n, nil
}

// yamlIndent is the indentation fm uses for nested lines (2 when it has
// none), so that a value written looks like the ones read.
func yamlIndent(fm []byte) int {
	for _, line := range strings.Split(string(fm), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if n := len(line) - len(trimmed); n > 0 && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return max(n, 2)
		}
	}
	return 2
}
