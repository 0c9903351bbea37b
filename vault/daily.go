package vault

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DailyNotes is how a vault names its daily notes: Obsidian's Daily notes
// settings (.obsidian/daily-notes.json), or the Periodic Notes plugin's
// when it is enabled and its daily notes are on, else Obsidian's default
// (YYYY-MM-DD at the root).
type DailyNotes struct {
	// Folder is the vault folder of the daily notes, "" for the root.
	Folder string `json:"folder"`
	// Format is a moment.js format ("YYYY-MM-DD", "YYYY/MM/YYYY-MM-DD
	// dddd"); a "/" in it makes sub-folders.
	Format string `json:"format"`
	// Source says where the settings came from: "periodic-notes",
	// "daily-notes" or "default".
	Source string `json:"source"`
}

// DefaultDailyFormat is Obsidian's daily note format.
const DefaultDailyFormat = "YYYY-MM-DD"

// DailyNotes reads the vault's daily note settings. Settings it cannot
// read are passed over for the next source.
func (v *Vault) DailyNotes() DailyNotes {
	conf := filepath.Join(v.root, ".obsidian")
	var periodic struct {
		Daily *struct {
			Enabled bool   `json:"enabled"`
			Folder  string `json:"folder"`
			Format  string `json:"format"`
		} `json:"daily"`
	}
	if enabledPlugin(conf, "periodic-notes") && readJSON(filepath.Join(conf, "plugins", "periodic-notes", "data.json"), &periodic) &&
		periodic.Daily != nil && periodic.Daily.Enabled {
		return dailyNotes(periodic.Daily.Folder, periodic.Daily.Format, "periodic-notes")
	}
	var core struct {
		Folder string `json:"folder"`
		Format string `json:"format"`
	}
	if readJSON(filepath.Join(conf, "daily-notes.json"), &core) {
		return dailyNotes(core.Folder, core.Format, "daily-notes")
	}
	return dailyNotes("", "", "default")
}

