package vault

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// setProperties sets props in the note's frontmatter, creating the block
// when there is none. It edits the YAML as a node tree (yaml.v3's Node), so
// the keys it does not touch keep their order, comments, quoting and flow
// style, and a property it changes keeps its place and its comments. New
// keys go at the end, in name order; a nil value removes its key.
func setProperties(before string, props map[string]any) (string, error) {
	if len(props) == 0 {
		return "", fmt.Errorf("%w: no properties given", ErrEdit)
	}
	bom, rest := bomless(before)
	eol := lineEnding(rest)
	fm, bodyOff, ok := splitFrontmatter([]byte(rest))
	var doc yaml.Node
	start := 0
	if ok {
		_, start = lineAt([]byte(rest), 0)
		if err := decodeNode(fm, &doc); err != nil {
			return "", fmt.Errorf("%w: the frontmatter is not valid YAML (%v); fix it with %s", ErrEdit, err, EditReplace)
		}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return "", fmt.Errorf("%w: the frontmatter is not a list of key: value pairs", ErrEdit)
	}
	for _, k := range sortedKeys(props) {
		if strings.TrimSpace(k) == "" {
			return "", fmt.Errorf("%w: a property name is empty", ErrEdit)
		}
		at := -1
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				at = i
				break
			}
		}
		v := props[k]
		if v == nil {
			if at >= 0 {
				m.Content = append(m.Content[:at], m.Content[at+2:]...)
			}
			continue
		}
		val, err := valueNode(v)
		if err != nil {
			return "", fmt.Errorf("%w: property %q: %v", ErrEdit, k, err)
		}
		if at >= 0 {
			old := m.Content[at+1]
			val.HeadComment, val.LineComment, val.FootComment = old.HeadComment, old.LineComment, old.FootComment
			m.Content[at+1] = val
			continue
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, val)
	}
	out := ""
	if len(m.Content) > 0 || m.HeadComment != "" || doc.HeadComment != "" {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(yamlIndent(fm))
		if err := enc.Encode(&doc); err != nil {
			return "", fmt.Errorf("%w: encode the frontmatter: %v", ErrEdit, err)
		}
		if err := enc.Close(); err != nil {
			return "", fmt.Errorf("%w: encode the frontmatter: %v", ErrEdit, err)
		}
		out = withEnding(buf.String(), eol)
	}
	if !ok {
		return bom + "---" + eol + out + "---" + eol + rest, nil
	}
	// Keep the opening and closing lines as they were.
	return bom + rest[:start] + out + rest[start+len(fm):bodyOff] + rest[bodyOff:], nil
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
// none), so a rewritten block looks like the one read.
func yamlIndent(fm []byte) int {
	for _, line := range strings.Split(string(fm), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if n := len(line) - len(trimmed); n > 0 && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return max(n, 2)
		}
	}
	return 2
}
