package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The state record lists every indexed note with its metadata (NoteMeta).
// It is written with every batch, in the same bleve batch as the documents
// (see sync.go), so it is encoded in a compact binary form rather than
// JSON: a save re-encodes it whole, and JSON took tens of milliseconds for
// 10,000 notes. Layout: the magic "VAS1", the number of notes, then per
// note, in order: path, title, aliases, tags (strings: uvarint length and
// bytes; lists: uvarint count and strings), mtime (varint ns), date
// (varint ms, 0 when none), size (varint), hash (string), field lengths
// (uvarint count and uvarints), inbound hash and outbound hash (8 bytes
// each), link keys (list).
const stateMagic = "VAS1"

// encodeState serializes meta with the pending changes applied (a nil value
// in pending deletes the path).
func encodeState(meta map[string]*NoteMeta, pending map[string]*NoteMeta) []byte {
	b, _, _ := encodeStateAfter(nil, meta, pending) // only reading a spill fails
	return b
}

// encodeStateAfter is encodeState with the notes of spill (when not nil)
// first; spilled is the part of the record that holds them.
func encodeStateAfter(spill *metaSpill, meta, pending map[string]*NoteMeta) (state, spilled []byte, err error) {
	// Sized from above in one pass, so the record (a third of a kilobyte
	// a note, held in memory by the index while it is current) is
	// allocated once and without the slack of growing by doubling.
	n, size := 0, 16
	if spill != nil {
		n, size = spill.n, size+spill.size
	}
	for p, m := range meta {
		if _, ok := pending[p]; !ok {
			n++
			size += stateSizeBound(m)
		}
	}
	for _, m := range pending {
		if m != nil {
			n++
			size += stateSizeBound(m)
		}
	}
	b := appendStateHeader(make([]byte, 0, size), n)
	if spill != nil {
		start := len(b)
		if b, err = spill.appendTo(b); err != nil {
			return nil, nil, err
		}
		spilled = b[start:len(b):len(b)]
	}
	for p, m := range meta {
		if _, ok := pending[p]; !ok {
			b = appendNoteState(b, m)
		}
	}
	for _, m := range pending {
		if m != nil {
			b = appendNoteState(b, m)
		}
	}
	return b, spilled, nil
}

// appendStateHeader appends the start of a state record of n notes.
func appendStateHeader(b []byte, n int) []byte {
	b = append(b, stateMagic...)
	return binary.AppendUvarint(b, uint64(n))
}

// appendNoteState appends the record of one note.
func appendNoteState(b []byte, m *NoteMeta) []byte {
	b = appendStr(b, m.Path)
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

// stateSizeBound is at least the bytes encodeState writes for m: the
// strings and counts exactly, each time and size as the longest varint.
func stateSizeBound(m *NoteMeta) int {
	size := strBytes(m.Path) + strBytes(m.Title) + strBytes(m.Hash) + 3*binary.MaxVarintLen64 + 16
	size += uvarintLen(uint64(numLenFields)) // the count of field lengths, 0 or numLenFields
	if m.hasLens {
		for _, l := range m.lens {
			size += uvarintLen(uint64(l))
		}
	}
	size += binary.MaxVarintLen64 + len(m.keys)
	for _, ss := range [][]string{m.Aliases, m.Tags} {
		size += uvarintLen(uint64(len(ss)))
		for _, s := range ss {
			size += strBytes(s)
		}
	}
	return size
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

func (r *stateReader) strs() []string {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errors.New("truncated list")
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// linkKeys reads a list of strings as linkKeys: the list's count, then
// the strings as linkKeys packs them.
func (r *stateReader) linkKeys() linkKeys {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = errors.New("truncated list")
		return ""
	}
	all := r.b
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.raw()
	}
	if r.err != nil {
		return ""
	}
	return linkKeys(all[:len(all)-len(r.b)])
}

func decodeState(b []byte) ([]*NoteMeta, error) {
	if len(b) == 0 {
		return nil, errors.New("missing")
	}
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, errors.New("unknown format")
	}
	r := &stateReader{b: b[len(stateMagic):]}
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errors.New("bad note count")
	}
	if r.err != nil {
		return nil, r.err
	}
	return decodeNotes(r.b, n)
}

// decodeNotes decodes n note records (appendNoteState) that b holds.
func decodeNotes(b []byte, n uint64) ([]*NoteMeta, error) {
	r := &stateReader{b: b}
	out := make([]*NoteMeta, 0, min(n, uint64(len(b))))
	for i := uint64(0); r.err == nil && i < n; i++ {
		m := &NoteMeta{Path: r.str(), Title: r.str(), Aliases: r.strs(), Tags: r.strs()}
		m.MTime = time.Unix(0, r.varint())
		if d := r.varint(); d != 0 {
			m.Date = time.UnixMilli(d)
		}
		m.Size = r.varint()
		m.Hash = r.str()
		if nl := r.uvarint(); nl > 0 {
			if nl != uint64(numLenFields) {
				r.err = fmt.Errorf("%d field lengths, want %d", nl, numLenFields)
				break
			}
			for j := range m.lens {
				m.lens[j] = int32(r.uvarint())
			}
			m.hasLens = true
		}
		m.inHash, m.outHash = r.u64(), r.u64()
		m.keys = r.linkKeys()
		out = append(out, m)
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}
