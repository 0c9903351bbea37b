package marker

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Status is the state of a reasoning block.
type Status string

// Block states, in the order a run normally goes through them.
const (
	StatusIdle      Status = "idle"
	StatusReasoning Status = "reasoning"
	StatusCollapsed Status = "collapsed"
	StatusComplete  Status = "complete"
)

// valid reports whether s is one of the four states.
func (s Status) valid() bool {
	switch s {
	case StatusIdle, StatusReasoning, StatusCollapsed, StatusComplete:
		return true
	}
	return false
}

// Marker is the decoded form of an AGENT_REASONING marker.
type Marker struct {
	Status  Status
	Elapsed int
	Steps   []string
}

const markerPrefix = "<!--AGENT_REASONING:"

// hostRe is the host's regular expression
// /<!--AGENT_REASONING:(\w+):(\d+):(.+?)-->/ translated to Go. JavaScript's
// `.` without the s flag matches anything except the four ECMAScript line
// terminators, while Go's `.` only excludes \n, so the class is spelled out.
// \w and \d are ASCII-only in both engines.
var hostRe = regexp.MustCompile(`<!--AGENT_REASONING:(\w+):(\d+):([^\n\r\x{2028}\x{2029}]+?)-->`)

// Serialize renders the marker a host parses:
//
//	<!--AGENT_REASONING:{status}:{elapsedSeconds}:{stepsJSON}-->
//
// stepsJSON is a JSON array of strings that never contains a raw line
// terminator, '<', '>', '&' or "--", whatever the step text: json.Marshal
// escapes <, >, & (HTML escaping), control characters, U+2028 and U+2029, and
// every second hyphen of a "--" run is written as \u002d. So neither "-->"
// nor "--!>" nor "<!--" can appear inside it, and the host's lazy (.+?)-->
// captures exactly the array. Idle (or an unknown status) serializes to "".
// Negative elapsed values are written as 0; nil steps as [].
func Serialize(status Status, elapsed int, steps []string) string {
	if status == StatusIdle || !status.valid() {
		return ""
	}
	if elapsed < 0 {
		elapsed = 0
	}
	var b strings.Builder
	b.WriteString(markerPrefix)
	b.WriteString(string(status))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(elapsed))
	b.WriteByte(':')
	b.WriteString(encodeSteps(steps))
	b.WriteString("-->")
	return b.String()
}

// encodeSteps returns the comment-safe JSON array of steps.
func encodeSteps(steps []string) string {
	if steps == nil {
		steps = []string{}
	}
	raw, err := json.Marshal(steps) // HTML-escapes <, >, &; escapes U+2028/9.
	if err != nil {
		// A []string always marshals; keep the marker well-formed anyway.
		return "[]"
	}
	// In a marshaled array of strings a '-' can only be a literal character
	// inside a string (escapes are \X or \uXXXX, never containing '-'), so
	// rewriting it as \u002d is always valid JSON. Replacing non-overlapping
	// "--" pairs leaves no two adjacent hyphens.
	return strings.ReplaceAll(string(raw), "--", `-\u002d`)
}

// Parse finds the first marker in content exactly as the host does (first
// match of the host regex, then JSON.parse of group 3). It returns the
// marker, the content with the marker removed (the text before the marker,
// which is normally empty, followed by the text after it minus one leading
// "\n\n"), and true. It returns false when there is no match, when the
// elapsed value overflows int, or when group 3 is not a JSON array of
// strings (where the host's JSON.parse would throw or yield a non-array).
func Parse(content string) (Marker, string, bool) {
	loc := hostRe.FindStringSubmatchIndex(content)
	if loc == nil {
		return Marker{}, content, false
	}
	elapsed, err := strconv.Atoi(content[loc[4]:loc[5]])
	if err != nil {
		return Marker{}, content, false
	}
	var steps []string
	if err := json.Unmarshal([]byte(content[loc[6]:loc[7]]), &steps); err != nil || steps == nil {
		return Marker{}, content, false
	}
	m := Marker{Status: Status(content[loc[2]:loc[3]]), Elapsed: elapsed, Steps: steps}
	rest := content[:loc[0]] + strings.TrimPrefix(content[loc[1]:], "\n\n")
	return m, rest, true
}

var (
	// legacyBlockRe matches a legacy tool call banner with its body.
	legacyBlockRe = regexp.MustCompile(`(?s)<!--TOOL_CALL_START\b.*?-->.*?<!--TOOL_CALL_END\b.*?-->`)
	// legacyLoneRe matches a legacy marker left without its partner.
	legacyLoneRe = regexp.MustCompile(`(?s)<!--TOOL_CALL_(?:START|END)\b.*?-->`)
	// markerHeadRe matches what follows a marker prefix up to the JSON value.
	markerHeadRe = regexp.MustCompile(`^\w+:\d+:`)
)

// jsonMarkerPrefixes are markers whose payload is one JSON value followed by
// "-->": ours and the seed's earlier REASONING_BLOCK form.
var jsonMarkerPrefixes = []string{markerPrefix, "<!--REASONING_BLOCK:"}

// Strip removes every reasoning marker (ours, and the older
// <!--REASONING_BLOCK:...--> form), every legacy
// <!--TOOL_CALL_START...-->...<!--TOOL_CALL_END...--> block and every lone
// legacy marker, so that host history can be shown to a model. Markers
// written by older hosts without escaping (a step containing "-->") are
// removed whole: the JSON value is decoded to find its end. When anything
// was removed, surrounding whitespace is trimmed; otherwise content is
// returned unchanged.
func Strip(content string) string {
	out := content
	for _, p := range jsonMarkerPrefixes {
		out = stripJSONMarkers(out, p)
	}
	out = legacyBlockRe.ReplaceAllString(out, "")
	out = legacyLoneRe.ReplaceAllString(out, "")
	if out == content {
		return content
	}
	return strings.TrimSpace(out)
}

// stripJSONMarkers removes all markers that start with prefix.
func stripJSONMarkers(s, prefix string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		s = s[markerLen(s, prefix):]
	}
}

// markerLen returns how many bytes of s (which starts with prefix) belong to
// the marker.
func markerLen(s, prefix string) int {
	body := s[len(prefix):]
	head := 0
	if prefix == markerPrefix {
		if m := markerHeadRe.FindStringIndex(body); m != nil {
			head = m[1]
		}
	}
	// The JSON-aware end: one JSON value directly followed by "-->".
	dec := json.NewDecoder(strings.NewReader(body[head:]))
	var v any
	if err := dec.Decode(&v); err == nil {
		end := len(prefix) + head + int(dec.InputOffset())
		if strings.HasPrefix(s[end:], "-->") {
			return end + 3
		}
	}
	// Otherwise the first "-->", as an HTML parser would end the comment.
	if j := strings.Index(s, "-->"); j >= 0 {
		return j + 3
	}
	// An unterminated marker hides the rest of its line.
	if j := strings.IndexAny(s, "\r\n"); j >= 0 {
		return j
	}
	return len(s)
}
