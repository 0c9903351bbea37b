package offline

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/agent/agenttest"
)

// readCalls returns the notePath and chunk of every readNote the run made,
// in order, and whether a localSearch came before the first of them.
func readCalls(t *testing.T, rec *events) (reads []string, searchedFirst bool) {
	t.Helper()
	for _, e := range rec.ofType(agent.EventToolReturned) {
		p := e.Payload.(agent.ToolReturnedPayload)
		switch p.Tool {
		case agent.ToolLocalSearch:
			if len(reads) == 0 {
				searchedFirst = true
			}
		case agent.ToolReadNote:
			if !p.Success {
				reads = append(reads, "failed")
				continue
			}
			var out struct {
				Path       string `json:"path"`
				ChunkIndex int    `json:"chunkIndex"`
			}
			if err := json.Unmarshal(p.Output, &out); err != nil {
				t.Fatal(err)
			}
			reads = append(reads, out.Path+"#"+strconv.Itoa(out.ChunkIndex))
		}
	}
	return reads, searchedFirst
}

// TestNamedNotesEveryMode: the notes a question names are read first, in
// every mode, and the answer cites them.
func TestNamedNotesEveryMode(t *testing.T) {
	for _, mode := range []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged} {
		t.Run(mode, func(t *testing.T) {
			a, err := agent.New(agent.Deps{Model: New(), Index: agenttest.NewFakeIndex(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			rec := &events{}
			res, err := a.Run(context.Background(), agent.RunRequest{Message: "Summarize [[Sourdough Starter]] and @Architecture",
				Config: agent.Config{Mode: mode}}, rec)
			if err != nil {
				t.Fatal(err)
			}
			reads, searchedFirst := readCalls(t, rec)
			if searchedFirst || len(reads) < 2 || reads[0] != "recipes/Sourdough Starter.md#0" || reads[1] != "projects/alpha/design/Architecture.md#0" {
				t.Fatalf("reads = %v (search first: %v)", reads, searchedFirst)
			}
			if res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "[[Sourdough Starter]]") ||
				!strings.Contains(res.Answer, "[[Architecture]]") {
				t.Fatalf("answer (%s):\n%s", res.StopReason, res.Answer)
			}
		})
	}
}

func TestNamedNoteHeadingAliasAndUnknown(t *testing.T) {
	a, err := agent.New(agent.Deps{Model: New(), Index: agenttest.NewFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	run := func(msg string) (*agent.Result, []string) {
		rec := &events{}
		res, err := a.Run(context.Background(), agent.RunRequest{Message: msg}, rec)
		if err != nil {
			t.Fatal(err)
		}
		reads, _ := readCalls(t, rec)
		return res, reads
	}

	// The heading's section is read and cited.
	res, reads := run("what does [[Architecture#Gateway|the design]] say about the Pi?")
	if len(reads) == 0 || reads[0] != "projects/alpha/design/Architecture.md#10" {
		t.Fatalf("reads = %v", reads)
	}
	if !strings.Contains(res.Answer, "Raspberry Pi Zero 2 W") || !strings.Contains(res.Answer, "[[Architecture#Gateway]]") {
		t.Errorf("answer:\n%s", res.Answer)
	}

	// A name no note has is reported with the close names.
	res, reads = run("summarize [[Sourdoh Startr]]")
	if len(reads) == 0 || reads[0] != "failed" {
		t.Fatalf("reads = %v", reads)
	}
	if !strings.HasPrefix(res.Answer, `I couldn't find a note named "Sourdoh Startr"; did you mean [[recipes/Sourdough Starter]]?`) {
		t.Errorf("answer:\n%s", res.Answer)
	}
}

func TestNamedNotesParse(t *testing.T) {
	got := agent.NamedNotes("compare [[Obsidian Sync#Setup|sync]] with @Zettelkasten, mail me at a@b.com and ![[Home]] and [[Obsidian Sync#Setup]]")
	var s []string
	for _, r := range got {
		s = append(s, r.Name+"|"+r.Heading)
	}
	if strings.Join(s, ",") != "Obsidian Sync|Setup,Zettelkasten|,Home|" {
		t.Errorf("refs = %v", s)
	}
	if w := strings.Join(strings.Fields(agent.WithoutNamedNotes("see [[A#b]] and @C now")), " "); w != "see and now" {
		t.Errorf("without = %q", w)
	}
	if p := agent.PlainNamedNotes("see [[A#b|x]] and @C"); p != "see A and C" {
		t.Errorf("plain = %q", p)
	}
}
