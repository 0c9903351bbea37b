package vault

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable returns s as a person should see it when asked to approve it:
// every character a terminal or an editor would act on or hide instead of
// showing is escaped, so that the line shown is the line written. Escaped
// are the C0 controls but tab and line feed (a carriage return only when
// no line feed follows it: a CRLF line end is shown as the line end it
// is), DEL, the C1 controls, the bidirectional formatting characters
// (which reorder what follows them), the line and paragraph separators, and
// bytes that are not UTF-8. A carriage return, an escape sequence or a
// right-to-left override in a model's text could otherwise make the diff
// show one line while another is written.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if hidden(s, i, r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !hidden(s, i, r, n):
			b.WriteString(s[i : i+n])
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// HasHidden reports whether Printable would escape something in s.
func HasHidden(s string) bool { return Printable(s) != s }

// hidden reports whether the rune r, n bytes at s[i:], is one Printable
// escapes.
func hidden(s string, i int, r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n' || r == '\t':
		return false
	case r == '\r':
		return i+1 >= len(s) || s[i+1] != '\n'
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional formatting
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}
