package semantic

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"slices"
)

// errDamaged marks a vector store file that is not a sound bbolt file:
// moved aside and rebuilt (vectors can always be made again).
var errDamaged = errors.New("the vector store is damaged")

// checkStoreFile reads the bbolt file at path the way bbolt would, with
// plain reads, and reports errDamaged when bbolt could not use it safely:
// no valid meta page, or a page reached from the root that is out of the
// file, reached twice (a cycle), of the wrong kind, or whose elements point
// outside it; a freelist naming pages out of the file. bbolt trusts its
// file: it reads pages through a memory map without bounds checks, so a
// damaged one makes it fail an assertion (a panic), fault on memory out of
// the map or recurse without end (both fatal, beyond recover). A file that
// passes can be opened and walked; its values may still be wrong, which
// decodeVec and decodeNote check.
func checkStoreFile(path string) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	c := &fileCheck{f: f, size: st.Size()}
	if c.data, err = mapFile(f, c.size); err == nil && c.data != nil {
		defer unmapFile(c.data)
		// A fault on the map (the file cut short meanwhile) is a panic,
		// not the end of the process.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: %v", errDamaged, r)
			}
		}()
	}
	if err := c.meta(); err != nil {
		return fmt.Errorf("%w: %v", errDamaged, err)
	}
	c.seen = make([]uint64, c.hwm/64+1)
	if err := c.trees(); err != nil {
		return fmt.Errorf("%w: %v", errDamaged, err)
	}
	if err := c.freelist(); err != nil {
		return fmt.Errorf("%w: %v", errDamaged, err)
	}
	return nil
}

// The bbolt file format (go.etcd.io/bbolt, file version 2): pages of
// pageSize bytes, each starting with a 16-byte header (id uint64, flags
// uint16, count uint16, overflow uint32), native byte order; pages 0 and 1
// are meta pages.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeader       = 16
	elementSize      = 16
	branchPage       = 0x01
	leafPage         = 0x02
	metaPage         = 0x04
	freelistPage     = 0x10
	bucketLeaf       = 0x01
	noFreelist       = ^uint64(0)
	maxTreeDepth     = 64
	metaChecksumSpan = 56 // the meta's bytes before its checksum
)

var le = binary.LittleEndian

type fileCheck struct {
	f        *os.File
	size     int64
	pageSize int64
	hwm      uint64   // pages below it are in use
	root     uint64   // the root bucket's page
	free     uint64   // the freelist's page
	seen     []uint64 // a bit for each page reached

	// The file is read through a read-only map of it where there is one
	// (only the pages' headers and element tables are touched), else
	// through a window that trees' levels, read in file order, move along
	// nearly sequentially.
	data   []byte
	win    []byte
	winOff int64
}

// windowSize is how much of the file one read brings in.
const windowSize = 1 << 20

