package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/llm"
)

func TestElliptic(t *testing.T) {
	tests := []struct {
		goal string
		want bool
	}{
		// Elliptic: they lean on the question before for their subject.
		{"and on iOS?", true},
		{"And for teams?", true},
		{"what about Android?", true},
		{"How about the mobile app", true},
		{"how do I install it?", true},
		{"does it work on Linux?", true},
		{"what is that?", true},
		{"how do I set this up?", true},
		{"which one is cheaper?", true},
		{"why?", true},
		{"tell me more", true},
		{"iOS?", true},
		{"also the desktop app", true},
		// Not elliptic: they name their own subject.
		{"What is the Obsidian Hub?", false},
		{"What is Zettelkasten?", false},
		{"And how do I sync my vault on iOS?", false},
		{"find notes that mention kanban", false},
		{"is there a plugin for kanban boards?", false},
		{"how do I keep my sourdough starter alive?", false},
		{"explain the transactional outbox pattern", false},
	}
	for _, tt := range tests {
		t.Run(tt.goal, func(t *testing.T) {
			if got := elliptic(tt.goal, extractTerms(tt.goal, false)); got != tt.want {
				t.Errorf("elliptic(%q) = %v, want %v (terms %v)", tt.goal, got, tt.want, extractTerms(tt.goal, false).all())
			}
		})
	}
}

// firstSearch is the query of the first localSearch a run made.
func firstSearch(t *testing.T, rec *events) string {
	t.Helper()
	for _, e := range rec.ofType(agent.EventToolInvoked) {
		p := e.Payload.(agent.ToolInvokedPayload)
		if p.Tool == agent.ToolLocalSearch {
			return args(t, llm.ToolCall{Arguments: string(p.Arguments)})["query"].(string)
		}
	}
	t.Fatal("no search")
	return ""
}

// TestFixtureFollowUpTopicChange: after a question about one topic, a
// question that names its own subject searches only its own words, and an
// elliptic one inherits the topic.
func TestFixtureFollowUpTopicChange(t *testing.T) {
	a := fixtureAgent(t)
	first, _ := ask(t, a, "how do I keep my sourdough starter alive?")
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "how do I keep my sourdough starter alive?\n\n(attached: recipes/Sourdough Starter.md)"},
		{Role: llm.RoleAssistant, Content: first.Answer},
	}
	tests := []struct {
		msg       string
		inherit   bool
		citeWants string
	}{
		{"What is the guest wifi password?", false, "[[Home Network"},
		{"Explain the transactional outbox pattern", false, "[[Transactional Outbox"},
		{"What is Raft?", false, "[[Raft Consensus"},
		{"and what do I do when it smells like nail-polish remover?", true, "[[Sourdough Starter"},
		{"what about rye flour?", true, "[[Sourdough Starter"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			rec := &events{}
			res, err := a.Run(context.Background(), agent.RunRequest{Message: tt.msg, History: history}, rec)
			if err != nil {
				t.Fatal(err)
			}
			q := strings.ToLower(firstSearch(t, rec))
			if got := strings.Contains(q, "sourdough") || strings.Contains(q, "starter"); got != tt.inherit {
				t.Errorf("search %q: inherits the earlier topic %v, want %v", q, got, tt.inherit)
			}
			if strings.Contains(q, "attached") || strings.Contains(q, ".md") {
				t.Errorf("search %q holds the attachment list of the earlier question", q)
			}
			if !strings.Contains(res.Answer, tt.citeWants) {
				t.Errorf("answer does not cite %s:\n%s", tt.citeWants, res.Answer)
			}
		})
	}
}
