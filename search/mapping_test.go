package search

import (
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/document"

	"github.com/vault-agent/vault-agent/vault"
)

// TestNoteDocumentHasNoAllField checks that a note is mapped to its own
// fields only: bleve's "_all" composite field, which no query reads, is
// disabled (the segment builder would walk it in every document).
func TestNoteDocumentHasNoAllField(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	n := vault.ParseForIndex("a.md", []byte("---\ntags: [x]\n---\n# A\nSome words, and [[b]].\n"), time.Unix(1, 0))
	doc := document.NewDocument(n.Path)
	if err := m.MapDocument(doc, noteDocument(n, nil)); err != nil {
		t.Fatal(err)
	}
	if len(doc.Fields) < 3 {
		t.Fatalf("%d fields", len(doc.Fields))
	}
	for _, f := range doc.CompositeFields {
		t.Errorf("composite field %q", f.Name())
	}
}
