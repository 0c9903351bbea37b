package search

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/vault"
)

func TestChunkCache(t *testing.T) {
	c := newChunkCache(4000)
	raw := func(path, body string) *vault.RawNote {
		return &vault.RawNote{Path: path, Content: []byte(body), ModTime: time.Unix(1, 0)}
	}
	a1 := c.chunks(raw("a.md", "# A\nfirst version\n"), 1500)
	a2 := c.chunks(raw("a.md", "# A\nfirst version\n"), 1500)
	if &a1[0] != &a2[0] {
		t.Error("same content parsed twice")
	}
	a3 := c.chunks(raw("a.md", "# A\nsecond version\n"), 1500)
	if !strings.Contains(a3[0].Text, "second") {
		t.Errorf("edited note served stale: %q", a3[0].Text)
	}
	if b := c.chunks(raw("b.md", "# A\nfirst version\n"), 1500); &b[0] == &a1[0] {
		t.Error("another path with the same content shares the entry")
	}
	// Fill past the budget: the least recently used entries go, the
	// budget holds, and a recently used entry stays.
	for i := range 20 {
		c.chunks(raw("a.md", "# A\nfirst version\n"), 1500) // keep a.md recent
		c.chunks(raw(fmt.Sprintf("n%d.md", i), strings.Repeat("word ", 100)), 1500)
	}
	if c.bytes > c.maxBytes {
		t.Errorf("cache holds %d bytes, budget %d", c.bytes, c.maxBytes)
	}
	if _, ok := c.m[chunkKey{path: "n0.md", sum: sumOf(strings.Repeat("word ", 100))}]; ok {
		t.Error("the oldest entry was not evicted")
	}
	if a4 := c.chunks(raw("a.md", "# A\nfirst version\n"), 1500); &a4[0] != &a1[0] {
		t.Error("a recently used entry was evicted")
	}
	// A note too large for a quarter of the budget is parsed, not kept.
	big := strings.Repeat("x", 2000)
	c.chunks(raw("big.md", big), 1500)
	if _, ok := c.m[chunkKey{path: "big.md", sum: sumOf(big)}]; ok {
		t.Error("a huge note was cached")
	}
}

func sumOf(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
