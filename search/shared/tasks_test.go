package shared

import (
	"errors"
	"testing"
	"time"

	"github.com/vault-agent/vault-agent/search"
)

// Tasks, notes by property, daily notes and the operators' matches reach a
// follower as the holder has them.
func TestFollowerTasksAndProperties(t *testing.T) {
	_, _, follower, same := holderAndFollower(t, false)
	ctx := ctxT(t)
	since := time.Date(2026, 3, 1, 0, 0, 0, 0, time.Local)
	same("tasks", func(x *Index) any {
		tasks, total, err := x.Tasks(ctx, search.TaskQuery{Text: "outbox OR cron", From: since, Limit: 2})
		if err != nil || total == 0 {
			return err
		}
		return []any{tasks, total}
	})
	same("notes by property", func(x *Index) any {
		notes, total, err := x.NotesByProperty(ctx, "[status:draft OR approved]", 0)
		if err != nil || total == 0 {
			return err
		}
		return []any{notes, total}
	})
	same("daily notes", func(x *Index) any {
		settings, notes := x.DailyNotes(time.Date(2026, 3, 12, 0, 0, 0, 0, time.Local), time.Date(2026, 3, 13, 12, 0, 0, 0, time.Local))
		return []any{settings, notes}
	})
	same("matches", func(x *Index) any {
		res, err := x.Search(ctx, search.Request{Query: "task-todo:outbox line:(outbox worker)"})
		if err != nil {
			return err
		}
		return res.Results
	})
	_, _, err := follower.Tasks(ctx, search.TaskQuery{Status: "pending"})
	var qe *search.QueryError
	if !errors.Is(err, search.ErrBadQuery) || !errors.As(err, &qe) {
		t.Errorf("a bad task status at the follower: %v", err)
	}
}
