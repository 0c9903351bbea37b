package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/llm"
)

// A run's Stop channel stops it as Agent.Stop does, even when it was closed
// before the run started; the tool in flight finishes first.
func TestStopChannel(t *testing.T) {
	t.Run("closed before the run", func(t *testing.T) {
		a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
		stop := make(chan struct{})
		close(stop)
		res, err := a.Run(context.Background(), RunRequest{Message: "x", Stop: stop}, nil)
		if err != nil || res.StopReason != StopStopped {
			t.Fatalf("result = %+v, %v", res, err)
		}
	})
	t.Run("closed mid-tool", func(t *testing.T) {
		a, model := newTestAgent(t, []llm.Turn{toolTurn("", call("block", map[string]any{})), {Content: "never asked"}})
		release := addBlockingTool(a)
		stop := make(chan struct{})
		rec, done := startRun(t, a, RunRequest{RunID: "c1", Message: "x", Stop: stop})
		rec.waitFor(t, EventToolInvoked)
		close(stop)
		close(release)
		if res := <-done; res.StopReason != StopStopped {
			t.Fatalf("stop reason = %s", res.StopReason)
		}
		if r := returned(rec); len(r) != 1 || !r[0].Success {
			t.Fatalf("the tool in flight should finish: %+v", r)
		}
		if model.Remaining() != 1 {
			t.Fatal("the model was called after the stop")
		}
	})
}

// StopAll stops every active run; run ids from NewRunID never repeat.
func TestStopAllAndRunIDs(t *testing.T) {
	a, err := New(Deps{Index: newFakeIndex(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ids := map[string]bool{}
	for range 1000 {
		id := a.NewRunID()
		if ids[id] {
			t.Fatalf("run id %s given twice", id)
		}
		ids[id] = true
	}
	var recs []*recorder
	var dones []<-chan *Result
	for _, id := range []string{"one", "two"} {
		slow := llm.NewScripted([]llm.Turn{{Content: "slow", DelayMs: 60_000}})
		rec, done := startRun(t, a, RunRequest{RunID: id, Message: "x", Model: slow})
		recs, dones = append(recs, rec), append(dones, done)
	}
	for _, rec := range recs {
		rec.waitFor(t, EventTurnStarted)
	}
	a.StopAll()
	for _, done := range dones {
		if res := <-done; res.StopReason != StopStopped {
			t.Fatalf("stop reason = %s", res.StopReason)
		}
	}
	if err := a.Stop("one"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("stop after the end: %v", err)
	}
}

// A deadline of the caller's ends a run as a timeout, like the run's own.
func TestCallerDeadlineIsATimeout(t *testing.T) {
	a, _ := newTestAgent(t, []llm.Turn{{Content: "slow", DelayMs: 60_000}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := a.Run(ctx, RunRequest{Message: "x"}, nil)
	if err != nil || res.StopReason != StopTimeout {
		t.Fatalf("result = %+v, %v", res, err)
	}
}
