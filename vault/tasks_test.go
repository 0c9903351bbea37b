package vault

import (
	"reflect"
	"testing"
	"time"
)

func TestParseTask(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want Task
	}{
		{"- [ ] call Bob", true, Task{Status: " ", Text: "call Bob"}},
		{"* [x] done", true, Task{Status: "x", Done: true, Text: "done"}},
		{"+ [X] Done too", true, Task{Status: "X", Done: true, Text: "Done too"}},
		{"1. [ ] numbered", true, Task{Status: " ", Text: "numbered"}},
		{"12) [/] in progress", true, Task{Status: "/", Done: true, Text: "in progress"}},
		{"    - [ ] nested", true, Task{Status: " ", Text: "nested"}},
		{"> - [ ] in a callout", true, Task{Status: " ", Text: "in a callout"}},
		{"- [ ]", true, Task{Status: " "}},
		{"- [ ] ship 📅 2026-03-12 ⏳ 2026-03-10", true, Task{Status: " ", Text: "ship 📅 2026-03-12 ⏳ 2026-03-10", Due: "2026-03-12", Scheduled: "2026-03-10"}},
		{"- [x] paid [due:: 2026-04-01] (completion:: 2026-03-30)", true, Task{Status: "x", Done: true, Text: "paid [due:: 2026-04-01] (completion:: 2026-03-30)", Due: "2026-04-01", Completed: "2026-03-30"}},
		{"- [ ] go 🛫 2026-01-02 ✅ 2026-01-03", true, Task{Status: " ", Text: "go 🛫 2026-01-02 ✅ 2026-01-03", Start: "2026-01-02", Completed: "2026-01-03"}},
		{"- [ ]no space", false, Task{}},
		{"-[ ] no space", false, Task{}},
		{"- [] empty box", false, Task{}},
		{"[ ] not a list", false, Task{}},
		{"- plain item", false, Task{}},
		{"- [link](x) item", false, Task{}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, ok := parseTask(tt.line)
			if ok != tt.ok || ok && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseTask(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseStructure(t *testing.T) {
	src := "---\n" + // 1
		"status: draft\n" + // 2
		"---\n" + // 3
		"Intro line one\n" + // 4
		"intro line two\n" + // 5
		"\n" + // 6
		"# Plans\n" + // 7
		"- [ ] call Bob 📅 2026-03-12\n" + // 8
		"- [x] email Ann\n" + // 9
		"\n" + // 10
		"```\n" + // 11
		"- [ ] not a task\n" + // 12
		"\n" + // 13
		"```\n" + // 14
		"## Later\n" + // 15
		"Setext\n" + // 16
		"======\n" + // 17
		"> - [ ] quoted task\n" // 18
	n := Parse("p.md", []byte(src), time.Time{}, 0)
	wantTasks := []Task{
		{Line: 8, Status: " ", Text: "call Bob 📅 2026-03-12", Section: "Plans", Due: "2026-03-12"},
		{Line: 9, Status: "x", Done: true, Text: "email Ann", Section: "Plans"},
		{Line: 18, Status: " ", Text: "quoted task", Section: "Setext"},
	}
	if !reflect.DeepEqual(n.Tasks, wantTasks) {
		t.Errorf("tasks = %+v\nwant %+v", n.Tasks, wantTasks)
	}
	wantSections := []Section{{Span{4, 6}, 0}, {Span{7, 14}, 1}, {Span{15, 15}, 2}, {Span{16, 18}, 1}}
	if !reflect.DeepEqual(n.Sections, wantSections) {
		t.Errorf("sections = %+v\nwant %+v", n.Sections, wantSections)
	}
	wantBlocks := []Span{{4, 5}, {7, 7}, {8, 9}, {11, 14}, {15, 15}, {16, 17}, {18, 18}}
	if !reflect.DeepEqual(n.Blocks, wantBlocks) {
		t.Errorf("blocks = %+v\nwant %+v", n.Blocks, wantBlocks)
	}
}

func TestTasksInCommentsAreHidden(t *testing.T) {
	src := "%%\n- [ ] hidden\n%%\n- [ ] shown %% with a comment %%\n<!--\n- [ ] hidden too\n-->\n%% one line %%\n- [ ] shown too\n"
	var got []string
	for _, tk := range Parse("c.md", []byte(src), time.Time{}, 0).Tasks {
		got = append(got, tk.Text)
	}
	if want := []string{"shown %% with a comment %%", "shown too"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tasks %q, want %q", got, want)
	}
}

func TestParseStructureNoHeadings(t *testing.T) {
	n := Parse("p.md", []byte("one\ntwo\n\nthree"), time.Time{}, 0)
	if want := []Section{{Span{1, 4}, 0}}; !reflect.DeepEqual(n.Sections, want) {
		t.Errorf("sections = %+v, want %+v", n.Sections, want)
	}
	if want := []Span{{1, 2}, {4, 4}}; !reflect.DeepEqual(n.Blocks, want) {
		t.Errorf("blocks = %+v, want %+v", n.Blocks, want)
	}
	if n := Parse("e.md", nil, time.Time{}, 0); len(n.Sections)+len(n.Blocks)+len(n.Tasks) != 0 {
		t.Errorf("empty note: %+v %+v %+v", n.Sections, n.Blocks, n.Tasks)
	}
}
