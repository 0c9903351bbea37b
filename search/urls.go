package search

import "strings"

// splitURLs separates the URLs of a note body (http://, https://, www.)
// and the destinations of its markdown links and images ("](...)") from its
// words. The words of a URL ("github", "com", "a1b2c3") are not what a note
// is about: they go to their own lightly weighted field, where they can
// still be found by an exact word but are never a fuzzy match's target.
// The rest of the text keeps its words in order; each URL becomes a space.
// Bodies without any return themselves and "".
func splitURLs(body string) (text, urls string) {
	next := nextURL(body, 0)
	if next < 0 {
		return body, ""
	}
	var t, u strings.Builder
	t.Grow(len(body))
	last := 0
	for next >= 0 {
		end := urlEnd(body, next)
		t.WriteString(body[last:next])
		t.WriteByte(' ')
		if u.Len() > 0 {
			u.WriteByte(' ')
		}
		u.WriteString(body[next:end])
		last = end
		next = nextURL(body, end)
	}
	t.WriteString(body[last:])
	return t.String(), u.String()
}

// nextURL returns the offset of the next URL or link destination in s at
// or after from, or -1.
func nextURL(s string, from int) int {
	for i := from; i < len(s); {
		j := strings.IndexAny(s[i:], "hw]")
		if j < 0 {
			return -1
		}
		k := i + j
		switch {
		case s[k] == ']':
			if k+1 < len(s) && s[k+1] == '(' && k+2 < len(s) && s[k+2] != ')' {
				return k + 2
			}
		case (k == 0 || !isWordByte(s[k-1])) && isURLPrefix(s[k:]):
			return k
		}
		i = k + 1
	}
	return -1
}

func isURLPrefix(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "www.")
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c >= 0x80
}

// urlEnd returns where the URL starting at s[i] ends: at white space, a
// closing bracket or quote, or a ')' that closes more than the URL opened;
// punctuation ending a sentence right after a URL is not part of it.
func urlEnd(s string, i int) int {
	depth := 0
	end := len(s)
scan:
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case ' ', '\t', '\n', '\r', '>', ']', '"', '\'', '`', '|':
			end = j
			break scan
		case '(':
			depth++
		case ')':
			if depth == 0 {
				end = j
				break scan
			}
			depth--
		}
	}
	for end > i+1 && strings.IndexByte(".,;:!?", s[end-1]) >= 0 {
		end--
	}
	return end
}
