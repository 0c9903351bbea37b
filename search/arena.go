package search

import "unsafe"

// strArena copies strings into blocks of memory shared by many: the
// strings of the notes loaded from the store (one allocation for about a
// thousand paths instead of one each), the words of the title table, the
// words and stems the stemmer keeps. Kept one by one among the garbage of
// the work that made them, such strings leave most pages they are on
// empty; in blocks, they fill them. A block is never written where a
// string was handed out, so the strings stay as they were; a block is
// freed when none of its strings is held. A nil arena copies each string
// on its own.
type strArena struct {
	block []byte
	size  int // of a block; 0 means arenaBlock
}

const arenaBlock = 64 << 10

// str returns a copy of b in the arena.
func (a *strArena) str(b []byte) string { return arenaCopy(a, b) }

// bytes returns a copy of b in the arena, with its capacity its length
// (an append copies it); it must not be modified.
func (a *strArena) bytes(b []byte) []byte {
	if !a.fits(len(b)) {
		return append([]byte(nil), b...)
	}
	start := len(a.block)
	a.block = append(a.block, b...)
	return a.block[start:len(a.block):len(a.block)]
}

// fits reports whether n bytes go into the arena, with room made for them.
func (a *strArena) fits(n int) bool {
	size := arenaBlock
	if a != nil && a.size > 0 {
		size = a.size
	}
	if a == nil || n == 0 || n > size/8 {
		return false
	}
	if n > cap(a.block)-len(a.block) {
		a.block = make([]byte, 0, size)
	}
	return true
}

// arenaCopy returns a copy of b in the arena a (of its own when a is nil).
func arenaCopy[S ~string | ~[]byte](a *strArena, b S) string {
	if !a.fits(len(b)) {
		return string(b)
	}
	start := len(a.block)
	a.block = append(a.block, b...)
	return unsafe.String(&a.block[start], len(b))
}
