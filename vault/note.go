package vault

import (
	"strings"
	"time"
)

// Note is one parsed markdown file of the vault.
type Note struct {
	// Path is the vault-relative slash path, e.g. "projects/Alpha.md".
	Path string `json:"path"`
	// Title is the frontmatter title, or the basename without ".md".
	Title   string   `json:"title"`
	Aliases []string `json:"aliases,omitempty"`
	// Tags are lower-cased, without the leading '#', deduplicated, in order of
	// first appearance; nested tags keep their slashes ("area/work").
	Tags     []string  `json:"tags,omitempty"`
	Headings []Heading `json:"headings,omitempty"`
	Links    []Link    `json:"links,omitempty"`
	// Properties holds every frontmatter key, including title/aliases/tags.
	Properties map[string]any `json:"properties,omitempty"`
	// FrontmatterError is set when the frontmatter block failed to parse; the
	// note is still indexed from its body.
	FrontmatterError string `json:"frontmatterError,omitempty"`
	// Tasks are the note's checkbox list items, in order (at most
	// MaxTasks).
	Tasks []Task `json:"tasks,omitempty"`
	// Sections are the line ranges between headings, in order: the text
	// before the first heading (when there is any), then one per heading.
	Sections []Section `json:"-"`
	// Blocks are the line ranges of the note's blocks (see scanStructure),
	// in order.
	Blocks []Span `json:"-"`
	// Body is the markdown after the frontmatter block.
	Body    string    `json:"-"`
	Chunks  []Chunk   `json:"-"`
	ModTime time.Time `json:"mtime"`
	// Date is the day the note is about: its frontmatter date (date,
	// created...) or a date its file name starts with (daily notes); zero
	// when it has none.
	Date time.Time `json:"date,omitzero"`
	Size int64     `json:"size"`
	// Hash is a hex content hash used to detect changes.
	Hash string `json:"hash"`
	// Cut says, one plain sentence each, what of this note was left out
	// because it is larger than the per-note limits (MaxBodyBytes,
	// MaxFrontmatterBytes, MaxTags, MaxLinks, MaxHeadings), e.g. "body:
	// only the first 2 MiB of 5.3 MiB is indexed". Empty for ordinary notes.
	Cut []string `json:"cut,omitempty"`
}

// Per-note limits. A note beyond them is still indexed, up to them, and
// its Cut field says what was left out; they bound the memory and time one
// note can take (a note costs the index tens of times its size in memory).
const (
	// MaxBodyBytes is how much of the body (after the frontmatter) is
	// parsed, indexed and readable in chunks: 2 MiB, cut at a line end.
	MaxBodyBytes = 2 << 20
	// MaxFrontmatterBytes is the largest frontmatter block that is read:
	// 256 KiB. A larger block is skipped whole (FrontmatterError says so).
	MaxFrontmatterBytes = 256 << 10
	// MaxTags is how many distinct tags (frontmatter and inline) are kept;
	// also the cap on aliases.
	MaxTags = 1000
	// MaxLinks is how many links are kept, in order of appearance.
	MaxLinks = 10_000
	// MaxHeadings is how many headings are kept, in order of appearance.
	MaxHeadings = 10_000
)

// Heading is one ATX or setext heading of a note.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
	Line  int    `json:"line"`
}

// Link is a wikilink, embed or markdown link found in a note.
type Link struct {
	Target  string `json:"target"`
	Heading string `json:"heading,omitempty"`
	Alias   string `json:"alias,omitempty"`
	Embed   bool   `json:"embed,omitempty"`
	// Kind is "wikilink" or "markdown".
	Kind string `json:"kind"`
}

// Chunk is a heading-delimited section of a note, capped in size.
type Chunk struct {
	Index int `json:"index"`
	// Heading is the heading path of the section, e.g. "Setup > Linux";
	// empty for text before the first heading.
	Heading   string `json:"heading,omitempty"`
	Text      string `json:"text"`
	StartLine int    `json:"startLine"`
}

// IsNotePath reports whether rel, a vault-relative slash path, has the form
// of a note: a file ending in ".md" (in any case) that is not a dot-file
// and not inside a dot-folder (.obsidian, .trash, .git). It is the one rule
// every vault shares; Vault.Ignored adds the vault's own excludes.
func IsNotePath(rel string) bool {
	return hasMDExt(rel) && !hasDotSegment(rel)
}

// hasDotSegment reports whether a segment of the slash path rel starts
// with a dot.
func hasDotSegment(rel string) bool {
	return strings.HasPrefix(rel, ".") || strings.Contains(rel, "/.")
}
