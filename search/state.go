package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// A note's record is its metadata (NoteMeta) in a compact binary form: the
// note store (notestore.go) keeps one for every indexed note, keyed by its
// path, and a first index spills them to a file until its notes reach
// memory. Layout, in order: title, aliases, tags (strings: uvarint length
// and bytes; lists: uvarint count and strings), mtime (varint ns), date
// (varint ms, 0 when none), size (varint), hash (string), field lengths
// (uvarint count, 0 or numLenFields, and uvarints), inbound hash and
// outbound hash (8 bytes each), link keys (list). recordFormat names this
// layout in the store: a store of another layout is rebuilt.
const recordFormat = "VAR1"

// appendNoteRecord appends the record of m, its path left out.
func appendNoteRecord(b []byte, m *NoteMeta) []byte {
	b = appendStr(b, m.Title)
	b = appendStrs(b, m.Aliases)
	b = appendStrs(b, m.Tags)
	b = binary.AppendVarint(b, m.MTime.UnixNano())
	var date int64
	if !m.Date.IsZero() {
		date = m.Date.UnixMilli()
	}
	b = binary.AppendVarint(b, date)
	b = binary.AppendVarint(b, m.Size)
	b = appendStr(b, m.Hash)
	lens := m.lens[:0]
	if m.hasLens {
		lens = m.lens[:]
	}
	b = binary.AppendUvarint(b, uint64(len(lens)))
	for _, l := range lens {
		b = binary.AppendUvarint(b, uint64(l))
	}
	b = binary.LittleEndian.AppendUint64(b, m.inHash)
	b = binary.LittleEndian.AppendUint64(b, m.outHash)
	b = binary.AppendUvarint(b, uint64(m.keys.count()))
	return append(b, m.keys...)
}

// strBytes is what appendStr writes for s.
func strBytes(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

// stateReader decodes the state record; the first error sticks.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 8 {
		r.err = errors.New("truncated hash")
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *stateReader) str() string { return string(r.raw()) }

// raw reads a string's bytes without copying them.
func (r *stateReader) raw() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errors.New("truncated string")
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// strs reads a list of strings.
func (r *stateReader) strs() []string {
	return readList(r, func(b []byte) string { return string(b) })
}

// readList reads a list of strings, each made into a T by of: the list's
// count, then each string. An empty list is nil.
func readList[T any](r *stateReader, of func([]byte) T) []T {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errors.New("truncated list")
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = of(r.raw())
	}
	return out
}

// linkKeys reads a list of strings as linkKeys: the list's count, then
// the strings as linkKeys packs them.
func (r *stateReader) linkKeys() linkKeys {
	b := r.rawLinkKeys()
	if r.err != nil || len(b) == 0 {
		return ""
	}
	return linkKeys(b)
}

// rawLinkKeys reads a list of strings and returns the bytes of its
// strings (linkKeys' layout), without copying them.
func (r *stateReader) rawLinkKeys() []byte {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errors.New("truncated list")
		return nil
	}
	all := r.b
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.raw()
	}
	if r.err != nil {
		return nil
	}
	return all[:len(all)-len(r.b)]
}

// skipList reads a list of strings without keeping it.
func (r *stateReader) skipList() {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errors.New("truncated list")
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.raw()
	}
}

// skipToLinkKeys reads the fields of a record that come before its link
// keys, keeping none.
func (r *stateReader) skipToLinkKeys() {
	r.raw()      // title
	r.skipList() // aliases
	r.skipList() // tags
	r.varint()   // mtime
	r.varint()   // date
	r.varint()   // size
	r.raw()      // hash
	nl := r.uvarint()
	if nl > uint64(len(r.b)) {
		r.err = errors.New("truncated field lengths")
	}
	for i := uint64(0); i < nl && r.err == nil; i++ {
		r.uvarint()
	}
	r.u64() // inbound hash
	r.u64() // outbound hash
}

// recordLinkKeys returns the bytes of the link keys of the record b
// (linkKeys' layout), without copying them.
func recordLinkKeys(b []byte) ([]byte, error) {
	r := &stateReader{b: b}
	r.skipToLinkKeys()
	keys := r.rawLinkKeys()
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("trailing bytes")
	}
	return keys, r.err
}

