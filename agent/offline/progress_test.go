package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/internal/fixture"
)

// TestProgressTextIsNotStreamedAsAnswer: the sentence of a turn that calls
// tools ("Reading the most relevant notes: ...") is a step, never answer
// text, however long the note paths make it. Only the final turn streams.
func TestProgressTextIsNotStreamedAsAnswer(t *testing.T) {
	// Notes deep in long folders that share one name are named by their
	// paths: the sentence of the reading step is longer than the agent
	// holds back.
	a := offlineAgent(t, fixture.ConversationVault(t), nil)
	for _, mode := range []string{agent.ModeReact, agent.ModeROA, agent.ModePAR, agent.ModeStaged} {
		t.Run(mode, func(t *testing.T) {
			rec := &events{}
			res, err := a.Run(context.Background(), agent.RunRequest{Message: "what is the retry budget?", Config: agent.Config{Mode: mode}}, rec)
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != agent.StopFinalAnswer || !strings.Contains(res.Answer, "retry budget") {
				t.Fatalf("result %s: %q", res.StopReason, res.Answer)
			}
			var streamed strings.Builder
			for _, e := range rec.ofType(agent.EventAnswerDelta) {
				streamed.WriteString(e.Payload.(agent.TextPayload).Text)
			}
			for _, progress := range []string{"Reading the most relevant notes", "Searching the vault for"} {
				if strings.Contains(streamed.String(), progress) || strings.Contains(res.Answer, progress) {
					t.Errorf("progress text %q in the answer:\nstreamed: %q\nanswer: %q", progress, streamed.String(), res.Answer)
				}
			}
			if s := streamed.String(); s != "" && !strings.HasPrefix(res.Answer, s) {
				t.Errorf("streamed text is not the answer's start:\nstreamed: %q\nanswer: %q", s, res.Answer)
			}
		})
	}
}
