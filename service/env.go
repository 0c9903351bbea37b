package service

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/llm"
)

// Env is what vault-agent takes from the environment. ProcessEnv reads it;
// tests and embedders fill it themselves. This package is the only one
// that reads the environment.
type Env struct {
	// APIKey is OPENAI_API_KEY, the key of an OpenAI-compatible server. It
	// never appears in logs, events, traces or errors.
	APIKey string
	// BaseURL is OPENAI_BASE_URL, used when the settings name none.
	BaseURL string
	// Model is OPENAI_MODEL, used when the settings name none.
	Model string
	// EmbedAPIKey is VAULT_AGENT_EMBED_API_KEY, the key of the embeddings
	// endpoint when it is not the chat model's (see Settings.EmbedModel).
	// It never appears in logs, events, traces or errors.
	EmbedAPIKey string
	// CacheDir is the user cache directory (os.UserCacheDir: XDG_CACHE_HOME
	// or ~/.cache on Linux), under which indexes live by default; "" when
	// there is none.
	CacheDir string
	// Vars are the VAULT_AGENT_* variables of Keys that are set, by name.
	Vars map[string]string
	// ConfigPath is where the config file is looked for ("" without a
	// user config dir); Config is the file, nil when there is none.
	ConfigPath string
	Config     *Config
	// Home is the user's home folder; WorkDir the working directory ("" when
	// unknown).
	Home, WorkDir string
	// RuntimeDir is the folder, private to the user, of the sockets on
	// which a process holding an index shares it with the others:
	// $XDG_RUNTIME_DIR/vault-agent, else vault-agent-<uid> in the temp
	// dir; "" shares no index.
	RuntimeDir string
}

// ProcessEnv reads Env from the process environment, and the config file.
func ProcessEnv() Env {
	cache, _ := os.UserCacheDir()
	configDir, _ := os.UserConfigDir()
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	e := Env{
		APIKey:      os.Getenv("OPENAI_API_KEY"),
		BaseURL:     strings.TrimSpace(os.Getenv("OPENAI_BASE_URL")),
		Model:       strings.TrimSpace(os.Getenv("OPENAI_MODEL")),
		EmbedAPIKey: os.Getenv("VAULT_AGENT_EMBED_API_KEY"),
		CacheDir:    cache,
		Vars:        map[string]string{},
		ConfigPath:  ConfigPath(os.LookupEnv, configDir),
		Home:        home,
		WorkDir:     wd,
		RuntimeDir:  runtimeDir(),
	}
	for _, k := range Keys {
		if len(k.Env) > 0 {
			if v, ok := os.LookupEnv(k.Env[0]); ok && strings.TrimSpace(v) != "" {
				e.Vars[k.Env[0]] = v
			}
		}
	}
	e.Config = LoadConfig(e.ConfigPath, home)
	return e
}

// Settings are the settings of the environment and the config file for
// the vault at root ("" for none): the config file's top level, under its
// section for that vault, under the variables (VAULT_AGENT_MODEL before
// OPENAI_MODEL, VAULT_AGENT_BASE_URL before OPENAI_BASE_URL), each value
// with its source. Values that cannot be used are left out; Problems says
// which.
func (e Env) Settings(root string) Settings {
	s, _ := e.settings(root)
	return s
}

// Problems are what is wrong in the config file and the variables, for the
// vault at root; each value at fault is ignored.
func (e Env) Problems(root string) []string {
	_, p := e.settings(root)
	return p
}

func (e Env) settings(root string) (Settings, []string) {
	var problems []string
	var s Settings
	if c := e.Config; c != nil {
		problems = append(problems, c.Problems...)
		s = c.top.settings("config file "+c.Path, &problems)
		if v, ok := c.section(root); ok {
			s = s.Merge(v.s.settings(fmt.Sprintf("config file %s [vault.%q]", c.Path, v.name), &problems))
		}
	}
	var env Settings
	for _, k := range Keys {
		if len(k.Env) == 0 {
			continue
		}
		name, v := k.Env[0], e.Vars[k.Env[0]]
		if v == "" {
			switch k.Field {
			case "Model":
				name, v = "OPENAI_MODEL", e.Model
			case "BaseURL":
				name, v = "OPENAI_BASE_URL", e.BaseURL
			}
		}
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		switch k.Field {
		case "Excludes":
			var globs []string
			for _, g := range strings.Split(v, ",") {
				if g = strings.TrimSpace(g); g != "" {
					globs = append(globs, g)
				}
			}
			env.Excludes = globs
			env.source(k.Field, name)
		case "Planner":
			b, err := strconv.ParseBool(v)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s must be true or false, got %q; ignored", name, v))
				continue
			}
			env.Planner = &b
			env.source(k.Field, name)
		default:
			if err := checkValue(k.Field, v); err != nil {
				problems = append(problems, fmt.Sprintf("%s %v; ignored", name, err))
				continue
			}
			setField(&env, k.Field, v, name)
		}
	}
	return s.Merge(env), problems
}

