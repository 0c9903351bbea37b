package mcp

// The filters the tools share: tags, folders and periods.

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/vault-agent/vault-agent/search"
)

// cleanTags normalizes tag filters: "#Project" -> "project". Blank entries
// are dropped.
func cleanTags(in []string) ([]string, error) {
	var out []string
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "#")))
		if t == "" {
			continue
		}
		if strings.ContainsAny(t, " \t\n,") {
			return nil, fmt.Errorf("tag %q: a tag has no spaces or commas; give each tag as its own entry", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// cleanFolders normalizes folder filters to "a/b/" and refuses any that
// would leave the vault. Blank entries (and "/" or ".") are dropped.
func cleanFolders(in []string) ([]string, error) {
	var out []string
	for _, f := range in {
		raw := f
		f = strings.TrimSpace(strings.ReplaceAll(f, `\`, "/"))
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, "/") || strings.ContainsRune(f, 0) || (len(f) > 1 && f[1] == ':') {
			return nil, fmt.Errorf("folder %q is not inside the vault: give a folder relative to the vault, e.g. \"projects/alpha\"", raw)
		}
		c := path.Clean(f)
		if c == ".." || strings.HasPrefix(c, "../") {
			return nil, fmt.Errorf("folder %q is outside the vault: give a folder relative to the vault, e.g. \"projects/alpha\"", raw)
		}
		if c == "." {
			continue
		}
		out = append(out, c+"/")
	}
	return out, nil
}

func underFolder(p, folder string) bool {
	return len(p) > len(folder) && strings.EqualFold(p[:len(folder)], folder)
}

func hasTag(tags []string, want string) bool {
	for _, t := range tags {
		if t == want || strings.HasPrefix(t, want+"/") {
			return true
		}
	}
	return false
}

// period parses since and until: a day (2026-03-01), a moment (RFC 3339)
// or a time expression, whose start (for since) or end (for until) is
// taken.
func (s *Server) period(since, until string) (from, to time.Time, err error) {
	if from, err = s.bound("since", since, false); err != nil {
		return
	}
	if to, err = s.bound("until", until, true); err != nil {
		return
	}
	if !from.IsZero() && !to.IsZero() && from.After(to) {
		err = fmt.Errorf("since (%s) is after until (%s)", from.Format("2006-01-02"), to.Format("2006-01-02"))
	}
	return
}

func (s *Server) bound(field, v string, end bool) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Millisecond)
		}
		return t, nil
	}
	tr, err := s.timeRange(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %v", field, err)
	}
	if end {
		return tr.End, nil
	}
	return tr.Start, nil
}

// timeRange is a resolved time expression: [Start, End], both inclusive.
type timeRange struct {
	Start, End time.Time
	// Description is a human form such as "2026-03-09 to 2026-03-15".
	Description string
}

// timeRange resolves a time expression ("yesterday", "last week",
// "2026-03", "last 30 days") relative to now, as the agent's
// getTimeRangeMs does.
func (s *Server) timeRange(expr string) (timeRange, error) {
	r, err := search.ParseTimeRange(expr, s.cfg.Now())
	if err != nil {
		return timeRange{}, err
	}
	return timeRange{Start: time.UnixMilli(r.StartTime), End: time.UnixMilli(r.EndTime), Description: r.Description}, nil
}

// inPeriod tells whether a note was modified or is dated within [from, to]
// (either bound may be open), as search's time filter does.
func inPeriod(m search.NoteMeta, from, to time.Time) bool {
	in := func(t time.Time) bool {
		return !t.IsZero() && (from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to))
	}
	if from.IsZero() && to.IsZero() {
		return true
	}
	return in(m.MTime) || in(m.Date)
}
