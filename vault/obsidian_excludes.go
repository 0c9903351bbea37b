package vault

import (
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// obsidianFilter is one entry of Obsidian's "Excluded files" setting
// (userIgnoreFilters in .obsidian/app.json). Obsidian hides such files from
// its own search, so a user expects the agent not to cite them either. An
// entry written as /.../ is a regular expression tested against the
// vault-relative path; any other entry is a path prefix ("Templates/",
// "Archive", "Daily/2019-"), which is how Obsidian applies it.
type obsidianFilter struct {
	raw    string
	prefix string
	re     *regexp.Regexp
}

func (f obsidianFilter) match(rel string) bool {
	if f.re != nil {
		return f.re.MatchString(rel)
	}
	return strings.HasPrefix(rel, f.prefix)
}

// maxAppJSON caps the settings file we read.
const maxAppJSON = 1 << 20

// loadObsidianFilters reads userIgnoreFilters from root/.obsidian/app.json.
// A missing file means no filters; an unreadable or malformed one, or an
// entry that does not compile, is logged and skipped: a broken settings
// file must not stop the vault from opening.
func loadObsidianFilters(root string, log *slog.Logger) []obsidianFilter {
	name := filepath.Join(root, ".obsidian", "app.json")
	b, err := os.ReadFile(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("cannot read Obsidian settings; its excluded files are not applied", "file", name, "error", err)
		}
		return nil
	}
	if len(b) > maxAppJSON {
		log.Warn("Obsidian settings file too large; its excluded files are not applied", "file", name, "bytes", len(b))
		return nil
	}
	var app struct {
		UserIgnoreFilters []string `json:"userIgnoreFilters"`
	}
	if err := json.Unmarshal(b, &app); err != nil {
		log.Warn("Obsidian settings are not valid JSON; its excluded files are not applied", "file", name, "error", err)
		return nil
	}
	var out []obsidianFilter
	for _, raw := range app.UserIgnoreFilters {
		s := strings.TrimSpace(raw)
		if s == "" || s == "/" {
			continue
		}
		if len(s) > 2 && strings.HasPrefix(s, "/") && strings.HasSuffix(s, "/") {
			re, err := regexp.Compile(s[1 : len(s)-1])
			if err != nil {
				log.Warn("skipping an Obsidian excluded-files pattern that is not a valid regular expression", "pattern", raw, "error", err)
				continue
			}
			out = append(out, obsidianFilter{raw: raw, re: re})
			continue
		}
		out = append(out, obsidianFilter{raw: raw, prefix: strings.TrimLeft(strings.ReplaceAll(s, `\`, "/"), "/")})
	}
	if len(out) > 0 {
		log.Info("applying Obsidian's excluded files", "count", len(out))
	}
	return out
}
