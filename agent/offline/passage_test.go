package offline

import (
	"strings"
	"testing"
)

func TestParseBlocks(t *testing.T) {
	content := "---\ntitle: x\n---\n# Guide\n\nIntro sentence one. Intro sentence two.\n\nTo set it up:\n\n" +
		"1. Open **Settings**.\n2. Pick [[Core plugins|a plugin]]\n   and turn it on.\n3. Restart.\n\n" +
		"## Notes\n\n- first point\n  - a detail of it\n- second point\n\n" +
		"> [!tip] Remember this\n> A callout body line.\n\n```\ncode is skipped\n```\n\n| a | b |\n|---|---|\n\n" +
		"Plugin ID: x\n\nLast paragraph.\n"
	blocks := parseBlocks(content, "")
	var got []string
	for _, b := range blocks {
		var items []string
		for _, it := range b.items {
			items = append(items, strings.Repeat(">", it.depth)+it.text)
		}
		got = append(got, []string{"P", "L", "S"}[b.kind]+"["+b.heading+"] "+strings.Join(items, " | "))
	}
	want := []string{
		"P[Guide] Intro sentence one. | Intro sentence two.",
		"P[Guide] To set it up:",
		"S[Guide] Open Settings. | Pick a plugin and turn it on. | Restart.",
		"L[Notes] first point | >a detail of it | second point",
		"P[Notes] Remember this",
		"P[Notes] A callout body line.",
		"P[Notes] Last paragraph.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !blocks[1].introduces() || blocks[0].introduces() {
		t.Errorf("introduces: %v %v", blocks[0].introduces(), blocks[1].introduces())
	}
}

func TestRenderBlock(t *testing.T) {
	steps := block{kind: stepsBlock, items: []blockItem{{text: "One."}, {text: "a detail", depth: 1}, {text: "Two."}}}
	if got, cut := renderBlock(steps, 0); got != "1. One.\n   - a detail\n2. Two." || cut {
		t.Errorf("steps = %q, %v", got, cut)
	}
	var many []blockItem
	for i := 0; i < leadItems+2; i++ {
		many = append(many, blockItem{text: "item"})
	}
	if got, cut := renderBlock(block{kind: listBlock, items: many}, 0); strings.Count(got, "- item") != leadItems || !cut {
		t.Errorf("long list = %q, %v", got, cut)
	}
	long := strings.Repeat("word ", 100)
	para := block{kind: paragraphBlock, items: []blockItem{{text: long + "end."}, {text: long + "two."}, {text: "Three."}}}
	if got, cut := renderBlock(para, 0); strings.Contains(got, "two.") || !cut {
		t.Errorf("paragraph past leadRunes is not cut at a sentence: %v", cut)
	}
}

// A digest's list keeps the items about the question; a list most of
// whose items hold it, and steps, are kept whole.
func TestRelevantItems(t *testing.T) {
	rel := relevance{groups: [][]string{{"sync"}}, weights: []float64{1}, total: 1}
	digest := block{kind: listBlock, items: []blockItem{{text: "A theme came out."}, {text: "Sync got faster."}, {text: "more on sync", depth: 1},
		{text: "A talk is planned."}, {text: "Bug fixes."}}}
	got := relevantItems(digest, rel)
	if len(got.items) != 2 || got.items[0].text != "Sync got faster." || got.omitted != 3 {
		t.Errorf("digest = %+v", got)
	}
	if r := renderList(got); !strings.Contains(r, "(3 more items of this list in the note are about other things.)") {
		t.Errorf("render = %q", r)
	}
	steps := digest
	steps.kind = stepsBlock
	if got := relevantItems(steps, rel); len(got.items) != len(digest.items) {
		t.Errorf("steps were cut: %+v", got)
	}
	short := block{kind: listBlock, items: digest.items[:3]}
	if got := relevantItems(short, rel); len(got.items) != 3 {
		t.Errorf("short list was cut: %+v", got)
	}
}

// TestStepsKeepTheirNumbersAndPictures: a screenshot between two steps
// does not end the steps, and steps the part read begins in the middle of
// keep the note's numbers.
func TestStepsKeepTheirNumbersAndPictures(t *testing.T) {
	blocks := parseBlocks("4. Scroll to the bottom.\n   ![[shot-4.png]]\n![[shot-4b.png]]\n5. Press Propose.\n6. Open the pull request.\n", "Guide")
	if len(blocks) != 1 || blocks[0].kind != stepsBlock || len(blocks[0].items) != 3 {
		t.Fatalf("blocks = %+v", blocks)
	}
	if got, _ := renderBlock(blocks[0], 0); got != "4. Scroll to the bottom.\n5. Press Propose.\n6. Open the pull request." {
		t.Errorf("steps = %q", got)
	}
	if got, _ := renderBlock(parseBlocks("1. One.\n1. Two.\n", "")[0], 0); got != "1. One.\n2. Two." {
		t.Errorf("lazily numbered steps = %q", got)
	}
}