// Layered returns front (the settings a front-end was given: flags, a
// host's) over the environment's and the config file's for the vault at
// root, and reports the problems of those once, as warnings on log.
func (e Env) Layered(root string, front Settings, log *slog.Logger) Settings {
	s, problems := e.settings(root)
	for _, p := range problems {
		reportOnce(log, p)
	}
	return s.Merge(front)
}

// reported holds the messages reportOnce has logged.
var reported sync.Map

// reportOnce logs msg as a warning the first time this process asks, so a
// server that opens many vaults says it once.
func reportOnce(log *slog.Logger, msg string) {
	if log == nil {
		return
	}
	if _, seen := reported.LoadOrStore(msg, true); !seen {
		log.Warn(msg)
	}
}

// TakeNotice reports whether msg has not been reported yet, and marks it
// reported: a command that prints a notice itself keeps the service from
// logging it again.
func TakeNotice(msg string) bool {
	_, seen := reported.LoadOrStore(msg, true)
	return !seen
}

// String describes the environment without the key.
func (e Env) String() string {
	set := func(k string) string {
		if k != "" {
			return "set"
		}
		return "unset"
	}
	return fmt.Sprintf("Env{APIKey:%s EmbedAPIKey:%s BaseURL:%q Model:%q CacheDir:%q Vars:%v ConfigPath:%q}", set(e.APIKey), set(e.EmbedAPIKey), e.BaseURL, e.Model, e.CacheDir, e.Vars, e.ConfigPath)
}

// GoString keeps %#v from printing the key.
func (e Env) GoString() string { return e.String() }

// DefaultIndexPath is where the index of the vault at root lives unless
// told otherwise: <cache dir>/vault-agent/<vault folder name>-<hash of its
// absolute path>, so every command shares one index per vault and no index
// is ever written into the vault.
func (e Env) DefaultIndexPath(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("index path for %s: %w", root, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if e.CacheDir == "" {
		return "", errors.New("index path: no user cache dir (use --index)")
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(e.CacheDir, "vault-agent", sanitizeName(filepath.Base(abs))+"-"+hex.EncodeToString(sum[:4])), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func sanitizeName(s string) string {
	s = strings.Trim(unsafeName.ReplaceAllString(s, "_"), "._")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "vault"
	}
	return s
}

// excludesSuffix tells apart the default index of a vault opened with
// excludes (or without Obsidian's): such an index holds fewer notes, and
// must not replace the one every other command and server shares. It is
// "" for the vault as a whole.
func excludesSuffix(s Settings) string {
	var keys []string
	for _, e := range s.Excludes {
		if e = strings.TrimSpace(e); e != "" {
			keys = append(keys, e)
		}
	}
	if s.ObsidianExcludes != nil && !*s.ObsidianExcludes {
		keys = append(keys, "\x00no-obsidian-excludes")
	}
	if len(keys) == 0 {
		return ""
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	sum := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
	return "-x" + hex.EncodeToString(sum[:4])
}

// embedder is newEmbedder for the vault's settings, except that an
// embedding model named only by the environment or the config file that
// cannot be used (no endpoint, no key) is a warning, once: search stays
// lexical and nothing fails to start because of the environment. One a
// front-end named is its error.
func (s *Service) embedder() (*llm.Embedder, error) {
	e, err := newEmbedder(s.settings, s.env, s.log)
	if err == nil || !fromEnvironment(s.settings.Source("EmbedModel")) {
		return e, err
	}
	reportOnce(s.log, fmt.Sprintf("semantic search is off: the embedding model %q from %s cannot be used: %v", s.settings.EmbedModel, s.settings.Source("EmbedModel"), err))
	return nil, nil
}

// fromEnvironment reports whether a source names a variable or the config
// file, not a front-end's flag or setting.
func fromEnvironment(src string) bool {
	if strings.Contains(src, " in config file ") {
		return true
	}
	for _, k := range Keys {
		if slices.Contains(k.Env, src) {
			return true
		}
	}
	return false
}
