package search

import (
	"reflect"
	"testing"

	"github.com/vault-agent/vault-agent/vault"
)

func TestNotePartsRoundTrip(t *testing.T) {
	sections := []vault.Section{{Span: vault.Span{Start: 4, End: 6}}, {Span: vault.Span{Start: 7, End: 30}, Level: 2}}
	blocks := []vault.Span{{Start: 4, End: 5}, {Start: 7, End: 7}, {Start: 9, End: 30}}
	tasks := []vault.Task{
		{Line: 9, Status: " ", Text: "call 📅 2026-03-12", Section: "Plan", Due: "2026-03-12"},
		{Line: 12, Status: "x", Done: true, Text: "done", Section: "Plan", Completed: "2026-03-01", Scheduled: "2026-02-01", Start: "2026-01-01"},
	}
	s, b, ts, err := decodeParts(string(encodeParts(sections, blocks, tasks)), true)
	if err != nil || !reflect.DeepEqual(s, sections) || !reflect.DeepEqual(b, blocks) || !reflect.DeepEqual(ts, tasks) {
		t.Fatalf("round trip: %+v %+v %+v %v", s, b, ts, err)
	}
	enc := encodeParts(sections, blocks, tasks)
	for i := range enc {
		if _, _, _, err := decodeParts(string(enc[:i]), true); err == nil && i < len(enc)-1 {
			t.Errorf("a cut record (%d of %d bytes) decoded", i, len(enc))
		}
	}
	if _, _, _, err := decodeParts("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", true); err == nil {
		t.Error("a huge count decoded")
	}
}
