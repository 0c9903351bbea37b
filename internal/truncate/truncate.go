// Package truncate cuts text to a length, the one way every layer does it:
// event summaries, reasoning steps, prompts and error messages.
//
// It is a leaf: it imports nothing of this module.
package truncate

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Runes returns s cut to at most n runes, ending with "…" when it was
// cut; white space left before the "…" is dropped. n <= 0 means no limit.
// Cutting is by rune, so a multi-rune grapheme (an emoji with modifiers)
// may lose its tail; it is never split inside a rune.
func Runes(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	if n == 1 {
		return "…"
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
}

// FirstLine returns the first line of s, cut to at most n runes.
func FirstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return Runes(s, n)
}
