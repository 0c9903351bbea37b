package search

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// metaSpill holds the metadata of the notes a first index (or a rebuild)
// has written, as state records (appendNoteState), out of the Go heap when
// it has a folder: a file in the folder of the link scan, beside the index.
// Kept as objects, the metadata of a 100,000-note vault (forty megabytes of
// paths, titles, hashes and link keys) grows the live heap the whole time
// the index is built, and with it the memory limit of a bulk sync and the
// work of every collection. The last batch writes the state record from
// it, and the index takes the notes from that record (loadSpill).
type metaSpill struct {
	n    int      // records
	size int      // their bytes
	f    *os.File // nil: in memory
	w    *bufio.Writer
	mem  []byte
	rec  []byte // one record being encoded
}

// newMetaSpill spills to a file in dir, or to memory when dir is "".
func newMetaSpill(dir string) (*metaSpill, error) {
	s := &metaSpill{}
	if dir == "" {
		return s, nil
	}
	f, err := os.Create(filepath.Join(dir, "notes"))
	if err != nil {
		return nil, fmt.Errorf("note metadata: %w", err)
	}
	s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
	return s, nil
}

func (s *metaSpill) add(m *NoteMeta) error {
	s.rec = appendNoteState(s.rec[:0], m)
	s.n++
	s.size += len(s.rec)
	if s.f == nil {
		s.mem = append(s.mem, s.rec...)
		return nil
	}
	if _, err := s.w.Write(s.rec); err != nil {
		return fmt.Errorf("note metadata: %w", err)
	}
	return nil
}

// appendTo appends the records to b.
func (s *metaSpill) appendTo(b []byte) ([]byte, error) {
	if s.f == nil {
		return append(b, s.mem...), nil
	}
	if err := s.w.Flush(); err != nil {
		return b, fmt.Errorf("note metadata: %w", err)
	}
	start := len(b)
	b = slices.Grow(b, s.size)[:start+s.size]
	if _, err := s.f.ReadAt(b[start:], 0); err != nil {
		return b[:start], fmt.Errorf("note metadata: %w", err)
	}
	return b, nil
}

func (s *metaSpill) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
	}
	s.mem = nil
}