// read returns n bytes of the file at off, from the window when it holds
// them.
func (c *fileCheck) read(off, n int64) ([]byte, error) {
	if c.data != nil {
		if off < 0 || n < 0 || off+n > int64(len(c.data)) {
			return nil, io.ErrUnexpectedEOF
		}
		return c.data[off : off+n : off+n], nil
	}
	if off >= c.winOff && off+n <= c.winOff+int64(len(c.win)) {
		return c.win[off-c.winOff : off-c.winOff+n], nil
	}
	if n > windowSize {
		b := make([]byte, n)
		_, err := c.f.ReadAt(b, off)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	if c.win == nil {
		c.win = make([]byte, windowSize)
	}
	c.win = c.win[:cap(c.win)]
	k, err := c.f.ReadAt(c.win, off)
	c.win, c.winOff = c.win[:k], off
	if int64(k) < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return c.win[:n], nil
}

func (c *fileCheck) reached(p uint64) bool { return c.seen[p/64]&(1<<(p%64)) != 0 }
func (c *fileCheck) reach(p uint64)        { c.seen[p/64] |= 1 << (p % 64) }

// meta picks the valid meta page with the highest transaction id, as bbolt
// does, and takes the page size, root and high-water mark from it.
func (c *fileCheck) meta() error {
	type meta struct {
		pageSize, root, free, hwm, txid uint64
	}
	read := func(off int64) (meta, bool) {
		b, err := c.read(off, pageHeader+metaChecksumSpan+8)
		if err != nil {
			return meta{}, false
		}
		m := b[pageHeader:]
		h := fnv.New64a()
		h.Write(m[:metaChecksumSpan])
		if le.Uint16(b[8:]) != metaPage || le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltVersion || le.Uint64(m[metaChecksumSpan:]) != h.Sum64() {
			return meta{}, false
		}
		return meta{pageSize: uint64(le.Uint32(m[8:])), root: le.Uint64(m[16:]), free: le.Uint64(m[32:]), hwm: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, true
	}
	m0, ok0 := read(0)
	ps := int64(os.Getpagesize())
	if ok0 {
		ps = int64(m0.pageSize)
	}
	m1, ok1 := read(ps)
	var m meta
	switch {
	case ok0 && ok1 && m1.txid > m0.txid, !ok0 && ok1:
		m = m1
	case ok0:
		m = m0
	default:
		return errors.New("no valid meta page")
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 {
		return fmt.Errorf("page size %d", m.pageSize)
	}
	c.pageSize, c.root, c.free, c.hwm = int64(m.pageSize), m.root, m.free, m.hwm
	if c.hwm < 2 || c.hwm > uint64(c.size/c.pageSize) {
		return fmt.Errorf("%d pages in use, the file holds %d", c.hwm, c.size/c.pageSize)
	}
	return nil
}

// page reads the page id (with its overflow pages), checking that it is in
// the file, below the high-water mark, not reached before, and of kind
// flags.
func (c *fileCheck) page(id uint64, flags uint16) ([]byte, error) {
	if id < 2 || id >= c.hwm {
		return nil, fmt.Errorf("page %d is out of the file (%d pages)", id, c.hwm)
	}
	h, err := c.read(int64(id)*c.pageSize, pageHeader)
	if err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	overflow := uint64(le.Uint32(h[12:]))
	switch {
	case le.Uint64(h[0:]) != id:
		return nil, fmt.Errorf("page %d says it is page %d", id, le.Uint64(h[0:]))
	case le.Uint16(h[8:]) != flags:
		return nil, fmt.Errorf("page %d is of kind %#x, want %#x", id, le.Uint16(h[8:]), flags)
	case overflow >= c.hwm-id:
		return nil, fmt.Errorf("page %d overflows out of the file", id)
	}
	for p := id; p <= id+overflow; p++ {
		if c.reached(p) {
			return nil, fmt.Errorf("page %d is reached twice", p)
		}
		c.reach(p)
	}
	b, err := c.read(int64(id)*c.pageSize, int64(overflow+1)*c.pageSize)
	if err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	return b, nil
}

// treeRef is a page of a bucket's tree still to check: level is its
// depth in its tree, depth how deep its bucket is nested.
type treeRef struct {
	id           uint64
	level, depth int
}

// trees checks the B+trees of every bucket, from the root bucket's page
// down, a level at a time: each level's pages are read in the order of
// the file, so that the whole file is read nearly sequentially, in few
// calls, whatever order copy-on-write left its pages in.
func (c *fileCheck) trees() error {
	level := []treeRef{{id: c.root}}
	for len(level) > 0 {
		slices.SortFunc(level, func(a, b treeRef) int { return cmp.Compare(a.id, b.id) })
		var next []treeRef
		for _, r := range level {
			if r.id < 2 || r.id >= c.hwm {
				return fmt.Errorf("page %d is out of the file (%d pages)", r.id, c.hwm)
			}
			h, err := c.read(int64(r.id)*c.pageSize, pageHeader)
			if err != nil {
				return fmt.Errorf("page %d: %v", r.id, err)
			}
			flags := le.Uint16(h[8:])
			if flags != branchPage && flags != leafPage {
				return fmt.Errorf("page %d is of kind %#x, not a tree page", r.id, flags)
			}
			b, err := c.page(r.id, flags)
			if err != nil {
				return err
			}
			if flags == leafPage {
				if next, err = c.leaf(b, r.depth, next); err != nil {
					return fmt.Errorf("page %d: %v", r.id, err)
				}
				continue
			}
			n := int(le.Uint16(b[10:]))
			if n == 0 {
				return fmt.Errorf("branch page %d is empty", r.id)
			}
			if r.level+1 > maxTreeDepth {
				return errors.New("a tree is too deep")
			}
			for i := range n {
				at := pageHeader + i*elementSize
				if at+elementSize > len(b) {
					return fmt.Errorf("branch page %d: element %d is out of the page", r.id, i)
				}
				e := b[at:]
				if end := uint64(at) + uint64(le.Uint32(e[0:])) + uint64(le.Uint32(e[4:])); end > uint64(len(b)) {
					return fmt.Errorf("branch page %d: key %d is out of the page", r.id, i)
				}
				next = append(next, treeRef{id: le.Uint64(e[8:]), level: r.level + 1, depth: r.depth})
			}
		}
		level = next
	}
	return nil
}

// leaf checks the elements of a leaf page (or an inline bucket's page) b,
// of a bucket nested depth deep, and adds the trees of the buckets it
// holds to next.
func (c *fileCheck) leaf(b []byte, depth int, next []treeRef) ([]treeRef, error) {
	if len(b) < pageHeader {
		return next, errors.New("an inline bucket is cut short")
	}
	n := int(le.Uint16(b[10:]))
	for i := range n {
		at := pageHeader + i*elementSize
		if at+elementSize > len(b) {
			return next, fmt.Errorf("leaf element %d is out of its page", i)
		}
		e := b[at:]
		start := uint64(at) + uint64(le.Uint32(e[4:]))
		kend := start + uint64(le.Uint32(e[8:]))
		vend := kend + uint64(le.Uint32(e[12:]))
		if vend > uint64(len(b)) {
			return next, fmt.Errorf("leaf element %d is out of its page", i)
		}
		if le.Uint32(e[0:])&bucketLeaf == 0 {
			continue
		}
		v := b[kend:vend]
		if len(v) < 16 {
			return next, fmt.Errorf("leaf element %d: a bucket header is cut short", i)
		}
		if depth+1 > maxTreeDepth {
			return next, errors.New("buckets are nested too deep")
		}
		if root := le.Uint64(v); root != 0 {
			next = append(next, treeRef{id: root, depth: depth + 1})
			continue
		}
		inline := v[16:]
		if len(inline) < pageHeader || le.Uint16(inline[8:]) != leafPage {
			return next, fmt.Errorf("leaf element %d: an inline bucket is not a leaf page", i)
		}
		var err error
		if next, err = c.leaf(inline, depth+1, next); err != nil {
			return next, err
		}
	}
	return next, nil
}

// freelist checks the freelist page: the pages it names are in the file
// and in no tree. It runs after the trees are walked.
func (c *fileCheck) freelist() error {
	if c.free == noFreelist {
		return nil
	}
	b, err := c.page(c.free, freelistPage)
	if err != nil {
		return err
	}
	n, at := uint64(le.Uint16(b[10:])), pageHeader
	if n == 0xFFFF {
		if len(b) < pageHeader+8 {
			return errors.New("the freelist is cut short")
		}
		n, at = le.Uint64(b[pageHeader:]), pageHeader+8
	}
	if n > uint64(len(b)-at)/8 {
		return fmt.Errorf("the freelist names %d pages, its page holds fewer", n)
	}
	for i := range n {
		id := le.Uint64(b[at+int(i)*8:])
		switch {
		case id < 2 || id >= c.hwm:
			return fmt.Errorf("the freelist names page %d, out of the file", id)
		case c.reached(id):
			// bbolt would hand it out again and write over a page in use.
			return fmt.Errorf("the freelist names page %d, which is in use", id)
		}
	}
	return nil
}
