package search

import (
	"encoding/hex"
	"math"
	"time"
	"unsafe"
)

// noteRec is a note's metadata as the index keeps it in memory, one for
// every indexed note: NoteMeta in less room. The times are kept as
// numbers instead of time.Time (24 bytes each), the hash of the content as
// its 32 bytes instead of 64 hex digits, the size and the field lengths in
// 32 and 16 bits (a note past either, which no vault of notes has, keeps
// them whole in its lists' noteExt), the aliases and tags behind one
// pointer that the notes loaded with the same tags share (noteLists), and
// the link keys apart (an index on disk reads them from its note store;
// linkKeysOf): 112 bytes a note instead of 224 and a string of 64, about
// 19 MB less live heap at 100,000 notes. A title that is the file's name
// (most notes have no other) is not held again: it is cut from the path
// when asked for. Another title is held right after the path's bytes, in
// the same allocation, and found by its length (tlen): a string
// header a note less. NoteMeta values are made from it when asked for
// (meta).
type noteRec struct {
	Path    string     // its bytes followed by those of the title, unless named or longTitle
	lists   *noteLists // nil: no aliases, no tags, a hash of hex digits or none, narrow
	mtime   int64      // MTime in nanoseconds since the epoch
	date    int64      // Date in milliseconds since the epoch; 0 when none
	inHash  uint64
	outHash uint64
	hash    [32]byte             // Hash's hex digits decoded, when hashHex
	lens    [numLenFields]uint16 // the field lengths, when hasLens and not wide
	size    uint32               // Size, when not wide
	tlen    uint16               // the title's length, unless named or longTitle
	flags   recFlags
}

// recFlags are the yes-or-no facts of a noteRec, in one byte.
type recFlags uint8

const (
	hasLens   recFlags = 1 << iota
	hashHex            // else Hash is lists.ext.oddHash, or ""
	dateUTC            // Date was in UTC (else it is read in the local zone)
	named              // the title is baseTitle(Path)
	wide               // the size and field lengths are in lists.ext
	longTitle          // the title is lists.ext.title: past tlen, or the path is empty
)

// is reports whether the record has the fact f.
func (r *noteRec) is(f recFlags) bool { return r.flags&f != 0 }

// set gives the record the fact f, or takes it away.
func (r *noteRec) set(f recFlags, on bool) {
	if on {
		r.flags |= f
	} else {
		r.flags &^= f
	}
}

// noteLists are the aliases and tags of a note, and what few notes have
// (noteExt): what most notes have none of, and the notes loaded from the
// store with the same tags share. Each list is held as the pointer to its
// first element and its length, without the capacity of a slice (the
// lists are never appended to in place: their capacity is their length):
// 32 bytes instead of 56 in a class of 64, 1.6 MB less at 100,000 notes.
// The tags are held as their numbers (tagIDs).
type noteLists struct {
	aliases         *string // nil: a nil list
	tags            *uint32 // nil: a nil list
	ext             *noteExt
	nAliases, nTags uint32
}

// noteExt is what a noteRec holds for the few notes that need it: a
// content hash that is not 64 hex digits (none of vault.Hash's), the
// size and field lengths of a note past what the record holds of them,
// a title of 64 KB or more.
type noteExt struct {
	oddHash, title string
	size           int64
	lens           [numLenFields]int32
}

// listsOf returns the lists of a note, nil when it has none.
func listsOf(aliases []string, tags []uint32, ext *noteExt) *noteLists {
	if aliases == nil && tags == nil && ext == nil {
		return nil
	}
	return &noteLists{
		aliases: unsafe.SliceData(aliases), nAliases: uint32(len(aliases)),
		tags: unsafe.SliceData(tags), nTags: uint32(len(tags)),
		ext: ext,
	}
}

