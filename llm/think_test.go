package llm

import (
	"fmt"
	"strings"
	"testing"
)

func TestThinkFilter(t *testing.T) {
	tests := []struct {
		in, visible, reasoning string
	}{
		{"plain answer", "plain answer", ""},
		{"<think>hidden</think>\n\nvisible", "visible", "hidden"},
		{"a <think>x</think>b", "a b", "x"},
		{"<thinking>deep</thinking>Answer", "Answer", "deep"},
		{"stray</think>answer", "strayanswer", ""},
		{"<think>never closed", "", "never closed"},
		{"a < b and c <th", "a < b and c <th", ""},
		{"x<think>1</think>y<think>2</think>z", "xyz", "1\n2"},
		{"use <b>bold</b>", "use <b>bold</b>", ""},
	}
	for _, tt := range tests {
		// Feed the input split at every position, and byte by byte.
		splits := [][]string{{tt.in}}
		for i := 1; i < len(tt.in); i++ {
			splits = append(splits, []string{tt.in[:i], tt.in[i:]})
		}
		splits = append(splits, strings.Split(tt.in, ""))
		for _, parts := range splits {
			t.Run(fmt.Sprintf("%q/%d", tt.in, len(parts)), func(t *testing.T) {
				var f ThinkFilter
				var out strings.Builder
				for _, p := range parts {
					out.WriteString(f.Write(p))
				}
				out.WriteString(f.Flush())
				if out.String() != tt.visible || f.Reasoning() != tt.reasoning {
					t.Errorf("parts %q: visible %q reasoning %q", parts, out.String(), f.Reasoning())
				}
			})
		}
	}
}
