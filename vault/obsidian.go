package vault

import (
	"bytes"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the small scanners for Obsidian syntax that goldmark does
// not know: #tags and [[wikilinks]] / ![[embeds]]. They run over runs of
// goldmark text nodes, so code blocks, code spans, link destinations,
// autolinks and raw HTML are already out of the way.

func isSpace(r rune) bool { return unicode.IsSpace(r) }

// isTagRune reports whether r may appear in a tag: letters and combining
// marks of any script, digits, '_', '-' and '/' (nesting).
func isTagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_' || r == '-' || r == '/'
}

// normalizeTag turns "#Area/Work" or "area/work" into "area/work". It returns
// "" when s is not a valid tag: empty, containing other characters, or made
// of digits (and slashes/dashes) only, like "#123" or "#2024/01".
func normalizeTag(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	s = strings.Trim(s, "/")
	if s == "" {
		return ""
	}
	meaningful := false
	for _, r := range s {
		if !isTagRune(r) {
			return ""
		}
		if !unicode.IsDigit(r) && r != '/' && r != '-' {
			meaningful = true
		}
	}
	if !meaningful {
		return ""
	}
	return strings.ToLower(s)
}

// tagMayFollow reports whether a '#' preceded by r can start a tag. Obsidian
// wants the tag to stand alone: "a#b" and "x/y#frag" are not tags, while
// "(#tag)" and "**#tag**" are.
func tagMayFollow(r rune) bool {
	if isSpace(r) {
		return true
	}
	switch r {
	case '(', '[', '{', '*', '_', '~', '=', '"', '\'', ',', ';', '>':
		return true
	}
	return false
}

// span is a half-open byte range of the body.
type span struct{ start, stop int }

// scanWikilinks finds [[target#heading|alias]] and ![[embeds]] in
// body[r.start:r.stop] and returns the links and the ranges they cover, in
// order. It looks at each byte a bounded number of times.
func scanWikilinks(body []byte, r span) (links []Link, covered []span) {
	s := body[r.start:r.stop]
	for i := 0; i+1 < len(s); {
		open := indexFrom(s, "[[", i)
		if open < 0 {
			break
		}
		closeAt := indexFrom(s, "]]", open+2)
		if closeAt < 0 {
			break
		}
		// "[[a [[b]]": the link is the innermost one.
		if inner := bytes.LastIndex(s[open+2:closeAt], []byte("[[")); inner >= 0 {
			open = open + 2 + inner
		}
		inside := s[open+2 : closeAt]
		i = closeAt + 2
		if bytes.ContainsAny(inside, "\n\r") {
			continue
		}
		l, ok := parseWikilink(string(inside))
		if !ok {
			continue
		}
		abs := r.start + open
		if abs > 0 && body[abs-1] == '!' {
			l.Embed = true
		}
		links = append(links, l)
		covered = append(covered, span{abs, r.start + closeAt + 2})
	}
	return links, covered
}

func indexFrom(s []byte, sub string, from int) int {
	if from >= len(s) {
		return -1
	}
	i := bytes.Index(s[from:], []byte(sub))
	if i < 0 {
		return -1
	}
	return from + i
}

// parseWikilink splits "target#heading|alias". Inside tables Obsidian escapes
// the pipe as "\|", so a trailing backslash is dropped.
func parseWikilink(inside string) (Link, bool) {
	target, alias, _ := strings.Cut(inside, "|")
	target, heading, _ := strings.Cut(target, "#")
	target = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(target), `\`))
	heading = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(heading), `\`))
	alias = strings.TrimSpace(alias)
	if target == "" {
		// [[#Heading]] points into the note itself; it links nowhere else.
		return Link{}, false
	}
	return Link{Target: target, Heading: heading, Alias: alias, Kind: "wikilink"}, true
}

// scanTags appends the inline tags of body[r.start:r.stop], skipping the
// covered ranges (wikilinks, in order and not overlapping).
func scanTags(body []byte, r span, covered []span, add func(string)) {
	for i := r.start; i < r.stop; i++ {
		if body[i] != '#' {
			continue
		}
		for len(covered) > 0 && covered[0].stop <= i {
			covered = covered[1:]
		}
		if len(covered) > 0 && i >= covered[0].start {
			continue
		}
		if i > 0 {
			prev, _ := utf8.DecodeLastRune(body[:i])
			if !tagMayFollow(prev) {
				continue
			}
		}
		j := i + 1
		for j < r.stop {
			c, size := utf8.DecodeRune(body[j:r.stop])
			if !isTagRune(c) {
				break
			}
			j += size
		}
		if t := normalizeTag(string(body[i+1 : j])); t != "" {
			add(t)
		}
		i = j - 1
	}
}

// markdownLink interprets the destination of a markdown link or image in
// the note at notePath. Only relative paths to .md files count as note
// links; URLs (anything with a scheme), protocol-relative and rooted paths,
// and other files do not. The path is URL-decoded and resolved against the
// linking note's folder (Obsidian's "relative path" link format), giving a
// vault-relative Target; a path climbing out of the vault is no note link.
// "#fragment" becomes the heading.
func markdownLink(notePath, dest string, embed bool) (Link, bool) {
	dest = strings.TrimSpace(dest)
	if dest == "" || strings.HasPrefix(dest, "/") || strings.HasPrefix(dest, `\`) {
		return Link{}, false
	}
	if c := strings.IndexAny(dest, ":/#?"); c >= 0 && dest[c] == ':' {
		return Link{}, false // scheme: http:, mailto:, obsidian:, C:
	}
	p, frag, _ := strings.Cut(dest, "#")
	p, _, _ = strings.Cut(p, "?")
	if dp, err := url.PathUnescape(p); err == nil {
		p = dp
	}
	if df, err := url.PathUnescape(frag); err == nil {
		frag = df
	}
	if !hasMDExt(p) || strings.HasSuffix(p, "/.md") || p == ".md" {
		return Link{}, false
	}
	p = path.Join(path.Dir(strings.ReplaceAll(notePath, `\`, "/")), p)
	if p == ".." || strings.HasPrefix(p, "../") {
		return Link{}, false
	}
	return Link{Target: p, Heading: strings.TrimSpace(frag), Embed: embed, Kind: "markdown"}, true
}

// hasMDExt reports whether name ends in ".md", ignoring case.
func hasMDExt(name string) bool {
	return len(name) >= 3 && strings.EqualFold(name[len(name)-3:], ".md")
}
