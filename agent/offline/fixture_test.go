package offline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// fixtureAgent is the offline agent over a real in-memory index of the
// fixture vault, its clock pinned to Wednesday 2026-03-18 15:00.
func fixtureAgent(t *testing.T) *agent.Agent {
	t.Helper()
	now := time.Date(2026, 3, 18, 15, 0, 0, 0, time.Local)
	return offlineAgent(t, fixture.Vault(), func() time.Time { return now })
}

// offlineAgent is the offline agent over a real in-memory index of the
// vault at root; now, when set, is its clock.
func offlineAgent(t *testing.T, root string, now func() time.Time) *agent.Agent {
	t.Helper()
	return agentOver(t, syncedIndex(t, root), now)
}

// syncedIndex is a real in-memory index of the vault at root, synced.
func syncedIndex(t *testing.T, root string) *search.Index {
	t.Helper()
	v, err := vault.Open(root, vault.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := search.Open(context.Background(), search.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return ix
}

// agentOver is the offline agent over ix; now, when set, is its clock.
func agentOver(t *testing.T, ix agent.Index, now func() time.Time) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Deps{Model: New(), Index: ix, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func ask(t *testing.T, a *agent.Agent, msg string) (*agent.Result, []string) {
	t.Helper()
	rec := &events{}
	res, err := a.Run(context.Background(), agent.RunRequest{Message: msg}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopFinalAnswer {
		t.Fatalf("stopped: %s %s", res.StopReason, res.Error)
	}
	reads, _ := readCalls(t, rec)
	return res, reads
}

func readPaths(reads []string) []string {
	var out []string
	for _, r := range reads {
		p, _, _ := strings.Cut(r, "#")
		out = append(out, p)
	}
	return out
}

func TestFixtureTimeQuestions(t *testing.T) {
	a := fixtureAgent(t)
	tests := []struct {
		q         string
		read      []string // exactly these notes, in this order
		days      []string // day headings, in this order
		cite      []string
		noteWords string // the unsure reading is explained
	}{
		{q: "What did I do last week?",
			// Project Beta is dated by its frontmatter (created: 2026-03-09).
			read: []string{"projects/beta/Project Beta.md", "journal/2026-03-10.md", "journal/2026-03-12.md", "work/meetings/2026-03-12 Beta Kickoff.md"},
			days: []string{"Monday, March 9, 2026", "Tuesday, March 10, 2026", "Thursday, March 12, 2026"},
			cite: []string{"[[2026-03-10]]", "[[2026-03-12]]", "[[2026-03-12 Beta Kickoff]]"}},
		{q: "what did I write from Monday to Wednesday?",
			// Within a day, the daily note comes first.
			read: []string{"journal/2026-03-16.md", "projects/beta/Outbox Migration Plan.md", "journal/2026-03-17.md", "journal/2026-03-18.md"},
			days: []string{"Monday, March 16, 2026", "Tuesday, March 17, 2026", "Wednesday, March 18, 2026"},
			cite: []string{"[[2026-03-16]]", "[[2026-03-17]]", "[[2026-03-18]]"}},
		{q: "Summarize my journal between 2026-03-01 and 2026-03-05",
			read: []string{"journal/2026-03-02.md", "journal/2026-03-05.md"},
			days: []string{"Monday, March 2, 2026", "Thursday, March 5, 2026"},
			cite: []string{"[[2026-03-02]]", "[[2026-03-05]]"}},
		{q: "what did I write on March 12",
			read: []string{"journal/2026-03-12.md", "work/meetings/2026-03-12 Beta Kickoff.md"},
			days: []string{"Thursday, March 12, 2026"},
			cite: []string{"[[2026-03-12]]"}},
		{q: "what happened over the holidays?", noteWords: "December 20 to January 6"},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			res, reads := ask(t, a, tt.q)
			if got := strings.Join(readPaths(reads), ", "); tt.read != nil && got != strings.Join(tt.read, ", ") {
				t.Errorf("read %s\nwant %s", got, strings.Join(tt.read, ", "))
			}
			at := -1
			for _, d := range tt.days {
				i := strings.Index(res.Answer, "\n"+d+"\n")
				if i <= at {
					t.Errorf("day %q missing or out of order:\n%s", d, res.Answer)
				}
				at = i
			}
			for _, c := range tt.cite {
				if !strings.Contains(res.Answer, c) {
					t.Errorf("answer does not cite %s:\n%s", c, res.Answer)
				}
			}
			if tt.noteWords != "" && !strings.Contains(res.Answer, tt.noteWords) {
				t.Errorf("the unsure reading is not explained:\n%s", res.Answer)
			}
		})
	}
}

func TestFixtureAnswers(t *testing.T) {
	a := fixtureAgent(t)

	// The answer is in chunk 5 of a long note: that chunk is read and
	// cited with its heading.
	res, reads := ask(t, a, "what is the guest wifi password?")
	if len(reads) == 0 || reads[0] != "kb/Home Network.md#5" {
		t.Fatalf("reads = %v", reads)
	}
	// The answer is the paragraph that holds it, as the note has it.
	lead, _, _ := strings.Cut(res.Answer, "\n")
	if !strings.HasPrefix(lead, "Guests get their own network") || !strings.Contains(lead, "the current one is lemon-harbour-42.") ||
		!strings.HasSuffix(lead, "[[Home Network#Guest network]]") {
		t.Errorf("answer:\n%s", res.Answer)
	}
	if c := strings.Count(res.Answer, "[["); strings.Count(res.Answer, "[[Home Network") != c {
		t.Errorf("cites a note it does not quote:\n%s", res.Answer)
	}

	// Boilerplate is never quoted: the one real sentence is.
	res, _ = ask(t, a, "what does the calendar sync plugin do?")
	if !strings.HasPrefix(res.Answer, "The calendar sync plugin copies the events of a CalDAV calendar") {
		t.Errorf("answer:\n%s", res.Answer)
	}
	for _, bad := range []string{"Plugin ID", "Developed by", "Mobile compatible", "shields.io", "Downloads", "Sponsored",
		"Documentation", "Changelog", "footer", "Add a description", "Issues"} {
		if strings.Contains(res.Answer, bad) {
			t.Errorf("answer quotes boilerplate %q:\n%s", bad, res.Answer)
		}
	}

	// Not in the vault: said plainly, with the nearest notes.
	res, _ = ask(t, a, "how do I rebuild a motorcycle carburetor?")
	if !strings.HasPrefix(res.Answer, "Your notes don't seem to answer this") || !strings.Contains(res.Answer, "The nearest notes are:") {
		t.Errorf("answer:\n%s", res.Answer)
	}
}

// TestFixtureFollowUp: a short follow-up is searched and answered with the
// topic of the turns before it.
func TestFixtureFollowUp(t *testing.T) {
	a := fixtureAgent(t)
	first, _ := ask(t, a, "how do I keep my sourdough starter alive?")
	if !strings.Contains(first.Answer, "[[Sourdough Starter") {
		t.Fatalf("first answer:\n%s", first.Answer)
	}
	rec := &events{}
	res, err := a.Run(context.Background(), agent.RunRequest{Message: "and how long does it take to get strong?", History: []llm.Message{
		{Role: llm.RoleUser, Content: "how do I keep my sourdough starter alive?"},
		{Role: llm.RoleAssistant, Content: first.Answer},
	}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	q := args(t, llm.ToolCall{Arguments: string(rec.ofType(agent.EventToolInvoked)[0].Payload.(agent.ToolInvokedPayload).Arguments)})["query"].(string)
	if !strings.Contains(q, "sourdough") || !strings.Contains(q, "starter") {
		t.Errorf("the follow-up's search lacks the topic: %q", q)
	}
	reads, _ := readCalls(t, rec)
	if len(reads) == 0 || readPaths(reads)[0] != "recipes/Sourdough Starter.md" {
		t.Errorf("reads = %v", reads)
	}
	if !strings.Contains(res.Answer, "about a week to become strong enough") || !strings.Contains(res.Answer, "[[Sourdough Starter") {
		t.Errorf("answer:\n%s", res.Answer)
	}
}

// TestFixtureNeighbourChunk: the answer begins at the end of the chunk the
// search matched and runs on into the next one, which is read too.
func TestFixtureNeighbourChunk(t *testing.T) {
	a := fixtureAgent(t)
	res, reads := ask(t, a, "how do I bleed the radiators?")
	if len(reads) < 2 || reads[0] != "kb/Central Heating.md#2" || reads[len(reads)-1] != "kb/Central Heating.md#3" {
		t.Fatalf("reads = %v, want chunk 2 of Central Heating first and chunk 3 after", reads)
	}
	for _, want := range []string{"Bleeding the radiators fixes that", "Turn the key a quarter turn anticlockwise",
		"[[Central Heating#Radiators]]"} {
		if !strings.Contains(res.Answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, res.Answer)
		}
	}
	// Both chunks are quoted in the order of the note.
	if i, j := strings.Index(res.Answer, "Switch the heating off"), strings.Index(res.Answer, "Turn the key"); i < 0 || j < i {
		t.Errorf("answer out of the note's order:\n%s", res.Answer)
	}
}

// TestTimedQuestionFallsBackOnNotesOfAnyDate: a question that names when
// something happened ("the boiler lost pressure yesterday") and whose
// words no note of that day holds is searched again over notes of any
// date, and the answer says that its notes are from other dates.
func TestTimedQuestionFallsBackOnNotesOfAnyDate(t *testing.T) {
	a := fixtureAgent(t)
	res, reads := ask(t, a, "the boiler lost pressure yesterday, how do I bring the pressure back up")
	if !slices.Contains(readPaths(reads), "kb/Central Heating.md") {
		t.Errorf("reads = %v, want the heating note of another date", reads)
	}
	if !strings.HasPrefix(res.Answer, "Nothing in your notes from yesterday matches; this is from notes of other dates.") {
		t.Errorf("the answer does not say its notes are from other dates:\n%s", res.Answer)
	}
	if !strings.Contains(res.Answer, "filling loop") || !strings.Contains(res.Answer, "[[Central Heating") {
		t.Errorf("the answer does not quote the heating note:\n%s", res.Answer)
	}
}

// TestTimedQuestionInEveryMode: the search over notes of any date is a
// step of the policy in every loop; where a typed plan refuses a search
// its step does not declare (plan-act-reflect), the run still ends with
// an answer, never with the text of a step.
func TestTimedQuestionInEveryMode(t *testing.T) {
	now := time.Date(2026, 3, 18, 15, 0, 0, 0, time.Local)
	ix := syncedIndex(t, fixture.Vault())
	for _, mode := range []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged} {
		t.Run(mode, func(t *testing.T) {
			a := agentOver(t, ix, func() time.Time { return now })
			res, err := a.Run(context.Background(), agent.RunRequest{Message: "the boiler lost pressure yesterday, how do I bring the pressure back up",
				Config: agent.Config{Mode: mode}}, &events{})
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != agent.StopFinalAnswer {
				t.Fatalf("stopped: %s %s", res.StopReason, res.Error)
			}
			if strings.Contains(res.Answer, "so I'm searching") || !strings.Contains(res.Answer, "[[") && !strings.Contains(res.Answer, "couldn't find") {
				t.Errorf("the answer is a step's text, or says nothing of the notes:\n%s", res.Answer)
			}
		})
	}
}

// TestTimedQuestionFindingNothingAtAnyDate: when notes of any date hold
// nothing either, the answer says both were searched and does not
// suggest a wider time range.
func TestTimedQuestionFindingNothingAtAnyDate(t *testing.T) {
	a := fixtureAgent(t)
	res, _ := ask(t, a, "zeppelin mechanic yesterday")
	if !strings.Contains(res.Answer, "from yesterday or any other date") || strings.Contains(res.Answer, "wider time range") {
		t.Errorf("answer:\n%s", res.Answer)
	}
}
