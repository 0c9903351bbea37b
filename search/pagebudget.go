package search

import "sync/atomic"

// The pages a search reads from the segments stay mapped in the process
// after it (64 KB around each page read, from the page cache): over a
// thousand searches of a 100,000-note index, 150-200 MB of resident memory
// that holds nothing the next search needs more than the page cache does.
// The idle release (idle.go) gives them back when the searches pause; while
// they go on, a search that finds the process's file-backed resident
// memory grown by more than segmentPageBudget since the last release
// releases them too, before it returns (a madvise over the mappings). The
// pages stay in the page cache: the searches after it map what they read
// again with minor faults, no disk read.

// segmentPageBudget is how far the file-backed resident memory may grow
// past what it was after the last release before the searches release the
// segments' pages. A variable for tests.
var segmentPageBudget int64 = 32 << 20

// pageBudget follows the file-backed resident memory of the process for
// the release of the segments' pages between searches.
type pageBudget struct {
	// base is the file-backed resident bytes after the last release (or
	// before the first search), the least seen since; 0 before the first
	// reading.
	base atomic.Int64
	// releasing is set while a release runs, so that the searches ending
	// meanwhile start no other.
	releasing atomic.Bool
	releases  atomic.Int64 // releases of the budget (tests)
}

// beforeSearch takes the first reading of the file-backed resident memory,
// so that the pages of the first searches count against the budget.
func (ix *Index) beforeSearch() {
	if ix.path == "" || ix.pages.base.Load() != 0 {
		return
	}
	if n, ok := fileResident(); ok {
		ix.pages.base.CompareAndSwap(0, n)
	}
}

// afterSearch releases the segments' pages when the file-backed resident
// memory has grown past the budget since the last release.
func (ix *Index) afterSearch() {
	if ix.path == "" {
		return
	}
	n, ok := fileResident()
	if !ok {
		return
	}
	base := ix.pages.base.Load()
	if n < base || base == 0 {
		// Pages went elsewhere (the idle release, the executable's pages
		// dropped, the kernel's reclaim): count from here.
		ix.pages.base.CompareAndSwap(base, n)
		return
	}
	if n-base <= segmentPageBudget || !ix.pages.releasing.CompareAndSwap(false, true) {
		return
	}
	defer ix.pages.releasing.Store(false)
	ix.releaseSegmentPages()
	ix.pages.releases.Add(1)
}

// releaseSegmentPages unmaps the pages mapped from the current segments
// and counts the budget from what is left.
func (ix *Index) releaseSegmentPages() {
	ix.idxMu.RLock()
	defer ix.idxMu.RUnlock()
	if ix.idx == nil {
		return
	}
	segs, done := mappedSegments(ix.idx)
	defer done()
	for _, m := range segs {
		releasePages(m.Data())
	}
	if n, ok := fileResident(); ok {
		ix.pages.base.Store(n)
	}
}
