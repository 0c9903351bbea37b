package llm

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Models asked for JSON wrap it in prose and code fences, or end their
// prose with it. These find it.

var reFirstFence = regexp.MustCompile("(?s)```[ \t]*(?:json|JSON)?[ \t]*\\r?\\n(.*?)```")

// JSONObject finds a JSON object in a model's reply: the whole text, else
// the first fenced block holding one, else the first '{' from which an
// object decodes. prose is the text around it.
func JSONObject(text string) (raw json.RawMessage, prose string, ok bool) {
	t := strings.TrimSpace(text)
	if isObject(t) {
		return json.RawMessage(t), "", true
	}
	for _, m := range reFirstFence.FindAllStringSubmatchIndex(t, -1) {
		if body := strings.TrimSpace(t[m[2]:m[3]]); isObject(body) {
			return json.RawMessage(body), strings.TrimSpace(t[:m[0]] + "\n" + t[m[1]:]), true
		}
	}
	for i, tries := 0, 0; i < len(t) && tries < 64; i++ {
		if t[i] != '{' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(t[i:]))
		var v json.RawMessage
		if dec.Decode(&v) == nil && isObject(string(v)) {
			end := i + int(dec.InputOffset())
			return v, strings.TrimSpace(t[:i] + "\n" + t[end:]), true
		}
	}
	return nil, t, false
}

func isObject(s string) bool {
	if !strings.HasPrefix(s, "{") {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// reTrailingFence matches a fenced code block holding a JSON object, with or
// without a json language tag.
var reTrailingFence = regexp.MustCompile("(?s)```[ \t]*(?:json|JSON)?[ \t]*\\r?\\n?(\\{.*?\\})\\s*```")

// maxTrailingCandidates bounds the search for a trailing JSON object, so a
// long text full of braces costs little.
const maxTrailingCandidates = 32

// TrailingJSONObject splits a model's reply into its prose and the JSON
// object it ends with (a control block): the last fenced ```json block
// holding an object, or else a JSON object that ends the text. Without a
// block that parses, the whole text is prose and obj is nil.
func TrailingJSONObject(text string) (prose string, obj map[string]any) {
	t := strings.TrimSpace(text)
	matches := reTrailingFence.FindAllStringSubmatchIndex(t, -1)
	for i := len(matches) - 1; i >= 0; i-- {
		m := matches[i]
		if obj, ok := decodeObject(t[m[2]:m[3]]); ok {
			before, after := strings.TrimSpace(t[:m[0]]), strings.TrimSpace(t[m[1]:])
			if before != "" && after != "" {
				return before + "\n\n" + after, obj
			}
			return before + after, obj
		}
	}
	if strings.HasSuffix(t, "}") {
		end := len(t)
		for n := 0; n < maxTrailingCandidates; n++ {
			i := strings.LastIndex(t[:end], "{")
			if i < 0 {
				break
			}
			if obj, ok := decodeObject(t[i:]); ok {
				return strings.TrimSpace(t[:i]), obj
			}
			end = i
		}
	}
	return t, nil
}

func decodeObject(s string) (map[string]any, bool) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		return nil, false
	}
	return obj, true
}
