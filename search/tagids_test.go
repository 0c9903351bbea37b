package search

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// TestTagIDs checks that a tag keeps one number, that numbers read back as
// their tags while other goroutines number new ones (run with -race), and
// that lists keep nil apart from empty.
func TestTagIDs(t *testing.T) {
	for _, tt := range []struct {
		name string
		tags []string
	}{
		{"nil", nil},
		{"empty", []string{}},
		{"one", []string{"idea"}},
		{"nested and repeated", []string{"project/alpha", "idea", "project/alpha", "Idea"}},
		{"beyond ASCII", []string{"Übung", "日本", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ids := tagIDsOf(tt.tags)
			if (ids == nil) != (tt.tags == nil) || cap(ids) != len(ids) {
				t.Fatalf("numbers %v (cap %d) of %q", ids, cap(ids), tt.tags)
			}
			got := tagsAt(unsafe.SliceData(ids), uint32(len(ids)))
			if !slices.Equal(got, tt.tags) || (got == nil) != (tt.tags == nil) {
				t.Errorf("tags %q read back as %q", tt.tags, got)
			}
			if again := tagIDsOf(tt.tags); !slices.Equal(again, ids) {
				t.Errorf("numbered %v, then %v", ids, again)
			}
		})
	}
	var wg sync.WaitGroup
	const workers, each = 4, 500
	got := make([][]uint32, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tag := fmt.Sprintf("concurrent/%d", (i*7+w)%each)
				id := tagID(tag)
				if name := tagName(id); name != tag {
					t.Errorf("%q numbered %d, which reads %q", tag, id, name)
					return
				}
				got[w] = append(got[w], id)
			}
		}()
	}
	wg.Wait()
	want := map[string]uint32{}
	for w := range workers {
		for i, id := range got[w] {
			tag := fmt.Sprintf("concurrent/%d", (i*7+w)%each)
			if prev, ok := want[tag]; ok && prev != id {
				t.Fatalf("%q numbered %d and %d", tag, prev, id)
			}
			want[tag] = id
		}
	}
}
