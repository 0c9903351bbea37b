package service

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
}

// ProcessEnv reads Env from the process environment.
func ProcessEnv() Env {
	cache, _ := os.UserCacheDir()
	return Env{
		APIKey:      os.Getenv("OPENAI_API_KEY"),
		BaseURL:     os.Getenv("OPENAI_BASE_URL"),
		Model:       strings.TrimSpace(os.Getenv("OPENAI_MODEL")),
		EmbedAPIKey: os.Getenv("VAULT_AGENT_EMBED_API_KEY"),
		CacheDir:    cache,
	}
}

// String describes the environment without the key.
func (e Env) String() string {
	set := func(k string) string {
		if k != "" {
			return "set"
		}
		return "unset"
	}
	return fmt.Sprintf("Env{APIKey:%s EmbedAPIKey:%s BaseURL:%q Model:%q CacheDir:%q}", set(e.APIKey), set(e.EmbedAPIKey), e.BaseURL, e.Model, e.CacheDir)
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
