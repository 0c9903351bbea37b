package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Edit operations (EditRequest.Op). They are the agent's edit tools.
const (
	EditCreate        = "create_note"
	EditAppend        = "append_to_note"
	EditReplace       = "replace_in_note"
	EditSetProperties = "set_properties"
)

// EditRequest asks for one change to one note. Which fields count depends
// on Op.
type EditRequest struct {
	Op   string
	Path string
	// Content is the new note (EditCreate) or the text to add (EditAppend).
	Content string
	// Heading, for EditAppend, puts the text at the end of that heading's
	// section instead of the end of the note.
	Heading string
	// Find, exactly as written and found exactly once, is replaced by
	// Replace (EditReplace).
	Find, Replace string
	// Properties are set in the frontmatter (EditSetProperties); a nil
	// value removes the property. The rest of the YAML (other keys, their
	// order, comments, quoting) is kept as written.
	Properties map[string]any
}

// Proposal is an edit worked out but not written: what a person approves.
// It holds the note as read (its hash, to detect a change since), the note
// as it would be, and the unified diff between them.
type Proposal struct {
	Op string
	// Path is the clean vault-relative slash path of the note.
	Path string
	// Create is set when the note does not exist yet.
	Create bool
	// BaseHash is Hash of the note as read ("" when Create).
	BaseHash string
	Before   string
	After    string
	// Diff is the unified diff from Before to After ("--- a/path",
	// "+++ b/path"; "--- /dev/null" for a new note), as a person is shown
	// it: with the characters Printable escapes escaped.
	Diff string
	// Hidden is set when the path or the text written holds characters
	// the diff shows escaped (a carriage return, an escape sequence, a
	// bidirectional override): an approver should say so.
	Hidden bool
}

// Hash is the hash of a note's content that a Proposal and the edit
// journal record: hex SHA-256.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Propose reads the note req names and works out the edit, without
// writing anything. Errors wrap ErrUnsafePath (outside the vault, through
// a symlink leaving it, a dot-folder), ErrNotMarkdown (not .md),
// ErrNotFound (editing a note that does not exist), ErrExists (creating
// one that does) or ErrEdit (the edit cannot be made as asked: text not
// found, a heading missing), and say what to do instead.
func (v *Vault) Propose(req EditRequest) (*Proposal, error) {
	rel, abs, err := v.editPath(req.Path)
	if err != nil {
		return nil, err
	}
	p := &Proposal{Op: req.Op, Path: rel}
	note, err := openForEdit(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if req.Op != EditCreate {
			return nil, fmt.Errorf("%s %q: %w; create it with %s", req.Op, rel, ErrNotFound, EditCreate)
		}
		if HasHidden(rel) {
			return nil, fmt.Errorf("%s %q: %w: the name holds control or bidirectional formatting characters; name the note with visible characters only", req.Op, rel, ErrUnsafePath)
		}
		p.Create, err = true, nil
	case err != nil:
		return nil, fmt.Errorf("%s %q: %w", req.Op, rel, err)
	default:
		note.close()
		switch {
		case req.Op == EditCreate:
			return nil, fmt.Errorf("%s %q: %w; change it with %s or %s", req.Op, rel, ErrExists, EditAppend, EditReplace)
		case looksBinary(note.data):
			return nil, fmt.Errorf("%s %q: %w: it holds binary data", req.Op, rel, ErrNotMarkdown)
		}
		if err := checkWritable(abs, note.info); err != nil {
			return nil, fmt.Errorf("%s %q: %w", req.Op, rel, err)
		}
		p.BaseHash = Hash(note.data)
		p.Before = string(note.data)
	}
	switch req.Op {
	case EditCreate:
		p.After = req.Content
		if p.After != "" && !strings.HasSuffix(p.After, "\n") {
			p.After += "\n"
		}
	case EditAppend:
		p.After, err = appendText(rel, p.Before, req.Content, req.Heading)
	case EditReplace:
		p.After, err = replaceOnce(p.Before, req.Find, req.Replace)
	case EditSetProperties:
		p.After, err = setProperties(p.Before, req.Properties)
	default:
		err = fmt.Errorf("%w: unknown edit %q", ErrEdit, req.Op)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", req.Op, rel, err)
	}
	if len(p.After) > maxEditBytes {
		return nil, fmt.Errorf("%s %q: %w: the note would be %d bytes, over the %d-byte limit of an edit", req.Op, rel, ErrEdit, len(p.After), maxEditBytes)
	}
	if p.After == p.Before && !p.Create {
		return nil, fmt.Errorf("%s %q: %w: the edit changes nothing", req.Op, rel, ErrEdit)
	}
	from := "a/" + Printable(rel)
	if p.Create {
		from = "/dev/null"
	}
	p.Diff = udiff.Unified(from, "b/"+Printable(rel), Printable(p.Before), Printable(p.After))
	p.Hidden = HasHidden(rel) || HasHidden(p.After)
	return p, nil
}

