package shared

import (
	"context"
	"time"

	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/vault"
)

// Tasks, notes by property and daily notes, wherever the index is.

var (
	opTasks = newOp("index/tasks", false, func(ctx context.Context, h *holding, q search.TaskQuery, _ Progress) (tasksResult, error) {
		tasks, total, err := h.ix.Tasks(ctx, q)
		return tasksResult{Tasks: tasks, Total: total}, err
	})
	opNotesByProperty = newOp("index/notesByProperty", false, func(ctx context.Context, h *holding, p propertyParams, _ Progress) (propertyResult, error) {
		notes, total, err := h.ix.NotesByProperty(ctx, p.Query, p.Limit)
		return propertyResult{Notes: notes, Total: total}, err
	})
	opDailyNotes = newOp("index/dailyNotes", false, func(_ context.Context, h *holding, p dailyParams, _ Progress) (dailyResult, error) {
		settings, notes := h.ix.DailyNotes(p.From, p.To)
		return dailyResult{Settings: settings, Notes: notes}, nil
	})
)

type tasksResult struct {
	Tasks []search.TaskHit `json:"tasks"`
	Total int              `json:"total"`
}

type propertyParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

type propertyResult struct {
	Notes []search.PropertyNote `json:"notes"`
	Total int                   `json:"total"`
}

type dailyParams struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

type dailyResult struct {
	Settings vault.DailyNotes   `json:"settings"`
	Notes    []search.DailyNote `json:"notes"`
}

// Tasks lists the tasks q selects (see search.Index.Tasks).
func (x *Index) Tasks(ctx context.Context, q search.TaskQuery) ([]search.TaskHit, int, error) {
	r, err := opTasks.call(ctx, x, q, nil)
	return r.Tasks, r.Total, err
}

// NotesByProperty lists the notes that match a property query (see
// search.Index.NotesByProperty).
func (x *Index) NotesByProperty(ctx context.Context, expr string, limit int) ([]search.PropertyNote, int, error) {
	r, err := opNotesByProperty.call(ctx, x, propertyParams{Query: expr, Limit: limit}, nil)
	return r.Notes, r.Total, err
}

// DailyNotes returns the daily notes of the days from..to (see
// search.Index.DailyNotes); nothing when the index cannot be reached.
func (x *Index) DailyNotes(from, to time.Time) (vault.DailyNotes, []search.DailyNote) {
	r, err := opDailyNotes.call(context.Background(), x, dailyParams{From: from, To: to}, nil)
	x.logFailure(opDailyNotes.method, err)
	return r.Settings, r.Notes
}