// setRest sets the size and field lengths of the record (lens nil: not
// known) and returns the noteExt that holds them, with oddHash and
// longTitle, when the record cannot (nil when it can and both are "").
func (r *noteRec) setRest(size int64, lens *[numLenFields]int32, oddHash, longTitle string) *noteExt {
	narrow := size >= 0 && size <= math.MaxUint32
	if lens != nil {
		for _, l := range lens {
			narrow = narrow && l >= 0 && l <= math.MaxUint16
		}
	}
	r.set(hasLens, lens != nil)
	r.set(wide, !narrow)
	var ext *noteExt
	if !narrow || oddHash != "" || longTitle != "" {
		ext = &noteExt{oddHash: oddHash, title: longTitle}
	}
	if !narrow {
		ext.size = size
		if lens != nil {
			ext.lens = *lens
		}
		return ext
	}
	r.size = uint32(size)
	if lens != nil {
		for i, l := range lens {
			r.lens[i] = uint16(l)
		}
	}
	return ext
}

// setPathTitle sets the record's path and title (the title of a note that
// names none of its own being baseTitle(path)) and returns a title that
// the record's noteExt must hold ("" when none). A title of its own is
// copied right after the path, both into the arena when not nil.
func setPathTitle[P, T ~string | ~[]byte](r *noteRec, a *strArena, path P, title T) (long string) {
	switch {
	case string(title) == string(baseTitle(path)):
		r.set(named, true)
		r.Path = arenaCopy(a, path)
		return ""
	case len(title) > math.MaxUint16 || len(path) == 0:
		r.set(longTitle, true)
		r.Path = arenaCopy(a, path)
		return string(title)
	}
	r.tlen = uint16(len(title))
	n := len(path) + len(title)
	if a.fits(n) {
		start := len(a.block)
		a.block = append(append(a.block, path...), title...)
		r.Path = unsafe.String(&a.block[start], len(path))
		return ""
	}
	b := make([]byte, 0, n)
	b = append(append(b, path...), title...)
	r.Path = unsafe.String(unsafe.SliceData(b), len(path))
	return ""
}

// Size returns the size of the note's file.
func (r *noteRec) Size() int64 {
	if r.is(wide) {
		return r.lists.ext.size
	}
	return int64(r.size)
}

// fieldLens returns the note's field lengths (lenFields), and false when
// they are not known.
func (r *noteRec) fieldLens() ([numLenFields]int32, bool) {
	var out [numLenFields]int32
	switch {
	case !r.is(hasLens):
		return out, false
	case r.is(wide):
		return r.lists.ext.lens, true
	}
	for i, l := range r.lens {
		out[i] = int32(l)
	}
	return out, true
}

// listAt returns the list of n strings from p (nil when p is nil), with
// its capacity its length.
func listAt(p *string, n uint32) []string {
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}

// names returns the note's title and then its aliases, in a new slice.
func (r *noteRec) names() []string { return append([]string{r.Title()}, r.Aliases()...) }

// Aliases returns the note's aliases (shared: not to be modified).
func (r *noteRec) Aliases() []string {
	if r.lists == nil {
		return nil
	}
	return listAt(r.lists.aliases, r.lists.nAliases)
}

// Tags returns the note's tags, in a new slice.
func (r *noteRec) Tags() []string {
	if r.lists == nil {
		return nil
	}
	return tagsAt(r.lists.tags, r.lists.nTags)
}

// recOf returns the record of m, without its link keys.
func recOf(m *NoteMeta) *noteRec {
	if m == nil {
		return nil
	}
	r := &noteRec{mtime: m.MTime.UnixNano(), inHash: m.inHash, outHash: m.outHash}
	long := setPathTitle(r, nil, m.Path, m.Title)
	if !m.Date.IsZero() {
		r.date = m.Date.UnixMilli()
		r.set(dateUTC, m.Date.Location() == time.UTC)
	}
	odd := m.Hash
	if packed, ok := hexHash(m.Hash); ok {
		r.hash, odd = packed, ""
		r.set(hashHex, true)
	}
	var lens *[numLenFields]int32
	if m.hasLens {
		lens = &m.lens
	}
	r.lists = listsOf(m.Aliases, tagIDsOf(m.Tags), r.setRest(m.Size, lens, odd, long))
	return r
}

