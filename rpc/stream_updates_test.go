package rpc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/rpc/protocol"
)

// TestAgentMessageCoalesced runs a fast multi-step offline run and counts
// its agent/message notifications: updates of the answer alone come at most
// once per protocol.AnswerUpdateInterval, marker updates at most one per
// step and elapsed second (plus the status changes), and the last message
// is the exact final content.
func TestAgentMessageCoalesced(t *testing.T) {
	noLeaks(t)
	s := start(t, rpc.Config{})
	initialize(t, s, map[string]any{"settings": map[string]any{"provider": "offline"}})
	ctx := ctxT(t)
	var res protocol.AgentRunResult
	began := time.Now()
	err := s.Call(ctx, "agent/run", map[string]any{
		"message":  "Compare sourdough starter feeding with how the Go context cancellation notes describe deadlines, and list every recipe",
		"settings": map[string]any{"maxIterations": 16},
	}, &res)
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	msgs := checkMessageStream(t, s, res, 2)
	final := parseHostMessage(t, res.Content)
	markerOf := func(raw string) string { m, _, _ := strings.Cut(raw, "-->"); return m }
	answerOnly, markers := 0, 1
	for i := 1; i < len(msgs); i++ {
		if markerOf(msgs[i].Raw) == markerOf(msgs[i-1].Raw) {
			answerOnly++
		} else {
			markers++
		}
	}
	t.Logf("%d agent/message in %v: %d marker updates, %d answer-only updates; %d steps, answer of %d bytes",
		len(msgs), took, markers, answerOnly, len(final.Steps), len(res.Answer))
	// The bound is on the run's own span: at most one answer-only update per
	// interval of it, plus the one at its end.
	if max := int(took/protocol.AnswerUpdateInterval) + 1; answerOnly > max {
		t.Errorf("%d answer-only updates in %v, want at most %d (one per %v)", answerOnly, took, max, protocol.AnswerUpdateInterval)
	}
	if max := len(final.Steps) + final.Elapsed + 4; markers > max {
		t.Errorf("%d marker updates for %d steps in %d s, want at most %d", markers, len(final.Steps), final.Elapsed, max)
	}
}
