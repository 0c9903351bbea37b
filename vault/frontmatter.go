package vault

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// splitFrontmatter separates a leading YAML frontmatter block from the
// body. The block must start on the very first line ("---", after an
// optional UTF-8 BOM) and end at the next line that is exactly "---"
// (trailing blanks allowed). Without a closing line there is no
// frontmatter: the whole content is body, as in Obsidian.
//
// bodyOff is the byte offset of the body in content.
func splitFrontmatter(content []byte) (fm []byte, bodyOff int, ok bool) {
	off := 0
	if bytes.HasPrefix(content, []byte("\xEF\xBB\xBF")) {
		off = 3
	}
	first, next := lineAt(content, off)
	if !isDelimiter(first) || next < 0 {
		return nil, off, false
	}
	start := next
	for pos := start; pos >= 0 && pos <= len(content); {
		line, nxt := lineAt(content, pos)
		if isDelimiter(line) {
			if nxt < 0 {
				nxt = len(content)
			}
			return content[start:pos], nxt, true
		}
		pos = nxt
	}
	return nil, off, false
}

// lineAt returns the line starting at off (without its line ending) and the
// offset of the following line, or -1 when the line is the last one. Lines
// end with LF, CRLF or a lone CR (old Mac files).
func lineAt(b []byte, off int) ([]byte, int) {
	if off >= len(b) {
		return nil, -1
	}
	i := bytes.IndexAny(b[off:], "\r\n")
	if i < 0 {
		return b[off:], -1
	}
	next := off + i + 1
	if b[off+i] == '\r' && next < len(b) && b[next] == '\n' {
		next++
	}
	return b[off : off+i], next
}

func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// parseFrontmatter decodes the YAML block into JSON-marshalable properties.
// A decoding failure (or a panic inside the YAML library) is returned as an
// error message; the note keeps its body either way.
func parseFrontmatter(fm []byte) (props map[string]any, errMsg string) {
	defer func() {
		if r := recover(); r != nil {
			props, errMsg = nil, fmt.Sprintf("frontmatter: invalid YAML (%v)", r)
		}
	}()
	var raw any
	if err := yaml.Unmarshal(fm, &raw); err != nil {
		return nil, "frontmatter: " + strings.TrimPrefix(err.Error(), "yaml: ")
	}
	switch m := normalizeYAML(raw).(type) {
	case nil:
		return nil, ""
	case map[string]any:
		if len(m) == 0 {
			return nil, ""
		}
		return m, ""
	default:
		return nil, fmt.Sprintf("frontmatter: expected key: value pairs, found a %T", raw)
	}
}

// normalizeYAML converts what yaml.v3 produces into values encoding/json
// accepts: map[any]any becomes map[string]any, timestamps become strings in
// their YAML form (date-only values stay "2006-01-02", which is what a person
// wrote and what a host displays), and NaN/Inf floats become strings.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[scalarString(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = normalizeYAML(x[i])
		}
		return x
	case time.Time:
		return formatTime(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	default:
		return x
	}
}

func formatTime(t time.Time) string {
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 && t.Location() == time.UTC {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}

// scalarString renders a YAML scalar as text; non-scalars give "".
func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x)
	case time.Time:
		return formatTime(x)
	default:
		return fmt.Sprint(x)
	}
}

// stringList reads a property that may be a list or a single string. A
// string is split by sep (nil means keep it whole).
func stringList(v any, split func(string) []string) []string {
	var out []string
	add := func(s string) {
		if split == nil {
			out = append(out, strings.TrimSpace(s))
			return
		}
		out = append(out, split(s)...)
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				continue
			}
			add(scalarString(e))
		}
	case nil:
	case map[string]any:
	default:
		add(scalarString(x))
	}
	return out
}

func splitComma(s string) []string {
	parts := strings.Split(s, ",")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func splitTags(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || isSpace(r) })
}