// Title returns the note's title.
func (r *noteRec) Title() string {
	switch {
	case r.is(named):
		return baseTitle(r.Path)
	case r.is(longTitle):
		return r.lists.ext.title
	case r.tlen == 0:
		return "" // not a pointer past the path's allocation
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(r.Path)), len(r.Path))), r.tlen)
}

// hexHash returns the bytes of a hash of 64 lower-case hex digits (as
// vault.Hash writes it); false when h is not one.
func hexHash[S ~string | ~[]byte](h S) ([32]byte, bool) {
	var b [32]byte
	if len(h) != 64 {
		return b, false
	}
	for i := range b {
		hi, ok1 := hexDigit(h[2*i])
		lo, ok2 := hexDigit(h[2*i+1])
		if !ok1 || !ok2 {
			return b, false
		}
		b[i] = hi<<4 | lo
	}
	return b, true
}

// hexDigit returns the value of a lower-case hex digit.
func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// baseTitle is the file name of the note at p without ".md": the title of
// a note that names none of its own.
func baseTitle[S ~string | ~[]byte](p S) S {
	i := len(p) - 1
	for i >= 0 && p[i] != '/' {
		i--
	}
	base := p[i+1:]
	if n := len(base); n >= 3 && base[n-3] == '.' && base[n-2]|0x20 == 'm' && base[n-1]|0x20 == 'd' {
		base = base[:n-3]
	}
	return base
}

// Hash returns the note's content hash as NoteMeta.Hash holds it.
func (r *noteRec) Hash() string {
	if r.is(hashHex) {
		return hex.EncodeToString(r.hash[:])
	}
	return r.oddHash()
}

func (r *noteRec) oddHash() string {
	if r.lists == nil || r.lists.ext == nil {
		return ""
	}
	return r.lists.ext.oddHash
}

// hashIs reports whether the note's content hash is h, without making the
// hex digits of its own.
func (r *noteRec) hashIs(h string) bool {
	if !r.is(hashHex) {
		return r.oddHash() == h
	}
	if len(h) != 64 {
		return false
	}
	const digits = "0123456789abcdef"
	for i := 0; i < len(r.hash); i++ {
		if h[2*i] != digits[r.hash[i]>>4] || h[2*i+1] != digits[r.hash[i]&0xf] {
			return false
		}
	}
	return true
}

// MTime returns the note's modification time, in the local zone.
func (r *noteRec) MTime() time.Time { return time.Unix(0, r.mtime) }

// Date returns the note's own date; zero when it has none.
func (r *noteRec) Date() time.Time {
	if r.date == 0 {
		return time.Time{}
	}
	d := time.UnixMilli(r.date)
	if r.is(dateUTC) {
		d = d.UTC()
	}
	return d
}

// meta returns the NoteMeta of the record, without link keys.
func (r *noteRec) meta() NoteMeta {
	m := NoteMeta{
		Path: r.Path, Title: r.Title(), Aliases: r.Aliases(), Tags: r.Tags(),
		MTime: r.MTime(), Date: r.Date(), Size: r.Size(), Hash: r.Hash(),
		inHash: r.inHash, outHash: r.outHash,
	}
	m.lens, m.hasLens = r.fieldLens()
	return m
}

// sameFile reports whether the record and m say the same of the file:
// content hash, size and modification time.
func (r *noteRec) sameFile(m *noteRec) bool {
	// A hash of hex digits is always held decoded, so equal hashes are
	// held alike.
	return r.is(hashHex) == m.is(hashHex) && r.hash == m.hash && r.oddHash() == m.oddHash() && r.Size() == m.Size() && r.mtime == m.mtime
}
