package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/vault-agent/vault-agent/internal/truncate"
)

// Options configures a Vault.
type Options struct {
	// Excludes are glob patterns on vault-relative slash paths, gitignore
	// style: "Archive/**", "*.excalidraw.md", "templates/". See pattern.
	Excludes []string
	// IgnoreObsidianExcludes stops the vault from applying Obsidian's own
	// "Excluded files" setting (userIgnoreFilters in .obsidian/app.json),
	// which it honours by default. See obsidianFilter.
	IgnoreObsidianExcludes bool
	// ChunkSize is the maximum number of runes per chunk; default 1500.
	ChunkSize int
	// Logger receives debug lines about skipped entries (broken symlinks,
	// symlinks leaving the vault, unreadable folders) and watcher warnings.
	// Nil discards them.
	Logger *slog.Logger
}

// Vault is an opened vault folder. It is immutable and safe for concurrent
// use.
type Vault struct {
	root     string // absolute, symlinks evaluated
	given    string // absolute form of the path passed to Open
	chunk    int
	patterns []pattern
	obsidian []obsidianFilter
	log      *slog.Logger
}

// FileInfo describes one indexable note file found by Walk.
type FileInfo struct {
	Path    string // vault-relative slash path
	Size    int64
	ModTime time.Time
}

// Open opens the vault rooted at root, which must be an existing folder.
func Open(root string, opts Options) (*Vault, error) {
	if strings.TrimSpace(root) == "" {
		return nil, errors.New("open vault: no vault folder given")
	}
	given, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open vault %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open vault: folder %q does not exist: %w", root, ErrNotFound)
		}
		return nil, fmt.Errorf("open vault %q: %w", root, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("open vault %q: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open vault: %q is a file, not a folder: %w", root, ErrNotDir)
	}
	pats, err := compilePatterns(opts.Excludes)
	if err != nil {
		return nil, fmt.Errorf("open vault %q: %w", root, err)
	}
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := &Vault{root: real, given: given, chunk: chunk, patterns: pats, log: log.With("component", "vault")}
	if !opts.IgnoreObsidianExcludes {
		v.obsidian = loadObsidianFilters(real, v.log)
	}
	return v, nil
}

// Root returns the absolute vault folder, symlinks evaluated.
func (v *Vault) Root() string { return v.root }

// ChunkSize returns the chunk cap in runes that ReadNote uses.
func (v *Vault) ChunkSize() int { return v.chunk }

// MaxPathBytes is the longest vault path accepted (the usual PATH_MAX): a
// longer one names no file, and is refused before any work on it.
const MaxPathBytes = 4096

