package vault

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxSuggestions caps the "did you mean" list of a failed lookup.
const maxSuggestions = 5

// LookupIn resolves what a person or a model typed to one of paths
// (vault-relative slash paths of notes). It tries, in order, and stops at
// the first rule that matches anything:
//
//  1. the exact path, then the path plus ".md";
//  2. the same, ignoring case;
//  3. for a bare name, the basename without ".md", ignoring case;
//  4. for a name with folders, a path tail ("alpha/design" matches
//     "projects/alpha/design.md"), ignoring case.
//
// Wikilink forms are accepted: "[[Note]]", "![[Note]]", "[[Note|alias]]",
// "[[Note#Heading]]". A rule matching several paths gives an
// *AmbiguousError with the sorted candidates; no match gives an error
// wrapping ErrNotFound that lists up to five close names.
func LookupIn(name string, paths []string) (string, error) {
	raw := normalizeRaw(name)
	if raw == "" {
		return "", fmt.Errorf("note name %q: %w: the name is empty", name, ErrNotFound)
	}
	for _, p := range paths {
		if p == raw {
			return p, nil
		}
	}
	q := stripWikilink(raw)
	if q == "" {
		return "", fmt.Errorf("note name %q: %w: the name is empty", name, ErrNotFound)
	}
	for _, p := range paths {
		if p == q || p == q+".md" {
			return p, nil
		}
	}
	key := strings.ToLower(stripMD(q))
	rules := []func(p string) bool{
		func(p string) bool { return strings.ToLower(stripMD(p)) == key },
	}
	if !strings.Contains(key, "/") {
		rules = append(rules, func(p string) bool { return strings.ToLower(stripMD(path.Base(p))) == key })
	} else {
		rules = append(rules, func(p string) bool { return strings.HasSuffix(strings.ToLower(stripMD(p)), "/"+key) })
	}
	for _, rule := range rules {
		var found []string
		for _, p := range paths {
			if rule(p) {
				found = append(found, p)
			}
		}
		found = dedupe(found, nil)
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		default:
			sort.Strings(found)
			return "", &AmbiguousError{Name: name, Candidates: found}
		}
	}
	return "", notFound(name, key, paths)
}

// normalizeRaw trims blanks, turns backslashes into slashes and drops a
// leading "./" or "/", without touching wikilink syntax.
func normalizeRaw(name string) string {
	s := strings.TrimSpace(strings.ReplaceAll(name, `\`, "/"))
	for {
		switch {
		case strings.HasPrefix(s, "./"):
			s = s[2:]
		case strings.HasPrefix(s, "/"):
			s = s[1:]
		default:
			return s
		}
	}
}

// stripWikilink reduces "![[target#heading|alias]]" to "target". Obsidian
// forbids '#', '|', '[' and ']' in file names, so cutting at them is safe
// once the exact path has had its chance.
func stripWikilink(s string) string {
	s = strings.TrimPrefix(s, "!")
	s = strings.TrimPrefix(s, "[[")
	s = strings.TrimSuffix(s, "]]")
	s, _, _ = strings.Cut(s, "|")
	s, _, _ = strings.Cut(s, "#")
	return normalizeRaw(s)
}

func stripMD(p string) string {
	if hasMDExt(p) {
		return p[:len(p)-3]
	}
	return p
}

// notFound builds the ErrNotFound error with the closest names.
func notFound(name, key string, paths []string) error {
	type cand struct {
		path string
		dist int
	}
	limit := max(2, utf8.RuneCountInString(key)/3)
	var cands []cand
	for _, p := range paths {
		full := strings.ToLower(stripMD(p))
		base := strings.ToLower(stripMD(path.Base(p)))
		d := min(EditDistance(key, full, limit+1), EditDistance(key, base, limit+1))
		if d > 1 && len(key) >= 3 && strings.Contains(full, key) {
			d = 1 // a fragment of the name is a good hint too
		}
		if d <= limit {
			cands = append(cands, cand{p, d})
		}
	}
	if len(cands) == 0 {
		return fmt.Errorf("note %q: %w", name, ErrNotFound)
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].path < cands[j].path
	})
	if len(cands) > maxSuggestions {
		cands = cands[:maxSuggestions]
	}
	quoted := make([]string, len(cands))
	for i, c := range cands {
		quoted[i] = strconv.Quote(c.path)
	}
	return fmt.Errorf("note %q: %w; did you mean %s?", name, ErrNotFound, strings.Join(quoted, ", "))
}

// EditDistance is the Levenshtein distance between a and b in runes; it
// returns early with a value >= bound once the distance must exceed it.
func EditDistance(a, b string, bound int) int { return editDistance(a, b, bound, false) }

// OSADistance is the optimal string alignment distance between a and b in
// runes: Levenshtein with a swap of two adjacent runes as one edit
// ("zettlekasten" is one edit from "zettelkasten"). It returns early with a
// value >= bound once the distance must exceed it.
func OSADistance(a, b string, bound int) int { return editDistance(a, b, bound, true) }

func editDistance(a, b string, bound int, swaps bool) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d >= bound || -d >= bound {
		return bound
	}
	prev2 := make([]int, len(rb)+1) // the row before prev, for swaps
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if swaps && i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= bound {
			return bound
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], bound)
}

// Lookup resolves name against the notes of the vault (see LookupIn). An
// exact existing note path is answered without walking the vault.
func (v *Vault) Lookup(ctx context.Context, name string) (string, error) {
	raw := normalizeRaw(name)
	for _, cand := range []string{raw, stripWikilink(raw), stripWikilink(raw) + ".md"} {
		if p, ok := v.existingNote(cand); ok {
			return p, nil
		}
	}
	var paths []string
	err := v.Walk(ctx, func(fi FileInfo) error {
		paths = append(paths, fi.Path)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("look up note %q: %w", name, err)
	}
	return LookupIn(name, paths)
}

// existingNote reports whether rel names an indexable note that exists.
func (v *Vault) existingNote(rel string) (string, bool) {
	c, err := cleanRel(rel)
	if err != nil || c == "." || v.Ignored(c, false) {
		return "", false
	}
	abs, err := v.Resolve(c)
	if err != nil {
		return "", false
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			v.log.Debug("lookup stat failed", "path", c, "err", err)
		}
		return "", false
	}
	return c, true
}