// decodeNoteRecord decodes the record of the note at path (the whole of
// b), link keys included. The strings are copied: b may be memory the
// store maps.
func decodeNoteRecord(path string, b []byte) (*NoteMeta, error) {
	rec, err := decodeNoteRec(path, b, nil, nil)
	if err != nil {
		return nil, err
	}
	m := rec.meta()
	keys, err := recordLinkKeys(b)
	if err != nil {
		return nil, err
	}
	m.keys = linkKeys(keys)
	return &m, nil
}

// tagInterner holds one copy of each list of tags read from the records
// of a store, as the tags' numbers (tagIDs): a vault has far fewer tags
// than notes carrying them, and notes share their lists (at 100,000
// generated notes, 36,000 lists for 98,500 notes with tags).
type tagInterner struct {
	ids      map[string]uint32   // the numbers of the tags met, without tagIDs' lock
	lists    map[string][]uint32 // by the list's bytes in the record
	recLists map[*uint32]*noteLists
}

func newTagInterner() *tagInterner {
	return &tagInterner{ids: map[string]uint32{}, lists: map[string][]uint32{}, recLists: map[*uint32]*noteLists{}}
}

// listsOf is the package's listsOf, the lists of the notes with tags alone
// (no aliases, a hash of hex digits) shared when in is not nil: a list of
// tags interned by tagList is one slice, so its first element tells it.
func (in *tagInterner) listsOf(aliases []string, tags []uint32, ext *noteExt) *noteLists {
	if in == nil || aliases != nil || ext != nil || len(tags) == 0 {
		return listsOf(aliases, tags, ext)
	}
	key := unsafe.SliceData(tags)
	l, ok := in.recLists[key]
	if !ok {
		l = listsOf(nil, tags, nil)
		in.recLists[key] = l
	}
	return l
}

// tagList reads a list of tags as their numbers, interned in in when not
// nil. A list's capacity is its length, so that an append copies it.
func (r *stateReader) tagList(in *tagInterner) []uint32 {
	if in == nil {
		return readList(r, func(b []byte) uint32 { return tagID(string(b)) })
	}
	start := r.b
	rest := *r
	rest.skipList()
	if rest.err != nil {
		r.err = rest.err
		return nil
	}
	raw := start[:len(start)-len(rest.b)]
	if l, ok := in.lists[string(raw)]; ok {
		r.b = rest.b
		return l
	}
	l := readList(r, func(b []byte) uint32 {
		id, ok := in.ids[string(b)]
		if !ok {
			id = tagID(string(b))
			in.ids[tagName(id)] = id
		}
		return id
	})
	in.lists[string(raw)] = l
	return l
}

// decodeNoteRec decodes the record of the note at path (the whole of b)
// into the record the index keeps in memory, without its link keys (they
// are checked and left). Tags are interned in in and the strings kept
// copied into arena, each when not nil. Nothing is allocated that is not
// kept (a title that is the file's name, the hash's hex digits, a
// NoteMeta): at 100,000 notes such short-lived objects left the objects
// kept beside them in pages a third full.
func decodeNoteRec[S ~string | ~[]byte](path S, b []byte, in *tagInterner, arena *strArena) (*noteRec, error) {
	r := &stateReader{b: b}
	m := &noteRec{}
	long := setPathTitle(m, arena, path, r.raw())
	aliases := r.strs()
	tags := r.tagList(in)
	m.mtime = r.varint()
	m.date = r.varint()
	size := r.varint()
	var odd string
	if hash := r.raw(); r.err == nil {
		if packed, ok := hexHash(hash); ok {
			m.hash = packed
			m.set(hashHex, true)
		} else {
			odd = arena.str(hash)
		}
	}
	var lens *[numLenFields]int32
	var read [numLenFields]int32
	if nl := r.uvarint(); nl > 0 {
		if nl != uint64(numLenFields) {
			return nil, fmt.Errorf("%d field lengths, want %d", nl, numLenFields)
		}
		for j := range read {
			read[j] = int32(r.uvarint())
		}
		lens = &read
	}
	m.lists = in.listsOf(aliases, tags, m.setRest(size, lens, odd, long))
	m.inHash, m.outHash = r.u64(), r.u64()
	r.rawLinkKeys()
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}
