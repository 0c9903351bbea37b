package search

import (
	"encoding/hex"
	"strings"
	"time"
)

// noteRec is a note's metadata as the index keeps it in memory, one for
// every indexed note: NoteMeta in less room. The times are kept as
// numbers instead of time.Time (24 bytes each), the hash of the content as
// its 32 bytes instead of 64 hex digits, and the link keys apart (an index
// on disk reads them from its note store; linkKeysOf): 176 bytes and a
// string of 32 a note instead of 224 and one of 64, about 8 MB less live
// heap at 100,000 notes. A title that is the file's name (most notes
// have no other) is not held again: it is cut from the path when asked
// for. NoteMeta values are made from it when asked for (meta).
type noteRec struct {
	Path    string
	title   string // "" when the title is baseTitle(Path)
	Aliases []string
	Tags    []string
	Size    int64
	mtime   int64  // MTime in nanoseconds since the epoch
	date    int64  // Date in milliseconds since the epoch; 0 when none
	hash    string // Hash: its hex digits decoded when hashHex, else as is
	inHash  uint64
	outHash uint64
	lens    [numLenFields]int32
	hasLens bool
	hashHex bool
	dateUTC bool // Date was in UTC (else it is read in the local zone)
	named   bool // the title is baseTitle(Path)
}

// recOf returns the record of m, without its link keys.
func recOf(m *NoteMeta) *noteRec {
	if m == nil {
		return nil
	}
	r := &noteRec{
		Path: m.Path, Aliases: m.Aliases, Tags: m.Tags, Size: m.Size,
		mtime: m.MTime.UnixNano(), inHash: m.inHash, outHash: m.outHash,
		lens: m.lens, hasLens: m.hasLens,
	}
	if !m.Date.IsZero() {
		r.date = m.Date.UnixMilli()
		r.dateUTC = m.Date.Location() == time.UTC
	}
	r.hash, r.hashHex = packHash(m.Hash)
	if m.Title == baseTitle(m.Path) {
		r.named = true
	} else {
		r.title = m.Title
	}
	return r
}

// baseTitle is the file name of the note at p without ".md": the title of
// a note that names none of its own.
func baseTitle(p string) string {
	base := p[strings.LastIndexByte(p, '/')+1:]
	if len(base) >= 3 && strings.EqualFold(base[len(base)-3:], ".md") {
		base = base[:len(base)-3]
	}
	return base
}

// Title returns the note's title.
func (r *noteRec) Title() string {
	if r.named {
		return baseTitle(r.Path)
	}
	return r.title
}

// packHash returns the bytes of a hash of lower-case hex digits (as
// vault.Hash writes it), or h itself when it is not one.
func packHash(h string) (string, bool) {
	if len(h) != 64 {
		return h, false
	}
	var b [32]byte
	if _, err := hex.Decode(b[:], []byte(h)); err != nil || hex.EncodeToString(b[:]) != h {
		return h, false
	}
	return string(b[:]), true
}

// Hash returns the note's content hash as NoteMeta.Hash holds it.
func (r *noteRec) Hash() string {
	if r.hashHex {
		return hex.EncodeToString([]byte(r.hash))
	}
	return r.hash
}

// hashIs reports whether the note's content hash is h, without making the
// hex digits of its own.
func (r *noteRec) hashIs(h string) bool {
	if !r.hashHex {
		return r.hash == h
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
	if r.dateUTC {
		d = d.UTC()
	}
	return d
}

// meta returns the NoteMeta of the record, without link keys.
func (r *noteRec) meta() NoteMeta {
	return NoteMeta{
		Path: r.Path, Title: r.Title(), Aliases: r.Aliases, Tags: r.Tags,
		MTime: r.MTime(), Date: r.Date(), Size: r.Size, Hash: r.Hash(),
		lens: r.lens, hasLens: r.hasLens, inHash: r.inHash, outHash: r.outHash,
	}
}

// sameFile reports whether the record and m say the same of the file:
// content hash, size and modification time.
func (r *noteRec) sameFile(m *noteRec) bool {
	// A hash of hex digits is always held decoded, so equal hashes are
	// held alike.
	return r.hashHex == m.hashHex && r.hash == m.hash && r.Size == m.Size && r.mtime == m.mtime
}