// editPath checks a path an edit names: the read rules (inside the vault,
// no symlink leaving it, not hidden or excluded) and a .md name, for the
// path as given and for where its symlinks lead. It returns the clean
// vault-relative path and the absolute path to write.
func (v *Vault) editPath(given string) (rel, abs string, err error) {
	c, err := cleanRel(given)
	if err != nil {
		return "", "", fmt.Errorf("edit: %w", err)
	}
	if c == "." {
		return "", "", fmt.Errorf("edit: %w: %q is the vault folder, not a note", ErrUnsafePath, given)
	}
	if !hasMDExt(c) {
		return "", "", fmt.Errorf("edit %q: %w: only .md notes can be edited; add .md to the path", given, ErrNotMarkdown)
	}
	if _, reason := v.hiddenReason(c, false); reason != "" {
		return "", "", fmt.Errorf("edit %q: %w: %s", given, ErrUnsafePath, reason)
	}
	abs, err = v.Resolve(c)
	if err != nil {
		return "", "", fmt.Errorf("edit: %w", err)
	}
	if real, ok := v.Rel(abs); !ok {
		return "", "", fmt.Errorf("edit %q: %w: it resolves outside the vault", given, ErrUnsafePath)
	} else if real != c {
		if !hasMDExt(real) {
			return "", "", fmt.Errorf("edit %q: %w: it links to %q, not a .md note", given, ErrNotMarkdown, real)
		}
		if _, reason := v.hiddenReason(real, false); reason != "" {
			return "", "", fmt.Errorf("edit %q: %w: it links to %q and %s", given, ErrUnsafePath, real, reason)
		}
	}
	return c, abs, nil
}

// Apply writes an approved proposal: after checking that the note is still
// as it was read (else ErrConflict: an edit is never merged into a note
// changed since), or for a new note that none has appeared (ErrExists). The
// write is atomic: a temporary file in the note's folder, synced, given the
// note's mode, renamed over the note after a last check that it is
// unchanged (see replaceChecked), or linked into place for a new note, so a
// note created meanwhile is never replaced. A note that cannot be written
// (read-only) is refused (fs.ErrPermission). It returns the hash of the
// note written.
func (v *Vault) Apply(p *Proposal) (string, error) {
	_, abs, err := v.editPath(p.Path)
	if err != nil {
		return "", err
	}
	after := []byte(p.After)
	if !p.Create {
		if err := replaceChecked(abs, p.BaseHash, after); err != nil {
			return "", fmt.Errorf("%s %q: %w", p.Op, p.Path, err)
		}
		return Hash(after), nil
	}
	if err := v.CheckUnchanged(p); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", fmt.Errorf("create %q: %w", p.Path, err)
	}
	// MkdirAll may have followed a folder swapped for a symlink since.
	if _, abs, err = v.editPath(p.Path); err != nil {
		return "", err
	}
	if err := createNew(abs, after); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create %q: %w", p.Path, ErrExists)
		}
		return "", fmt.Errorf("create %q: %w", p.Path, err)
	}
	return Hash(after), nil
}

// CheckUnchanged reports ErrConflict when the note of p is no longer as it
// was read (or, for a new note, ErrExists when one has appeared), and
// fs.ErrPermission when it cannot be written. A front-end that writes
// through its host (ACP's fs/write_text_file) checks with it just before
// the write.
func (v *Vault) CheckUnchanged(p *Proposal) error {
	_, abs, err := v.editPath(p.Path)
	if err != nil {
		return err
	}
	note, err := openForEdit(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if p.Create {
			return nil
		}
		return fmt.Errorf("%s %q: %w: the note was deleted since it was read", p.Op, p.Path, ErrConflict)
	case err != nil:
		return fmt.Errorf("%s %q: %w", p.Op, p.Path, err)
	}
	note.close()
	switch {
	case p.Create:
		return fmt.Errorf("%s %q: %w: a note was created there since", p.Op, p.Path, ErrExists)
	case Hash(note.data) != p.BaseHash:
		return fmt.Errorf("%s %q: %w", p.Op, p.Path, errChanged)
	}
	if err := checkWritable(abs, note.info); err != nil {
		return fmt.Errorf("%s %q: %w", p.Op, p.Path, err)
	}
	return nil
}