func dailyNotes(folder, format, source string) DailyNotes {
	folder = strings.Trim(strings.TrimSpace(strings.ReplaceAll(folder, `\`, "/")), "/")
	if folder == "." {
		folder = ""
	}
	format = strings.TrimSpace(format)
	if format == "" {
		format = DefaultDailyFormat
	}
	return DailyNotes{Folder: folder, Format: format, Source: source}
}

// Path is the vault path of the daily note of day t.
func (d DailyNotes) Path(t time.Time) string {
	name := FormatMoment(t, d.Format) + ".md"
	if d.Folder == "" {
		return path.Clean(name)
	}
	return path.Clean(d.Folder + "/" + name)
}

// enabledPlugin reports whether community-plugins.json lists id.
func enabledPlugin(conf, id string) bool {
	var ids []string
	return readJSON(filepath.Join(conf, "community-plugins.json"), &ids) && slices.Contains(ids, id)
}

// readJSON decodes a small settings file; false when it is missing,
// too large or not that JSON.
func readJSON(p string, v any) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 1<<20 {
		return false
	}
	b, err := os.ReadFile(p)
	return err == nil && json.Unmarshal(b, v) == nil
}

// FormatMoment formats t with a moment.js format string, as Obsidian names
// daily notes: YYYY YY Q MMMM MMM MM M Mo DDDD DDD DD D Do dddd ddd dd d E e
// WW W ww w GGGG gggg HH H hh h mm m ss s A a X x, and [text] as is, in
// English. Other letters are written as they are.
func FormatMoment(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '[' {
			end := strings.IndexByte(format[i:], ']')
			if end < 0 {
				b.WriteString(format[i+1:])
				break
			}
			b.WriteString(format[i+1 : i+end])
			i += end + 1
			continue
		}
		tok := momentToken(format[i:])
		if tok == "" {
			b.WriteByte(format[i])
			i++
			continue
		}
		b.WriteString(momentValue(t, tok))
		i += len(tok)
	}
	return b.String()
}

// momentTokens are the tokens FormatMoment knows, longest first for each
// letter.
var momentTokens = []string{
	"YYYY", "YY", "Q", "MMMM", "MMM", "MM", "Mo", "M", "DDDD", "DDD", "DD", "Do", "D", "dddd", "ddd", "dd", "d",
	"E", "e", "WW", "Wo", "W", "ww", "wo", "w", "GGGG", "gggg", "HH", "H", "hh", "h", "mm", "m", "ss", "s", "A", "a", "X", "x",
}

func momentToken(s string) string {
	for _, tok := range momentTokens {
		if strings.HasPrefix(s, tok) {
			return tok
		}
	}
	return ""
}

func momentValue(t time.Time, tok string) string {
	two := func(n int) string {
		if n < 10 {
			return "0" + strconv.Itoa(n)
		}
		return strconv.Itoa(n)
	}
	isoYear, isoWeek := t.ISOWeek()
	localeYear, localeWeek := usWeek(t)
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	switch tok {
	case "YYYY":
		return strconv.Itoa(t.Year())
	case "YY":
		return two(t.Year() % 100)
	case "Q":
		return strconv.Itoa((int(t.Month())-1)/3 + 1)
	case "MMMM":
		return t.Month().String()
	case "MMM":
		return t.Month().String()[:3]
	case "MM":
		return two(int(t.Month()))
	case "Mo":
		return ordinal(int(t.Month()))
	case "M":
		return strconv.Itoa(int(t.Month()))
	case "DDDD":
		return strings.Repeat("0", 3-len(strconv.Itoa(t.YearDay()))) + strconv.Itoa(t.YearDay())
	case "DDD":
		return strconv.Itoa(t.YearDay())
	case "DD":
		return two(t.Day())
	case "Do":
		return ordinal(t.Day())
	case "D":
		return strconv.Itoa(t.Day())
	case "dddd":
		return t.Weekday().String()
	case "ddd":
		return t.Weekday().String()[:3]
	case "dd":
		return t.Weekday().String()[:2]
	case "d", "e":
		return strconv.Itoa(int(t.Weekday()))
	case "E":
		return strconv.Itoa((int(t.Weekday())+6)%7 + 1)
	case "WW":
		return two(isoWeek)
	case "Wo":
		return ordinal(isoWeek)
	case "W":
		return strconv.Itoa(isoWeek)
	case "ww":
		return two(localeWeek)
	case "wo":
		return ordinal(localeWeek)
	case "w":
		return strconv.Itoa(localeWeek)
	case "GGGG":
		return strconv.Itoa(isoYear)
	case "gggg":
		return strconv.Itoa(localeYear)
	case "HH":
		return two(t.Hour())
	case "H":
		return strconv.Itoa(t.Hour())
	case "hh":
		return two(hour12)
	case "h":
		return strconv.Itoa(hour12)
	case "mm":
		return two(t.Minute())
	case "m":
		return strconv.Itoa(t.Minute())
	case "ss":
		return two(t.Second())
	case "s":
		return strconv.Itoa(t.Second())
	case "A":
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case "a":
		if t.Hour() < 12 {
			return "am"
		}
		return "pm"
	case "X":
		return strconv.FormatInt(t.Unix(), 10)
	case "x":
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	return tok
}

// usWeek is moment's English locale week: weeks start on Sunday and the
// first week of a year holds January 1st.
func usWeek(t time.Time) (year, week int) {
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	sunday := day.AddDate(0, 0, -int(day.Weekday()))
	saturday := sunday.AddDate(0, 0, 6)
	year = saturday.Year() // the week holding January 1st belongs to its year
	jan1 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
	first := jan1.AddDate(0, 0, -int(jan1.Weekday()))
	return year, int(sunday.Sub(first).Hours()/24)/7 + 1
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}
