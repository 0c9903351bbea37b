package truncate

import "testing"

func TestRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 5, "abcd…"},
		{"word and more", 6, "word…"}, // trailing space before … trimmed
		{"日本語のテキスト", 4, "日本語…"},
		{"🔍🔍🔍🔍", 2, "🔍…"},
		{"abc", 1, "…"},
		{"anything", 0, "anything"},
		{"anything", -1, "anything"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := Runes(tt.s, tt.n); got != tt.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"one\ntwo", 10, "one"},
		{"a long first line\nsecond", 7, "a long…"},
		{"single", 0, "single"},
	} {
		if got := FirstLine(tt.s, tt.n); got != tt.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
