package search

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"github.com/vault-agent/vault-agent/vault"
)

// chunkCache keeps the parsed chunks of recently searched notes, their text
// rendered for display (displayText), keyed by
// path and content hash, so a note found again (the agent searching around
// a topic, a host re-running a query as the user types) is not parsed
// again. The file is still read every time, so an edit is never served
// stale. It holds at most maxBytes of note text, least recently used out
// first. Safe for concurrent use.
type chunkCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	ll       *list.List // of *chunkEntry, most recent first
	m        map[chunkKey]*list.Element
}

type chunkKey struct {
	path string
	sum  [sha256.Size]byte
}

type chunkEntry struct {
	key    chunkKey
	chunks []snipChunk
	size   int
}

// snipChunk is a chunk as snippets use it: its text rendered for display,
// and whether it has prose (more than headings) as written.
type snipChunk struct {
	vault.Chunk
	prose bool
}

// defaultChunkCacheBytes bounds the cached note text.
const defaultChunkCacheBytes = 8 << 20

func newChunkCache(maxBytes int) *chunkCache {
	return &chunkCache{maxBytes: maxBytes, ll: list.New(), m: map[chunkKey]*list.Element{}}
}

// chunks returns the chunks of raw, their text rendered for display,
// parsing it on a miss.
func (c *chunkCache) chunks(raw *vault.RawNote, chunkSize int) []snipChunk {
	key := chunkKey{path: raw.Path, sum: sha256.Sum256(raw.Content)}
	c.mu.Lock()
	if el, ok := c.m[key]; ok {
		c.ll.MoveToFront(el)
		ch := el.Value.(*chunkEntry).chunks
		c.mu.Unlock()
		return ch
	}
	c.mu.Unlock()

	parsed := vault.Parse(raw.Path, raw.Content, raw.ModTime, chunkSize).Chunks
	ch := make([]snipChunk, len(parsed))
	for i, p := range parsed {
		ch[i] = snipChunk{Chunk: p, prose: hasProse(p.Text)}
		ch[i].Text = displayText(p.Text)
	}
	size := len(raw.Content)
	if size > c.maxBytes/4 {
		return ch // too big to be worth a quarter of the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return ch // another search parsed it meanwhile
	}
	c.m[key] = c.ll.PushFront(&chunkEntry{key: key, chunks: ch, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		last := c.ll.Back()
		e := last.Value.(*chunkEntry)
		c.ll.Remove(last)
		delete(c.m, e.key)
		c.bytes -= e.size
	}
	return ch
}
