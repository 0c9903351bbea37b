package marker

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// literalHostRe is the host's pattern compiled verbatim by Go. It differs
// from JavaScript only in what `.` excludes (Go: \n; JS: \n \r U+2028
// U+2029); the test also checks those never occur, so both agree.
var literalHostRe = regexp.MustCompile(`<!--AGENT_REASONING:(\w+):(\d+):(.+?)-->`)

func hostileSteps() map[string][]string {
	long := strings.Repeat("long step with --> and <!-- inside ", 400)
	return map[string][]string{
		"empty":          {},
		"plain":          {"Searching notes for \"machine learning\"", "Found 5 relevant notes"},
		"comment end":    {"a --> b", "-->", "--->", "---->", "x--", "--"},
		"bang end":       {"a --!> b", "--!>"},
		"comment open":   {"<!--", "<!-- nested -->", "<!--AGENT_REASONING:complete:1:[\"x\"]-->"},
		"quotes":         {`"`, `\"`, `'single'`, "`tick`"},
		"backslashes":    {`\`, `\\`, `C:\path\to\note.md`, `\u003e`, `\n`},
		"newlines":       {"line1\nline2", "cr\rlf", "tab\tstep", "\r\n"},
		"js terminators": {"a\u2028b", "c\u2029d"},
		"emoji":          {"🔍 searching 👩‍💻", "🏳️‍🌈"},
		"cjk":            {"検索しています：機械学習", "找到了 5 条笔记。"},
		"html":           {"</script><script>alert(1)</script>", "&amp; &lt; &gt;", "<b>bold</b>"},
		"brackets":       {"]-->", "\"]-->", "[", "]"},
		"hyphens":        {"-", "a-b", "a - b", "----------"},
		"controls":       {"\x00\x01\x1b[31mred", "\u007f"},
		"long":           {long},
		"many":           strings.Split(strings.Repeat("s,", 100), ","),
	}
}

func TestSerializeHostRegexRoundTrip(t *testing.T) {
	for name, steps := range hostileSteps() {
		t.Run(name, func(t *testing.T) {
			for _, status := range []Status{StatusReasoning, StatusCollapsed, StatusComplete} {
				m := Serialize(status, 42, steps)
				content := m + "\n\nAnswer with <!--AGENT_REASONING:reasoning:9:[\"fake\"]--> and --> inside"

				if strings.ContainsAny(m, "\n\r\u2028\u2029") {
					t.Fatalf("marker contains a raw line terminator: %q", m)
				}
				g := literalHostRe.FindStringSubmatch(content)
				if g == nil {
					t.Fatalf("host regex does not match %q", m)
				}
				if g[0] != m {
					t.Fatalf("host regex matched %q, want the whole marker %q", g[0], m)
				}
				if g[1] != string(status) || g[2] != "42" {
					t.Fatalf("groups = %q %q", g[1], g[2])
				}
				inner := g[3]
				for _, bad := range []string{"-->", "--", "<", ">", "&"} {
					if strings.Contains(inner, bad) {
						t.Fatalf("stepsJSON contains %q: %s", bad, inner)
					}
				}
				var got []string
				if err := json.Unmarshal([]byte(inner), &got); err != nil {
					t.Fatalf("group 3 is not JSON: %v: %s", err, inner)
				}
				want := steps
				if len(want) == 0 {
					want = []string{}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("steps = %q, want %q", got, want)
				}

				pm, rest, ok := Parse(content)
				if !ok {
					t.Fatalf("Parse failed on %q", m)
				}
				if pm.Status != status || pm.Elapsed != 42 || !reflect.DeepEqual(pm.Steps, want) {
					t.Fatalf("Parse = %+v", pm)
				}
				if !strings.HasPrefix(rest, "Answer with") {
					t.Fatalf("rest = %q", rest)
				}
			}
		})
	}
}

func TestSerializeEdges(t *testing.T) {
	tests := []struct {
		name    string
		status  Status
		elapsed int
		steps   []string
		want    string
	}{
		{"idle", StatusIdle, 3, []string{"x"}, ""},
		{"unknown status", Status("bogus status"), 3, nil, ""},
		{"nil steps", StatusReasoning, 0, nil, "<!--AGENT_REASONING:reasoning:0:[]-->"},
		{"empty steps", StatusComplete, 5, []string{}, "<!--AGENT_REASONING:complete:5:[]-->"},
		{"negative elapsed", StatusCollapsed, -4, []string{"a"}, `<!--AGENT_REASONING:collapsed:0:["a"]-->`},
		{"escaping", StatusReasoning, 1, []string{"a-->b"}, `<!--AGENT_REASONING:reasoning:1:["a-\u002d\u003eb"]-->`},
		{"triple hyphen", StatusReasoning, 1, []string{"---"}, `<!--AGENT_REASONING:reasoning:1:["-\u002d-"]-->`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Serialize(tt.status, tt.elapsed, tt.steps); got != tt.want {
				t.Errorf("Serialize = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSerializeInvalidUTF8(t *testing.T) {
	m := Serialize(StatusComplete, 1, []string{"bad \xff\xfe bytes -->"})
	pm, _, ok := Parse(m)
	if !ok {
		t.Fatalf("Parse failed on %q", m)
	}
	if want := "bad \ufffd\ufffd bytes -->"; pm.Steps[0] != want {
		t.Errorf("step = %q, want %q", pm.Steps[0], want)
	}
}

func TestParseEmulatesHost(t *testing.T) {
	tests := []struct {
		name    string
		content string
		ok      bool
		want    Marker
		rest    string
	}{
		{"no marker", "just text", false, Marker{}, "just text"},
		{"simple", `<!--AGENT_REASONING:complete:12:["a","b"]-->` + "\n\nThe answer.",
			true, Marker{StatusComplete, 12, []string{"a", "b"}}, "The answer."},
		{"only one blank line trimmed", `<!--AGENT_REASONING:complete:1:[]-->` + "\n\n\n\nx",
			true, Marker{StatusComplete, 1, []string{}}, "\n\nx"},
		{"text before", "pre " + `<!--AGENT_REASONING:collapsed:2:["s"]-->` + "\n\npost",
			true, Marker{StatusCollapsed, 2, []string{"s"}}, "pre post"},
		{"first of two", `<!--AGENT_REASONING:reasoning:1:["one"]--><!--AGENT_REASONING:complete:2:["two"]-->`,
			true, Marker{StatusReasoning, 1, []string{"one"}}, `<!--AGENT_REASONING:complete:2:["two"]-->`},
		// An unescaped "-->" in a step (old hosts' JSON.stringify) ends the
		// lazy capture early; the host's JSON.parse throws, and so do we.
		{"unescaped comment end", `<!--AGENT_REASONING:complete:1:["a --> b"]-->`, false, Marker{}, ""},
		// JS `.` does not cross a newline (nor \r, U+2028, U+2029).
		{"raw newline", "<!--AGENT_REASONING:complete:1:[\"a\nb\"]-->", false, Marker{}, ""},
		{"raw CR", "<!--AGENT_REASONING:complete:1:[\"a\rb\"]-->", false, Marker{}, ""},
		{"raw U+2028", "<!--AGENT_REASONING:complete:1:[\"a\u2028b\"]-->", false, Marker{}, ""},
		{"not an array", `<!--AGENT_REASONING:complete:1:{"elapsed":1}-->`, false, Marker{}, ""},
		{"array of numbers", `<!--AGENT_REASONING:complete:1:[1,2]-->`, false, Marker{}, ""},
		{"null", `<!--AGENT_REASONING:complete:1:null-->`, false, Marker{}, ""},
		{"empty group", `<!--AGENT_REASONING:complete:1:-->`, false, Marker{}, ""},
		{"elapsed overflow", `<!--AGENT_REASONING:complete:99999999999999999999999:[]-->`, false, Marker{}, ""},
		{"non-ascii status", `<!--AGENT_REASONING:réasoning:1:[]-->`, false, Marker{}, ""},
		{"unknown status kept", `<!--AGENT_REASONING:thinking:3:[]-->`, true, Marker{"thinking", 3, []string{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, rest, ok := Parse(tt.content)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if !reflect.DeepEqual(m, tt.want) {
				t.Errorf("marker = %+v, want %+v", m, tt.want)
			}
			if rest != tt.rest {
				t.Errorf("rest = %q, want %q", rest, tt.rest)
			}
		})
	}
}

func TestStrip(t *testing.T) {
	ours := Serialize(StatusComplete, 4, []string{"a --> b", "<!-- c -->"})
	tests := []struct {
		name, in, want string
	}{
		{"no markers unchanged", "  keep\n  spacing  ", "  keep\n  spacing  "},
		{"ours", ours + "\n\nThe answer.", "The answer."},
		{"ours only", ours, ""},
		{"two of ours", ours + "\n\nA" + ours + "B", "AB"},
		{"unescaped legacy reasoning marker", `<!--AGENT_REASONING:complete:1:["a --> b","x"]-->` + "\n\nAnswer", "Answer"},
		{"reasoning block form", `<!--REASONING_BLOCK:{"elapsed":3,"steps":["a --> b"]}-->` + "\n\nAnswer", "Answer"},
		{"legacy block", "Before\n<!--TOOL_CALL_START:1:localSearch:Search:🔍::true-->\nbanner body\n<!--TOOL_CALL_END:1:{\"ok\":true}-->\nAfter", "Before\n\nAfter"},
		{"two legacy blocks", "<!--TOOL_CALL_START:1:a-->x<!--TOOL_CALL_END:1:r-->mid<!--TOOL_CALL_START:2:b-->y<!--TOOL_CALL_END:2:r-->", "mid"},
		{"lone legacy start", "text <!--TOOL_CALL_START:1:readNote:Read:📄::true--> more", "text  more"},
		{"lone legacy end", "text <!--TOOL_CALL_END:1:done--> more", "text  more"},
		{"mixed", ours + "\n\n<!--TOOL_CALL_START:1:x-->b<!--TOOL_CALL_END:1:y-->Answer", "Answer"},
		{"unterminated marker hides its line", "<!--AGENT_REASONING:reasoning:1:[\"cut\nnext line", "next line"},
		{"other comments kept", "<!-- user comment -->\n" + ours, "<!-- user comment -->"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Strip(tt.in); got != tt.want {
				t.Errorf("Strip = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzSerializeRoundTrip(f *testing.F) {
	for _, steps := range hostileSteps() {
		f.Add(strings.Join(steps, "\x1f"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		steps := strings.Split(joined, "\x1f")
		m := Serialize(StatusCollapsed, 3, steps)
		if strings.ContainsAny(m, "\n\r\u2028\u2029") {
			t.Fatalf("raw line terminator in %q", m)
		}
		g := literalHostRe.FindStringSubmatch(m + "-->tail")
		if g == nil || g[0] != m {
			t.Fatalf("host regex did not capture the whole marker %q", m)
		}
		var got []string
		if err := json.Unmarshal([]byte(g[3]), &got); err != nil {
			t.Fatalf("unmarshal %s: %v", g[3], err)
		}
		if len(got) != len(steps) {
			t.Fatalf("got %d steps, want %d", len(got), len(steps))
		}
		for i := range steps {
			if replaceInvalid(steps[i]) != got[i] {
				t.Fatalf("step %d = %q, want %q", i, got[i], steps[i])
			}
		}
		if Strip(m) != "" {
			t.Fatalf("Strip left %q", Strip(m))
		}
	})
}

// replaceInvalid mirrors encoding/json: each invalid UTF-8 byte becomes
// U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // range yields U+FFFD per invalid byte
	}
	return b.String()
}