// cleanRel checks a path from a host or a model lexically and returns it as
// a clean vault-relative slash path ("." for the vault root). Nothing is
// decoded: "%2e%2e" is a file name, not "..".
func cleanRel(rel string) (string, error) {
	if strings.TrimSpace(rel) == "" {
		return "", fmt.Errorf("%w: empty path", ErrUnsafePath)
	}
	if len(rel) > MaxPathBytes {
		return "", fmt.Errorf("%w: path %q is %d bytes long; no file path is longer than %d", ErrUnsafePath, truncate.Runes(rel, 80), len(rel), MaxPathBytes)
	}
	if strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("%w: path %q contains a NUL byte", ErrUnsafePath, rel)
	}
	s := strings.ReplaceAll(rel, `\`, "/")
	if strings.HasPrefix(s, "/") || hasVolume(s) {
		return "", fmt.Errorf("%w: path %q is absolute; give a path relative to the vault", ErrUnsafePath, rel)
	}
	c := path.Clean(s)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: path %q escapes the vault", ErrUnsafePath, rel)
	}
	return c, nil
}

// hasVolume reports a Windows drive prefix such as "C:" or "c:/x".
func hasVolume(s string) bool {
	return len(s) >= 2 && s[1] == ':' && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z')
}

// Resolve turns a vault-relative path into an absolute path inside the
// vault, following symlinks. The path need not exist (the result then names
// where it would be). Errors wrap ErrUnsafePath.
func (v *Vault) Resolve(rel string) (string, error) {
	c, err := cleanRel(rel)
	if err != nil {
		return "", err
	}
	abs := filepath.Join(v.root, filepath.FromSlash(c))
	real, err := v.evalInside(abs)
	if err != nil {
		return "", fmt.Errorf("%w: path %q escapes the vault (%v)", ErrUnsafePath, rel, err)
	}
	return real, nil
}

// evalInside evaluates the symlinks of abs (a lexical child of the root) and
// checks that the result stays in the vault. For a path that does not exist
// yet, the longest existing prefix is evaluated.
func (v *Vault) evalInside(abs string) (string, error) {
	p, rest := v.existingPrefix(abs)
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			if !within(v.root, real) {
				// Where it leads is not said: the vault's reader
				// (a host, a model) has no business knowing.
				return "", errors.New("a symlink on the path leads outside the vault")
			}
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if _, serr := os.Stat(p); errors.Is(serr, syscall.ELOOP) {
			return "", errors.New("symlink loop")
		}
		// A dangling symlink: check where it points before calling the
		// path merely missing.
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, rerr := os.Readlink(p)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			if !within(v.root, filepath.Clean(target)) {
				return "", errors.New("a symlink on the path leads outside the vault")
			}
		}
		if p == v.root || len(p) <= len(v.root) {
			return abs, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = filepath.Dir(p)
	}
}

// existingPrefix splits abs (a lexical child of the root) into its longest
// prefix that exists and the components after it, walking down from the
// root: a long path that does not exist costs one lstat per existing
// component instead of a symlink evaluation per component.
func (v *Vault) existingPrefix(abs string) (string, []string) {
	rel, err := filepath.Rel(v.root, abs)
	if err != nil || rel == "." {
		return abs, nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	p := v.root
	for i, part := range parts {
		next := filepath.Join(p, part)
		if _, err := os.Lstat(next); err != nil {
			return p, parts[i:]
		}
		p = next
	}
	return abs, nil
}

// within reports whether p is root or inside it; both must be clean.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if strings.HasSuffix(root, string(filepath.Separator)) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// Rel turns an absolute path into a vault-relative slash path; it reports
// false for paths outside the vault. The root itself is ".".
func (v *Vault) Rel(abs string) (string, bool) {
	if !filepath.IsAbs(abs) {
		return "", false
	}
	abs = filepath.Clean(abs)
	for _, root := range []string{v.root, v.given} {
		if r, ok := relTo(root, abs); ok {
			return r, true
		}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		if r, ok := relTo(v.root, real); ok {
			return r, true
		}
	}
	return "", false
}

func relTo(root, abs string) (string, bool) {
	if !within(root, abs) {
		return "", false
	}
	r, err := filepath.Rel(root, abs)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// Ignored reports whether the vault-relative path is not part of the index:
// anything inside or named like a dot-folder/dot-file, anything matched by
// an exclude pattern (or below an excluded folder), and files that are not
// .md notes. The root is never ignored.
func (v *Vault) Ignored(rel string, isDir bool) bool {
	_, reason := v.hiddenReason(rel, isDir)
	return reason != ""
}

// hiddenReason says why a path is ignored, or "" when it is not; notNote
// reports that the only reason is the file type.
func (v *Vault) hiddenReason(rel string, isDir bool) (notNote bool, reason string) {
	rel = strings.Trim(strings.ReplaceAll(rel, `\`, "/"), "/")
	if rel == "" || rel == "." {
		return false, ""
	}
	if hasDotSegment(rel) {
		return false, "it is inside a hidden (dot) folder or is a dot-file, which is not part of the vault"
	}
	segs := strings.Split(rel, "/")
	for i := range segs {
		dir := isDir || i < len(segs)-1
		for _, p := range v.patterns {
			if p.match(segs[:i+1], dir) {
				return false, fmt.Sprintf("it is excluded by the pattern %q", p.raw)
			}
		}
	}
	if len(v.obsidian) > 0 {
		probe := rel
		if isDir {
			probe += "/"
		}
		for _, f := range v.obsidian {
			if f.match(probe) {
				return false, fmt.Sprintf("it is in Obsidian's excluded files (%q in .obsidian/app.json)", f.raw)
			}
		}
	}
	if !isDir && !hasMDExt(rel) {
		return true, "it is not a .md note"
	}
	return false, ""
}

// Walk calls fn for every indexable .md note of the vault, in lexical order
// per folder. It skips dot-folders, excluded paths, symlinks that leave the
// vault, loop or point into an ignored place, and entries that vanish while
// it runs. Symlinks inside the vault are followed; a folder reached twice is
// walked once, and symlinked folders are walked after the real tree so a
// folder is reported under its real path. An error from fn stops the walk
// and is returned (fs.SkipAll stops it without error).
func (v *Vault) Walk(ctx context.Context, fn func(FileInfo) error) error {
	w := &walker{v: v, fn: fn, visited: map[string]bool{v.root: true}}
	err := w.dir(ctx, v.root, v.root, "")
	for err == nil && len(w.links) > 0 {
		l := w.links[0]
		w.links = w.links[1:]
		if w.visited[l.real] {
			continue
		}
		w.visited[l.real] = true
		err = w.dir(ctx, l.abs, l.real, l.rel)
	}
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	v       *Vault
	fn      func(FileInfo) error
	visited map[string]bool // evaluated folder paths already walked
	links   []linkedDir     // symlinked folders, walked after the real tree
}

type linkedDir struct{ abs, real, rel string }

// dir walks dirAbs (as reached from the root, possibly through a symlink),
// whose evaluated location is dirReal.
func (w *walker) dir(ctx context.Context, dirAbs, dirReal, dirRel string) error {
	v, fn, visited := w.v, w.fn, w.visited
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dirAbs)
	if err != nil {
		if dirRel == "" {
			return fmt.Errorf("walk vault %s: %w", v.root, err)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			v.log.Warn("skipping unreadable folder", "path", dirRel, "err", err)
		}
		return nil
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		rel := name
		if dirRel != "" {
			rel = dirRel + "/" + name
		}
		abs := filepath.Join(dirAbs, name)
		typ := e.Type()
		switch {
		case typ&fs.ModeSymlink != 0:
			target, err := filepath.EvalSymlinks(abs)
			if err != nil {
				v.log.Debug("skipping broken or looping symlink", "path", rel, "err", err)
				continue
			}
			targetRel, inside := relTo(v.root, target)
			if !inside {
				v.log.Debug("skipping symlink that leaves the vault", "path", rel)
				continue
			}
			st, err := os.Stat(target)
			if err != nil {
				continue
			}
			if st.IsDir() {
				if !v.Ignored(rel, true) && !v.Ignored(targetRel, true) {
					w.links = append(w.links, linkedDir{abs: abs, real: target, rel: rel})
				}
			} else if st.Mode().IsRegular() && !v.Ignored(rel, false) && !v.Ignored(targetRel, false) {
				if err := fn(FileInfo{Path: rel, Size: st.Size(), ModTime: st.ModTime()}); err != nil {
					return err
				}
			}
		case e.IsDir():
			real := filepath.Join(dirReal, name)
			if v.Ignored(rel, true) || visited[real] {
				continue
			}
			visited[real] = true
			if err := w.dir(ctx, abs, real, rel); err != nil {
				return err
			}
		case typ.IsRegular():
			if v.Ignored(rel, false) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // vanished since ReadDir
			}
			if err := fn(FileInfo{Path: rel, Size: info.Size(), ModTime: info.ModTime()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadNote reads and parses the note at the vault-relative path rel. Errors
// wrap ErrUnsafePath, ErrNotFound (missing, in a dot-folder, excluded) or
// ErrNotMarkdown (not a .md file, a folder, or binary data), and name the
// path.
func (v *Vault) ReadNote(rel string) (*Note, error) {
	raw, err := v.ReadRaw(rel, -1)
	if err != nil {
		return nil, err
	}
	return Parse(raw.Path, raw.Content, raw.ModTime, v.chunk), nil
}

// RawNote is the unparsed content of a note.
type RawNote struct {
	Path    string // clean vault-relative slash path
	Content []byte
	ModTime time.Time
	// Truncated is set when Content is only the first bytes of the file
	// (cut at a character boundary).
	Truncated bool
}

// ReadRaw reads the note at rel with ReadNote's checks and errors, without
// parsing it. A limit >= 0 reads at most that many bytes.
func (v *Vault) ReadRaw(rel string, limit int64) (*RawNote, error) {
	c, err := cleanRel(rel)
	if err != nil {
		return nil, fmt.Errorf("read note: %w", err)
	}
	if notNote, reason := v.hiddenReason(c, false); notNote {
		return nil, fmt.Errorf("read note %q: %w: only .md files are notes", rel, ErrNotMarkdown)
	} else if reason != "" {
		return nil, fmt.Errorf("read note %q: %w: %s", rel, ErrNotFound, reason)
	}
	f := openPlain(v.root, c)
	if f == nil {
		if f, err = v.openResolved(rel, c); err != nil {
			return nil, err
		}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read note %q: %w", rel, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("read note %q: %w: it is a folder", rel, ErrNotMarkdown)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read note %q: %w: it is not a regular file (%s)", rel, ErrNotMarkdown, st.Mode().Type())
	}
	raw := &RawNote{Path: c, ModTime: st.ModTime()}
	if limit >= 0 && st.Size() > limit {
		buf := make([]byte, limit)
		k, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("read note %q: %w", rel, err)
		}
		raw.Content, raw.Truncated = trimPartialRune(buf[:k]), true
	} else {
		// Sized like os.ReadFile, so a note is read in one go.
		buf := bytes.NewBuffer(make([]byte, 0, st.Size()+512))
		if _, err := buf.ReadFrom(f); err != nil {
			return nil, fmt.Errorf("read note %q: %w", rel, err)
		}
		raw.Content = buf.Bytes()
	}
	if looksBinary(raw.Content) {
		return nil, fmt.Errorf("read note %q: %w: it holds binary data (NUL bytes), not text", rel, ErrNotMarkdown)
	}
	return raw, nil
}

// slowOpens counts the notes opened by openResolved (tests).
var slowOpens atomic.Int64

// openResolved opens the note at c (rel as given) after resolving its
// symlinks: refused when one leads outside the vault, not found when one
// leads into a dot-folder or an excluded place.
func (v *Vault) openResolved(rel, c string) (*os.File, error) {
	slowOpens.Add(1)
	abs, err := v.Resolve(c)
	if err != nil {
		return nil, fmt.Errorf("read note: %w", err)
	}
	if real, ok := v.Rel(abs); ok && real != c {
		// A symlink into a dot-folder or an excluded place does not
		// make that place part of the vault.
		if _, reason := v.hiddenReason(real, false); reason != "" {
			return nil, fmt.Errorf("read note %q: %w: it links to %q and %s", rel, ErrNotFound, real, reason)
		}
	}
	// Non-blocking: opening a FIFO named like a note must not wait for a
	// writer (ReadRaw refuses anything but a regular file once open).
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("read note %q: %w", rel, ErrNotFound)
		}
		return nil, fmt.Errorf("read note %q: %w", rel, err)
	}
	return f, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// binaryProbe is how much of a file looksBinary inspects, as git does.
const binaryProbe = 8000

// looksBinary reports content with a NUL byte near its start: an image or
// an encrypted blob saved as .md, which no markdown text contains.
func looksBinary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), binaryProbe)], 0) >= 0
}
