package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vault-agent/vault-agent/agent/agenttest"
)

// Every event a run emits, in every mode, reads back from JSON with the
// payload type it was emitted with, and writes out the same JSON again.
func TestEventPayloadsRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, mode := range []string{ModeReact, ModeROA, ModePAR, ModeStaged} {
		a, _ := newTestAgent(t, agenttest.ScriptedTurns(mode))
		rec := newRecorder()
		if _, err := a.Run(context.Background(), RunRequest{RunID: "rt", Message: agenttest.Goal, Config: Config{Mode: mode}}, rec); err != nil {
			t.Fatal(err)
		}
		for _, e := range rec.events {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			var back Event
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("%s: %v", e.EventType, err)
			}
			if reflect.TypeOf(back.Payload) != reflect.TypeOf(e.Payload) {
				t.Errorf("%s: payload read back as %T, emitted as %T", e.EventType, back.Payload, e.Payload)
			}
			again, _ := json.Marshal(back)
			if !bytes.Equal(again, b) {
				t.Errorf("%s: JSON changed on the way back:\n%s\n%s", e.EventType, b, again)
			}
			seen[e.EventType] = true
		}
	}
	for _, typ := range []string{EventRunStarted, EventTurnStarted, EventModelResponded, EventToolInvoked, EventToolReturned,
		EventPlanAuthored, EventReflectionAdded, EventReasonEmitted, EventObserveEmitted, EventStageStarted,
		EventStageCompleted, EventRunTerminated, EventAnswerDelta} {
		if !seen[typ] {
			t.Errorf("no %s event was checked", typ)
		}
	}
	for typ := range payloadTypes {
		if _, err := DecodePayload(typ, json.RawMessage(`{}`)); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	if _, err := DecodePayload("Nope", json.RawMessage(`{}`)); err == nil {
		t.Error("an unknown event type was decoded")
	}
	if _, err := DecodePayload(EventRunStarted, nil); err == nil {
		t.Error("a missing payload was decoded")
	}
}
