package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultReviewTTL is how long a pending plan review stays valid when
// OpenReviewStore is given ttl <= 0 (a review older than an hour is stale).
const DefaultReviewTTL = 60 * time.Minute

// reviewLockTimeout bounds the wait for the database file's lock, which
// another process (the sidecars of several editors on one vault) holds
// only for the few milliseconds of one transaction.
const reviewLockTimeout = 2 * time.Second

var reviewBucket = []byte("plan_review_pending")

// PendingReview is a plan waiting for the user's feedback (the planReview
// setting): the run that produced it ended with stop reason
// await_user_input.
type PendingReview struct {
	RunID     string    `json:"runId"`
	Goal      string    `json:"goal"`
	Plan      Plan      `json:"plan"`
	CreatedAt time.Time `json:"createdAt"`
}

// reviewRecord is what the store writes: the review and its expiry.
type reviewRecord struct {
	Review    PendingReview `json:"review"`
	ExpiresAt time.Time     `json:"expiresAt"`
}

// ReviewOption configures OpenReviewStore.
type ReviewOption func(*ReviewStore)

// WithClock sets the store's clock (tests inject one to check expiry).
func WithClock(now func() time.Time) ReviewOption {
	return func(s *ReviewStore) { s.now = now }
}

// ReviewStore persists pending plan reviews keyed by session id in an
// embedded bbolt database, so they survive a restart of the sidecar. Entries
// expire TTL after they were put. Methods are safe for concurrent use, and
// several processes may use one file: each call opens the database for
// its one transaction, since bbolt lets one process at a time have it
// open.
type ReviewStore struct {
	path string
	ttl  time.Duration
	now  func() time.Time

	// mu makes the calls of this process one at a time: their opens of
	// the file would otherwise wait for each other's lock.
	mu     sync.Mutex
	closed bool
}

// OpenReviewStore opens (creating it and its folder if needed) the database
// at path. ttl <= 0 means DefaultReviewTTL. If another process keeps the
// file locked past a short wait, it fails with an error wrapping
// ErrStoreLocked.
func OpenReviewStore(path string, ttl time.Duration, opts ...ReviewOption) (*ReviewStore, error) {
	if ttl <= 0 {
		ttl = DefaultReviewTTL
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open plan review store %s: %w", path, err)
	}
	s := &ReviewStore{path: path, ttl: ttl, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	err := s.update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(reviewBucket)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open plan review store %s: %w", path, err)
	}
	return s, nil
}

// update runs fn in a write transaction of the database, opened for it.
func (s *ReviewStore) update(fn func(tx *bolt.Tx) error) error {
	return s.with(false, func(db *bolt.DB) error { return db.Update(fn) })
}

// view runs fn in a read transaction of the database, opened (shared) for it.
func (s *ReviewStore) view(fn func(tx *bolt.Tx) error) error {
	return s.with(true, func(db *bolt.DB) error { return db.View(fn) })
}

func (s *ReviewStore) with(readOnly bool, fn func(db *bolt.DB) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStoreClosed
	}
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: reviewLockTimeout, ReadOnly: readOnly})
	if errors.Is(err, berrors.ErrTimeout) {
		return ErrStoreLocked
	}
	if err != nil {
		return err
	}
	err = fn(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Put stores p as the pending review of sessionID, replacing any previous
// one. A zero CreatedAt is set to now; the entry expires TTL after now.
func (s *ReviewStore) Put(sessionID string, p PendingReview) error {
	if sessionID == "" {
		return ErrNoSession
	}
	now := s.now()
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	b, err := json.Marshal(reviewRecord{Review: p, ExpiresAt: now.Add(s.ttl)})
	if err != nil {
		return fmt.Errorf("put plan review %s: %w", sessionID, err)
	}
	err = s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(reviewBucket).Put([]byte(sessionID), b)
	})
	if err != nil {
		return fmt.Errorf("put plan review %s: %w", sessionID, err)
	}
	return nil
}

