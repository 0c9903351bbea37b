package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// The config file holds the settings people would otherwise repeat on every
// command, at the top level for every vault and in [vault."DIR"] sections
// for one vault:
//
//	model = "gpt-4o-mini"
//	exclude = ["Archive/**"]
//
//	[vault."~/Work Notes"]
//	base-url = "http://localhost:11434/v1"
//	model = "llama3.1"
//
// Its keys are the flags' names (ConfigKeys). TOML (github.com/BurntSushi/
// toml) rather than YAML: a flat file of strings, lists and booleans has
// no indentation to get wrong, and the decoder lists the keys it did not
// use, so a misspelt key is reported rather than silently ignored.

// ConfigVar names the config file when set; otherwise it is
// <user config dir>/vault-agent/config.toml (ConfigPath).
const ConfigVar = "VAULT_AGENT_CONFIG"

// Config is a read config file.
type Config struct {
	// Path is the file read.
	Path string
	top  fileSettings
	// vaults are the [vault."DIR"] sections, by the folder's absolute path.
	vaults []vaultSection
	// Problems are what was wrong in the file (a syntax error, an unknown
	// key, a value that cannot be used); each is reported and its value
	// ignored.
	Problems []string
}

type vaultSection struct {
	name string // as written in the file
	dir  string // absolute, cleaned
	s    fileSettings
}

// fileSettings are the settings a config file may hold.
type fileSettings struct {
	Provider     string   `toml:"provider"`
	Model        string   `toml:"model"`
	BaseURL      string   `toml:"base-url"`
	EmbedModel   string   `toml:"embed-model"`
	EmbedBaseURL string   `toml:"embed-base-url"`
	Exclude      []string `toml:"exclude"`
	Planner      *bool    `toml:"planner"`
	Mode         string   `toml:"mode"`
}

type configFile struct {
	fileSettings
	Vault map[string]fileSettings `toml:"vault"`
}

// ConfigKeys are the keys a config file may hold, at the top or in a vault
// section.
func ConfigKeys() []string {
	var out []string
	for _, k := range Keys {
		if k.File != "" {
			out = append(out, k.File)
		}
	}
	return out
}

// ConfigPath is where the config file is looked for: $VAULT_AGENT_CONFIG,
// else config.toml in the vault-agent folder of the user config dir
// (XDG_CONFIG_HOME or ~/.config on Linux); "" when there is no such dir.
func ConfigPath(lookup func(string) (string, bool), userConfigDir string) string {
	if p, ok := lookup(ConfigVar); ok && strings.TrimSpace(p) != "" {
		return p
	}
	if userConfigDir == "" {
		return ""
	}
	return filepath.Join(userConfigDir, "vault-agent", "config.toml")
}

// LoadConfig reads the config file at path; home expands a leading ~ in
// vault sections. A missing file is nil and no error; a file that cannot
// be read or parsed is a Config holding only the problem, so that nothing
// fails to start because of it.
func LoadConfig(path, home string) *Config {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	c := &Config{Path: path}
	if err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("config file %s cannot be read: %v; it is ignored", path, err))
		return c
	}
	var f configFile
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		msg := err.Error()
		var pe toml.ParseError
		if errors.As(err, &pe) {
			msg = fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)
		}
		c.Problems = append(c.Problems, fmt.Sprintf("config file %s: %s; the file is ignored", path, msg))
		return c
	}
	for _, k := range md.Undecoded() {
		c.Problems = append(c.Problems, fmt.Sprintf("config file %s: unknown key %q ignored (known keys: %s, and [vault.\"DIR\"] sections of them)",
			path, k.String(), strings.Join(ConfigKeys(), ", ")))
	}
	c.top = f.fileSettings
	names := make([]string, 0, len(f.Vault))
	for name := range f.Vault {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		dir := expandHome(name, home)
		if !filepath.IsAbs(dir) {
			c.Problems = append(c.Problems, fmt.Sprintf("config file %s: [vault.%q] must name the vault's absolute folder (or start with ~/); ignored", path, name))
			continue
		}
		c.vaults = append(c.vaults, vaultSection{name: name, dir: filepath.Clean(dir), s: f.Vault[name]})
	}
	return c
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}

// section returns the vault section for the folder root, if any: the one
// naming it, its symbolic links resolved on both sides.
func (c *Config) section(root string) (vaultSection, bool) {
	if c == nil || root == "" {
		return vaultSection{}, false
	}
	want := canonical(root)
	for _, v := range c.vaults {
		if canonical(v.dir) == want {
			return v, true
		}
	}
	return vaultSection{}, false
}

func canonical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// settings is f as Settings, each value named by where it came from
// (where); values that cannot be used are left out and reported in
// problems.
func (f fileSettings) settings(where string, problems *[]string) Settings {
	var s Settings
	set := func(field, key, value string) {
		if strings.TrimSpace(value) == "" {
			return
		}
		if err := checkValue(field, value); err != nil {
			*problems = append(*problems, fmt.Sprintf("%s in %s: %v; ignored", key, where, err))
			return
		}
		setField(&s, field, strings.TrimSpace(value), key+" in "+where)
	}
	set("Provider", "provider", f.Provider)
	set("Model", "model", f.Model)
	set("BaseURL", "base-url", f.BaseURL)
	set("EmbedModel", "embed-model", f.EmbedModel)
	set("EmbedBaseURL", "embed-base-url", f.EmbedBaseURL)
	set("Mode", "mode", f.Mode)
	if len(f.Exclude) > 0 {
		s.Excludes = slices.Clone(f.Exclude)
		s.source("Excludes", "exclude in "+where)
	}
	if f.Planner != nil {
		p := *f.Planner
		s.Planner = &p
		s.source("Planner", "planner in "+where)
	}
	return s
}

func (s *Settings) source(field, src string) {
	if s.Sources == nil {
		s.Sources = map[string]string{}
	}
	s.Sources[field] = src
}

// setField sets a string setting of s with its source.
func setField(s *Settings, field, value, src string) {
	switch field {
	case "Provider":
		s.Provider = strings.ToLower(value)
	case "Model":
		s.Model = value
	case "BaseURL":
		s.BaseURL = value
	case "EmbedModel":
		s.EmbedModel = value
	case "EmbedBaseURL":
		s.EmbedBaseURL = value
	case "Mode":
		s.Mode = value
	default:
		return
	}
	s.source(field, src)
}

// checkValue checks a string value of the environment or the config file.
func checkValue(field, v string) error {
	v = strings.TrimSpace(v)
	switch field {
	case "Provider":
		if !slices.Contains(Providers, strings.ToLower(v)) {
			return fmt.Errorf("must be one of %s, got %q", strings.Join(Providers, ", "), v)
		}
	case "Mode":
		if !slices.Contains(Modes, v) {
			return fmt.Errorf("must be one of %s, got %q", strings.Join(Modes, ", "), v)
		}
	case "BaseURL", "EmbedBaseURL":
		if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			// The value is not shown: a URL may hold a key.
			return errors.New("must be an http(s) URL, e.g. http://localhost:11434/v1")
		}
	}
	return nil
}
