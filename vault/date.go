package vault

import (
	"path"
	"regexp"
	"strings"
	"time"
)

// dateKeys are the frontmatter properties that date a note, in order of
// preference: what Obsidian users and the common templates (Templater,
// Periodic Notes, Journals) write.
var dateKeys = []string{"date", "created", "day", "created_at", "creation_date"}

// dateLayouts are the forms a frontmatter date takes. Dates without a zone
// are in the local time zone, as the person who wrote them meant.
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
	"2006/01/02",
	"2006.01.02",
}

// fileDate matches a date at the start of a file name: daily notes
// ("2026-03-12") and dated notes ("2026-04-02 Incident Review",
// "2026_03_12", "2026.03.12").
var fileDate = regexp.MustCompile(`^(\d{4})[-_.](\d{2})[-_.](\d{2})(?:$|[^\d])`)

// noteDate is the day a note is about: its frontmatter date (see dateKeys),
// else a date its file name starts with, else zero. It is what a question
// such as "what did I write on March 12" means, whatever the file's mtime
// says (a vault cloned or synced to another machine has new mtimes).
func noteDate(p string, props map[string]any) time.Time {
	for _, k := range dateKeys {
		if t, ok := parseDateValue(props[k]); ok {
			return t
		}
	}
	base := path.Base(strings.ReplaceAll(p, `\`, "/"))
	if m := fileDate.FindStringSubmatch(base); m != nil {
		if t, err := time.ParseInLocation("2006-01-02", m[1]+"-"+m[2]+"-"+m[3], time.Local); err == nil {
			return t
		}
	}
	return time.Time{}
}

func parseDateValue(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, !x.IsZero()
	case string:
		s := strings.TrimSpace(x)
		for _, l := range dateLayouts {
			if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}