// Get returns the pending review of sessionID without removing it. An
// expired or undecodable entry is reported as absent.
func (s *ReviewStore) Get(sessionID string) (PendingReview, bool, error) {
	if sessionID == "" {
		return PendingReview{}, false, ErrNoSession
	}
	var rec reviewRecord
	found := false
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(reviewBucket).Get([]byte(sessionID))
		if v == nil {
			return nil
		}
		found = json.Unmarshal(v, &rec) == nil
		return nil
	})
	if err != nil {
		return PendingReview{}, false, fmt.Errorf("get plan review %s: %w", sessionID, err)
	}
	if !found || !s.now().Before(rec.ExpiresAt) {
		return PendingReview{}, false, nil
	}
	return rec.Review, true, nil
}

// Take returns the pending review of sessionID and deletes it, so feedback
// is injected once. Expired (or undecodable) entries are deleted and
// reported as absent.
func (s *ReviewStore) Take(sessionID string) (PendingReview, bool, error) {
	if sessionID == "" {
		return PendingReview{}, false, ErrNoSession
	}
	var rec reviewRecord
	found := false
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(reviewBucket)
		v := b.Get([]byte(sessionID))
		if v == nil {
			return nil
		}
		found = json.Unmarshal(v, &rec) == nil && s.now().Before(rec.ExpiresAt)
		return b.Delete([]byte(sessionID))
	})
	if err != nil {
		return PendingReview{}, false, fmt.Errorf("take plan review %s: %w", sessionID, err)
	}
	if !found {
		return PendingReview{}, false, nil
	}
	return rec.Review, true, nil
}

// Delete removes the pending review of sessionID, if any.
func (s *ReviewStore) Delete(sessionID string) error {
	if sessionID == "" {
		return ErrNoSession
	}
	err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(reviewBucket).Delete([]byte(sessionID))
	})
	if err != nil {
		return fmt.Errorf("delete plan review %s: %w", sessionID, err)
	}
	return nil
}

// Purge deletes every expired entry and returns how many it deleted.
func (s *ReviewStore) Purge() (int, error) {
	now := s.now()
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(reviewBucket)
		var stale [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var rec reviewRecord
			if json.Unmarshal(v, &rec) != nil || !now.Before(rec.ExpiresAt) {
				stale = append(stale, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(stale)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("purge plan reviews: %w", err)
	}
	return n, nil
}

// Close ends the use of the store: later calls fail with ErrStoreClosed.
// The file is closed after every call, so there is nothing else to do.
func (s *ReviewStore) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// FeedbackBlock builds the block prepended to the next run of a session
// whose plan was under review:
//
//	<plan_feedback>
//	plan:
//	...rendered plan...
//
//	user_feedback:
//	...
//
//	instruction: If the feedback changes the plan, call write_todos again; otherwise continue with the next step.
//	</plan_feedback>
func FeedbackBlock(p PendingReview, userReply string) string {
	return "<" + TagFeedback + ">\nplan:\n" + strings.TrimSpace(p.Plan.Render()) +
		"\n\nuser_feedback:\n" + strings.TrimSpace(userReply) +
		"\n\ninstruction: If the feedback changes the plan, call write_todos again; otherwise continue with the next step.\n</" + TagFeedback + ">"
}

// PendingMarker builds the system marker that flags a conversation as
// awaiting plan feedback:
//
//	<plan_review_pending>
//	overall_goal_ui: ...
//	internal_plan: ...
//	run_id: ...
//	</plan_review_pending>
func PendingMarker(p PendingReview) string {
	return "<plan_review_pending>\noverall_goal_ui: " + strings.TrimSpace(p.Goal) +
		"\ninternal_plan: " + strings.TrimSpace(p.Plan.Render()) +
		"\nrun_id: " + p.RunID + "\n</plan_review_pending>"
}

// MemoryReviews keeps pending plan reviews in memory, for a process that
// has no review database (an in-memory index). It has ReviewStore's Put,
// Take and Close, without expiry, and is safe for concurrent use.
type MemoryReviews struct {
	mu sync.Mutex // guards m
	m  map[string]PendingReview
}

// NewMemoryReviews returns an empty MemoryReviews.
func NewMemoryReviews() *MemoryReviews { return &MemoryReviews{m: map[string]PendingReview{}} }

// Put keeps p as the pending review of session id.
func (s *MemoryReviews) Put(id string, p PendingReview) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = p
	return nil
}

// Take returns and forgets the pending review of session id.
func (s *MemoryReviews) Take(id string) (PendingReview, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	delete(s.m, id)
	return p, ok, nil
}

// Close does nothing.
func (s *MemoryReviews) Close() error { return nil }
