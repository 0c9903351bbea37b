package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/llm"
)

// TestCommonWordOfTheVaultWeighsLess: of the notes found, only the first
// holds "schedule" and "review" and two hold "misting" and "ferns", so
// among them the first two look the rarer words and the first note holds
// the question; but the search weighed them as words most notes of the
// vault have, and the answer leads with the note about ferns.
func TestCommonWordOfTheVaultWeighsLess(t *testing.T) {
	notes := map[string]string{
		"Meetings.md":     "The team schedule moves to Tuesdays from March on, and the review to Thursdays.",
		"Plants/Ferns.md": "Ferns want shade and a misting every other day; water them when the soil is dry.",
		"Garden log.md":   "Repotted the ferns in May and started misting them.",
	}
	result := func(terms string) string {
		return `{"results":[` +
			`{"path":"Meetings.md","title":"Meetings","score":4.1,"snippet":"The team <mark>schedule</mark> moves to Tuesdays, and the <mark>review</mark> to Thursdays.","chunkIndex":0},` +
			`{"path":"Plants/Ferns.md","title":"Ferns","score":3.9,"snippet":"<mark>Ferns</mark> want shade and a <mark>misting</mark> every other day.","chunkIndex":0},` +
			`{"path":"Garden log.md","title":"Garden log","score":3.5,"snippet":"Repotted the <mark>ferns</mark> in May and started <mark>misting</mark> them.","chunkIndex":0}],"total":3` +
			terms + `}`
	}
	for _, tt := range []struct {
		name, terms, lead string
	}{
		// Without the vault's weights, the notes found are all there is
		// to judge by.
		{"notes found only", ``, "[[Meetings]]"},
		{"vault weights", `,"terms":[{"word":"weekly","idf":1.2,"missing":true},{"word":"schedule","idf":0.31},{"word":"review","idf":0.4},{"word":"misting","idf":3.6},{"word":"ferns","idf":4.2}]`, "[[Ferns]]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msgs := []llm.Message{
				{Role: llm.RoleSystem, Content: "system"},
				{Role: llm.RoleUser, Content: "weekly schedule review for misting ferns"},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "s", Name: "localSearch", Arguments: `{"query":"weekly schedule review for misting ferns"}`}}},
				{Role: llm.RoleTool, ToolCallID: "s", Content: result(tt.terms)},
			}
			answer := ""
			for turn := 0; turn < 4 && answer == ""; turn++ {
				resp, err := New().Chat(context.Background(), llm.Request{Messages: msgs, Tools: toolDefs("localSearch", "readNote")}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.ToolCalls) == 0 {
					answer = resp.Content
					break
				}
				msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
				for _, c := range resp.ToolCalls {
					var a struct {
						NotePath string `json:"notePath"`
					}
					if c.Name != "readNote" || json.Unmarshal([]byte(c.Arguments), &a) != nil || notes[a.NotePath] == "" {
						t.Fatalf("unexpected call %+v", c)
					}
					b, _ := json.Marshal(map[string]any{"path": a.NotePath, "title": strings.TrimSuffix(a.NotePath[strings.LastIndex(a.NotePath, "/")+1:], ".md"),
						"chunkIndex": 0, "chunkCount": 1, "content": notes[a.NotePath]})
					msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: string(b)})
				}
			}
			lines := citedLines(answer)
			if len(lines) == 0 || !strings.Contains(lines[0], tt.lead) {
				t.Errorf("the answer does not lead with %s:\n%s", tt.lead, answer)
			}
		})
	}
}

// TestSearchResultWeighsTheWords: the localSearch result the model reads
// carries each word's weight in the vault, a word most notes have weighing
// less than one a single note has.
func TestSearchResultWeighsTheWords(t *testing.T) {
	files := map[string]string{"Plants/Ferns.md": "# Ferns\n\nWeekly misting keeps the ferns green.\n"}
	for i := range 6 {
		files[fmt.Sprintf("journal/day %d.md", i)] = fmt.Sprintf("Weekly review of day %d: nothing to report.\n", i)
	}
	a := offlineAgent(t, fixture.Write(t, files), nil)
	rec := &events{}
	if _, err := a.Run(context.Background(), agent.RunRequest{Message: "weekly misting"}, rec); err != nil {
		t.Fatal(err)
	}
	var out agent.LocalSearchResult
	for _, e := range rec.ofType(agent.EventToolReturned) {
		if p := e.Payload.(agent.ToolReturnedPayload); p.Tool == agent.ToolLocalSearch {
			if err := json.Unmarshal(p.Output, &out); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	w := map[string]float64{}
	for _, tw := range out.Terms {
		w[tw.Word] = tw.IDF
	}
	if len(w) != 2 || w["misting"] <= w["weekly"] || w["weekly"] < 0 {
		t.Errorf("terms %+v", out.Terms)
	}
}
