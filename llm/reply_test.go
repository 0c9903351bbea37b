package llm

import (
	"testing"
)

func TestTrailingJSONObject(t *testing.T) {
	tests := []struct {
		name, in  string
		wantProse string
		wantKey   string // a key the control block must have; "" = no block
	}{
		{"fenced json", "Thinking.\n```json\n{\"plan\": \"search\", \"finish\": false}\n```", "Thinking.", "plan"},
		{"fenced without tag", "Thinking.\n```\n{\"plan\": \"search\"}\n```", "Thinking.", "plan"},
		{"trailing object", "Thinking. {\"observation\": \"x\", \"should_continue\": true}", "Thinking.", "observation"},
		{"nested object", "T.\n{\"plan\": \"p\", \"meta\": {\"a\": {\"b\": 1}}}", "T.", "meta"},
		{"only json", `{"finish": true}`, "", "finish"},
		{"last fenced block wins", "```json\n{\"plan\": \"old\"}\n```\nmiddle\n```json\n{\"next\": 1}\n```", "```json\n{\"plan\": \"old\"}\n```\nmiddle", "next"},
		{"text after the block", "A.\n```json\n{\"plan\": \"p\"}\n```\nB.", "A.\n\nB.", "plan"},
		{"malformed fenced", "A.\n```json\n{plan: p}\n```", "A.\n```json\n{plan: p}\n```", ""},
		{"malformed trailing", "A. {\"plan\": }", "A. {\"plan\": }", ""},
		{"array is not a block", `A. ["x"]`, `A. ["x"]`, ""},
		{"no json", "Just text.", "Just text.", ""},
		{"braces in prose", "Use {curly} braces }", "Use {curly} braces }", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prose, control := TrailingJSONObject(tt.in)
			if prose != tt.wantProse {
				t.Errorf("prose = %q, want %q", prose, tt.wantProse)
			}
			if tt.wantKey == "" {
				if control != nil {
					t.Errorf("control = %v, want none", control)
				}
			} else if _, ok := control[tt.wantKey]; !ok {
				t.Errorf("control = %v, want key %q", control, tt.wantKey)
			}
		})
	}
}
