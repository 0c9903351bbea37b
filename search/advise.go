package search

import (
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// Bleve reads the segments of an index on disk through mappings of their
// files. A search reads small scattered pieces of each (the dictionary
// nodes of its words, their postings, the paths of its hits), but by
// default the kernel reads ahead around every page a search faults in and
// maps what it read into the process: on an index not in the page cache,
// a few hundred kilobytes of resident memory for each four-kilobyte piece,
// so that the resident memory of a server grows with the index rather
// than with what its searches read. Each segment's mapping is advised as
// read at random (no read-ahead) before searches read it.

// segmentAdvice remembers the segments already advised.
type segmentAdvice struct {
	mu sync.Mutex
	// segs are the mapped segments of the last snapshot seen, advised;
	// holding them keeps a segment that is gone from being taken for a
	// new one at the same address.
	segs map[mappedSegment]bool
}

// mappedSegment is a segment read through a mapping of its file (zap's).
type mappedSegment interface{ Data() []byte }

// adviseSegments advises the mapped segments of idx's current snapshot
// that were not advised yet. Called with idxMu held for reading.
func (a *segmentAdvice) adviseSegments(idx bleve.Index) {
	mapped, done := mappedSegments(idx)
	// The reader holds the snapshot's segments, so none is unmapped while
	// it is advised.
	defer done()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !slices.ContainsFunc(mapped, func(m mappedSegment) bool { return !a.segs[m] }) {
		return
	}
	// Something new: keep only the current segments.
	next := make(map[mappedSegment]bool, len(mapped))
	for _, m := range mapped {
		if !a.segs[m] {
			adviseRandom(m.Data())
		}
		next[m] = true
	}
	a.segs = next
}

// mappedSegments returns the mapped segments of idx's current snapshot,
// and the func that lets the snapshot go: until it is called, none of them
// is unmapped.
func mappedSegments(idx bleve.Index) (segs []mappedSegment, done func()) {
	done = func() {}
	adv, err := idx.Advanced()
	if err != nil {
		return nil, done
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil, done
	}
	r, err := s.Reader()
	if err != nil {
		return nil, done
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		r.Close()
		return nil, done
	}
	for _, ss := range snap.Segments() {
		if m, ok := ss.Segment().(mappedSegment); ok {
			segs = append(segs, m)
		}
	}
	return segs, func() { r.Close() }
}
