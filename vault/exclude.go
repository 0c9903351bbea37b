package vault

import (
	"fmt"
	"path"
	"strings"
)

// pattern is one compiled exclude glob. The syntax is gitignore-like, on
// vault-relative slash paths:
//   - "*", "?" and "[...]" match within one path segment (path.Match);
//   - "**" as a whole segment matches any number of segments, including none;
//   - a pattern without a slash ("*.excalidraw.md", "drafts/") matches the
//     name at any depth; a pattern with a slash ("Archive/**", "a/b") is
//     anchored at the vault root; a leading "/" only anchors;
//   - a trailing "/" restricts the pattern to folders.
//
// A folder that matches excludes everything below it.
type pattern struct {
	raw      string
	segs     []string
	anchored bool
	dirOnly  bool
}

func compilePatterns(raw []string) ([]pattern, error) {
	var out []pattern
	for _, r := range raw {
		p := strings.TrimSpace(strings.ReplaceAll(r, `\`, "/"))
		if p == "" {
			continue
		}
		pt := pattern{raw: r}
		if strings.HasSuffix(p, "/") {
			pt.dirOnly = true
			p = strings.TrimRight(p, "/")
		}
		if strings.HasPrefix(p, "/") {
			pt.anchored = true
			p = strings.TrimLeft(p, "/")
		}
		if p == "" {
			return nil, fmt.Errorf("exclude pattern %q matches the whole vault", r)
		}
		if strings.Contains(p, "/") {
			pt.anchored = true
		}
		pt.segs = strings.Split(p, "/")
		for _, s := range pt.segs {
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("exclude pattern %q: %w", r, err)
			}
		}
		if !pt.anchored {
			pt.segs = append([]string{"**"}, pt.segs...)
		}
		out = append(out, pt)
	}
	return out, nil
}

// match reports whether the path made of segs (a folder when isDir) matches.
func (p pattern) match(segs []string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	return matchSegs(p.segs, segs)
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			pat = pat[1:]
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// Excludes are compiled exclude patterns, in the syntax of
// Options.Excludes, for filtering paths apart from a vault: a search that
// leaves some notes out without changing what the index holds.
type Excludes struct{ patterns []pattern }

// CompileExcludes compiles exclude patterns (see Options.Excludes).
func CompileExcludes(raw []string) (Excludes, error) {
	pats, err := compilePatterns(raw)
	return Excludes{patterns: pats}, err
}

// Empty reports whether e excludes nothing.
func (e Excludes) Empty() bool { return len(e.patterns) == 0 }

// Match reports whether the note at the vault-relative slash path rel is
// excluded: by a pattern on its name or on one of its folders.
func (e Excludes) Match(rel string) bool {
	if len(e.patterns) == 0 {
		return false
	}
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	for i := range segs {
		for _, p := range e.patterns {
			if p.match(segs[:i+1], i < len(segs)-1) {
				return true
			}
		}
	}
	return false
}
