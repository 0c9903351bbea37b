package search

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/blevesearch/go-porterstemmer"
)

// TestStrArena checks that the arena's strings keep their bytes when the
// bytes they were copied from change and more strings follow, and that
// strings of one block share it.
func TestStrArena(t *testing.T) {
	a := &strArena{}
	src := []byte("folder/Note one.md")
	one := a.str(src)
	copy(src, "XXXXXX")
	var more []string
	for i := range 5000 { // past a block
		more = append(more, a.str([]byte(fmt.Sprintf("path %d.md", i))))
	}
	if one != "folder/Note one.md" {
		t.Errorf("first string %q", one)
	}
	for i, s := range more {
		if want := fmt.Sprintf("path %d.md", i); s != want {
			t.Fatalf("string %d %q, want %q", i, s, want)
		}
	}
	if unsafe.StringData(more[1]) != (*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(more[0])), len(more[0]))) {
		t.Error("two strings of one block are not side by side")
	}
	if s := a.str(nil); s != "" {
		t.Errorf("empty: %q", s)
	}
	long := bytes.Repeat([]byte("x"), arenaBlock)
	if s := a.str(long); s != string(long) {
		t.Error("a string longer than a block is not kept")
	}
	var nilArena *strArena
	if s := nilArena.str([]byte("abc")); s != "abc" {
		t.Errorf("nil arena: %q", s)
	}
	b := a.bytes([]byte("stem"))
	if string(b) != "stem" || cap(b) != len(b) {
		t.Errorf("bytes %q with capacity %d, want \"stem\" that an append copies", b, cap(b))
	}
	if c := a.bytes([]byte("next")); &c[0] != (*byte)(unsafe.Add(unsafe.Pointer(&b[0]), len(b))) {
		t.Error("two byte slices of one block are not side by side")
	}
}

// TestStemCacheInBlocks checks that the stems the stemmer keeps are right,
// their words kept side by side in blocks, and that a stem handed out
// cannot be appended to in place.
func TestStemCacheInBlocks(t *testing.T) {
	f := &stemFilter{}
	words := []string{"running", "connections", "connected", "relational", "generalization", "hopeful", "kafka"}
	for _, w := range words {
		want := string(porterstemmer.StemWithoutLowerCasing([]rune(w)))
		for range 2 { // computed, then from the cache
			s := f.stem([]byte(w))
			if string(s) != want || cap(s) != len(s) {
				t.Errorf("stem of %q: %q (capacity %d), want %q that an append copies", w, s, cap(s), want)
			}
		}
	}
	held := 0
	for i := range f.shards {
		sh := &f.shards[i]
		for w, s := range sh.m {
			held++
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(sh.words.block)))
			hi := lo + uintptr(cap(sh.words.block))
			for _, p := range []uintptr{uintptr(unsafe.Pointer(unsafe.StringData(w))), uintptr(unsafe.Pointer(&s[0]))} {
				if p < lo || p >= hi {
					t.Errorf("%q or its stem %q is not in its shard's block", w, s)
				}
			}
		}
	}
	if held != len(words) {
		t.Errorf("%d words kept, want %d", held, len(words))
	}
}
