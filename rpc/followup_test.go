package rpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/rpc"
)

// progressText is what the offline model says while it works: steps,
// never part of an answer.
var progressText = []string{"Reading the most relevant notes", "Searching the vault for", "reading the neighbouring part"}

// TestFollowUpsOverServe: with the offline model, agent/run's history
// reaches the model; a question naming its own subject searches only its
// own words, an elliptic one ("and on iOS?") inherits the topic, and no
// answer, streamed or final, holds the model's progress text, even with
// note paths long enough to pass the agent's hold-back.
func TestFollowUpsOverServe(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, map[string]any{"vault": fixture.ConversationVault(t), "settings": map[string]any{"provider": "offline"}})
	type turn struct{ user, answer string }
	var history []turn
	ask := func(runID, msg string) (query, answer string) {
		t.Helper()
		var h []map[string]any
		for _, tr := range history {
			h = append(h, map[string]any{"role": "user", "content": tr.user}, map[string]any{"role": "assistant", "content": tr.answer})
		}
		res, _ := runAgent(t, s, map[string]any{"runId": runID, "message": msg, "history": h})
		if res.StopReason != "final_answer" {
			t.Fatalf("%s: stop reason %s", msg, res.StopReason)
		}
		for _, u := range updates(s, runID) {
			if u.UpdateType == "tool_start" && u.Tool == "localSearch" && query == "" {
				var a struct {
					Query string `json:"query"`
				}
				json.Unmarshal(u.Arguments, &a)
				query = a.Query
			}
		}
		for _, m := range hostMessages(t, s, runID) {
			for _, p := range progressText {
				if strings.Contains(m.Answer, p) {
					t.Errorf("%s: agent/message answer holds progress text %q:\n%s", msg, p, m.Answer)
				}
			}
		}
		for _, p := range progressText {
			if strings.Contains(res.Answer, p) {
				t.Errorf("%s: answer holds progress text %q:\n%s", msg, p, res.Answer)
			}
		}
		history = append(history, turn{msg, res.Answer})
		return strings.ToLower(query), res.Answer
	}

	if q, a := ask("r1", "which plugins help with spaced repetition?"); !strings.Contains(q, "spaced") || !strings.Contains(a, "[[Spaced Repetition Plugins") {
		t.Fatalf("first question: search %q, answer:\n%s", q, a)
	}
	q, a := ask("r2", "What is the Obsidian Hub?")
	if strings.Contains(q, "spaced") || strings.Contains(q, "repetition") || !strings.Contains(q, "hub") {
		t.Errorf("a question naming its own subject searched %q", q)
	}
	if !strings.HasPrefix(a, "The Obsidian Hub is a community wiki") {
		t.Errorf("answer:\n%s", a)
	}
	ask("r3", "how do I sync my vault on Android?")
	q, a = ask("r4", "and on iOS?")
	if !strings.Contains(q, "ios") || !strings.Contains(q, "sync") {
		t.Errorf("an elliptic follow-up searched %q, without the earlier topic", q)
	}
	if !strings.Contains(a, "[[Sync on iOS") {
		t.Errorf("answer:\n%s", a)
	}
	// The notes read are named by their long paths in the model's step.
	if _, a = ask("r5", "what is the retry budget?"); !strings.HasPrefix(a, "The retry budget caps") {
		t.Errorf("answer:\n%s", a)
	}
}
