package search

// A serving index keeps mapped the pages of the segments its searches read
// (from the page cache, 64 KB around each page read: at 100,000 notes over
// a hundred megabytes after a thousand searches, a third of the process).
// When the process goes idle (internal/memtrim.WhenIdle, which the
// front-ends run, calls the releases registered with memtrim.OnIdle before
// it returns the free heap) the index unmaps them: they stay in the page
// cache, and the next search maps what it reads again without reading the
// disk.

// ReleaseIdle unmaps the pages the searches mapped from the current
// segments. Open registers it with memtrim.OnIdle; any goroutine may call
// it. A change at work (a sync, a watcher batch) is left alone: the next
// idle spell releases.
func (ix *Index) ReleaseIdle() {
	if ix.indexing.Load() || !ix.writeMu.TryLock() {
		return
	}
	ix.writeMu.Unlock()
	ix.releaseSegmentPages()
}