// NoteHash returns the hash of the note at rel as it is on disk, read as
// edits read it (for a host that wrote an edit itself).
func (v *Vault) NoteHash(rel string) (string, error) {
	_, abs, err := v.editPath(rel)
	if err != nil {
		return "", err
	}
	data, _, err := readForEdit(abs)
	if err != nil {
		return "", err
	}
	return Hash(data), nil
}

// Abs returns the absolute path an edit of rel writes, checked as edits
// are.
func (v *Vault) Abs(rel string) (string, error) {
	_, abs, err := v.editPath(rel)
	return abs, err
}

// lineEnding is the line ending a note uses: CRLF when its first line ends
// with one.
func lineEnding(s string) string {
	if i := strings.IndexByte(s, '\n'); i > 0 && s[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// withEnding writes text's line ends as eol.
func withEnding(text, eol string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if eol == "\n" {
		return text
	}
	return strings.ReplaceAll(text, "\n", eol)
}

// appendText adds text at the end of the note, or at the end of the
// section of heading: after the section's last non-blank line, set off by
// a blank line.
func appendText(rel, before, text, heading string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w: nothing to append (content is empty)", ErrEdit)
	}
	eol := lineEnding(before)
	text = withEnding(strings.TrimRight(text, "\r\n"), eol) + eol
	if strings.TrimSpace(heading) == "" {
		switch {
		case before == "":
			return text, nil
		case strings.HasSuffix(before, eol+eol):
			return before + text, nil
		case strings.HasSuffix(before, eol):
			return before + eol + text, nil
		default:
			return before + eol + eol + text, nil
		}
	}
	want := strings.ToLower(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(heading), "#")))
	n := Parse(rel, []byte(before), time.Time{}, DefaultChunkSize)
	found := -1
	for i, h := range n.Headings {
		if strings.ToLower(strings.TrimSpace(h.Text)) == want {
			found = i
			break
		}
	}
	if found < 0 {
		names := make([]string, 0, len(n.Headings))
		for _, h := range n.Headings {
			names = append(names, fmt.Sprintf("%q", h.Text))
		}
		if len(names) == 0 {
			return "", fmt.Errorf("%w: heading %q not found; the note has no headings (omit heading to append at the end)", ErrEdit, heading)
		}
		return "", fmt.Errorf("%w: heading %q not found; the note's headings are %s", ErrEdit, heading, strings.Join(names, ", "))
	}
	h := n.Headings[found]
	lines := strings.SplitAfter(before, "\n")
	end := len(lines) // the section's lines are lines[h.Line-1 : end]
	for _, next := range n.Headings[found+1:] {
		if next.Level <= h.Level {
			end = next.Line - 1
			break
		}
	}
	last := h.Line - 1 // the section's last non-blank line
	for i := h.Line; i < end && i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			last = i
		}
	}
	var b strings.Builder
	for i := 0; i <= last && i < len(lines); i++ {
		b.WriteString(lines[i])
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString(eol)
	}
	b.WriteString(eol)
	b.WriteString(text)
	rest := strings.Join(lines[min(last+1, len(lines)):], "")
	if rest != "" && strings.TrimSpace(lines[min(last+1, len(lines)-1)]) != "" {
		b.WriteString(eol) // the next heading follows at once: keep a blank line before it
	}
	b.WriteString(rest)
	return b.String(), nil
}

// replaceOnce replaces find, which must occur exactly once, with replace.
// In a CRLF note, find and replace written with LF line ends match and are
// written with the note's CRLF; every occurrence of either form counts.
func replaceOnce(before, find, replace string) (string, error) {
	if find == "" {
		return "", fmt.Errorf("%w: find is empty; give the exact text to replace", ErrEdit)
	}
	n := strings.Count(before, find)
	if eol := lineEnding(before); eol != "\n" && n == 0 {
		if crlf := withEnding(find, eol); crlf != find {
			if n = strings.Count(before, crlf); n > 0 {
				find, replace = crlf, withEnding(replace, eol)
			}
		}
	}
	switch n {
	case 0:
		hint := ""
		if strings.Contains(strings.ToLower(before), strings.ToLower(find)) {
			hint = " (it occurs with different capitalization)"
		}
		return "", fmt.Errorf("%w: the text to find does not occur in the note%s; read the note and copy the text exactly", ErrEdit, hint)
	case 1:
		return strings.Replace(before, find, replace, 1), nil
	default:
		return "", fmt.Errorf("%w: the text to find occurs %d times; include more of the surrounding text so it matches once", ErrEdit, n)
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// bomless splits a UTF-8 byte order mark off s.
func bomless(s string) (bom, rest string) {
	if b := []byte(s); bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
		return s[:3], s[3:]
	}
	return "", s
}
