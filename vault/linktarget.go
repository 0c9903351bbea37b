package vault

import (
	"path"
	"strings"
)

// LinkTarget is the shortest [[wikilink]] target that names the note at p
// alone among paths, as LookupIn resolves it: the basename without ".md"
// when no other note has it (in any case), else the shortest tail of the
// path that no other note's path ends with, else the whole path without
// ".md". A name in a citation must open the note cited, not ask which one.
func LinkTarget(p string, paths []string) string {
	base := stripMD(path.Base(p))
	var same []string // the other notes with this basename, lower-cased, without .md
	for _, q := range paths {
		// Compared without allocating: this runs over every note of the
		// vault for each note read.
		qb := stripMD(q[strings.LastIndexByte(q, '/')+1:])
		if len(qb) == len(base) && q != p && strings.EqualFold(qb, base) {
			same = append(same, strings.ToLower(stripMD(q)))
		}
	}
	full := stripMD(p)
	if len(same) == 0 {
		return base
	}
	segs := strings.Split(full, "/")
	for n := 2; n < len(segs); n++ {
		tail := strings.Join(segs[len(segs)-n:], "/")
		key := strings.ToLower(tail)
		unique := true
		for _, q := range same {
			if q == key || strings.HasSuffix(q, "/"+key) {
				unique = false
				break
			}
		}
		if unique {
			return tail
		}
	}
	return full
}
