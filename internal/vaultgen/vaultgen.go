package vaultgen

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configures Generate. Zero values take the documented defaults.
type Options struct {
	// Notes is the number of markdown notes to write (default 1000).
	Notes int
	// Seed selects the vault; the same seed gives byte-identical output.
	Seed int64
	// AvgSize is the average note size in bytes (default 6000, so 10,000
	// notes come to about 60 MB). Sizes vary around it (log-normal).
	AvgSize int
	// Folders is the number of folders besides the journal (default
	// Notes/40, at least 1).
	Folders int
	// MaxDepth limits folder nesting (default 4).
	MaxDepth int
	// DailyFraction is the share of notes that are daily notes in
	// journal/YYYY/YYYY-MM-DD.md (default 0.08; negative means none).
	DailyFraction float64
	// FrontmatterRate is the share of notes with a frontmatter block
	// (default 0.85; negative means none).
	FrontmatterRate float64
	// BrokenLinkRate is the share of wikilinks whose target does not exist
	// (default 0.03; negative means none).
	BrokenLinkRate float64
	// Workers is the number of goroutines writing notes (default
	// GOMAXPROCS). It does not change the output.
	Workers int
	// End is the date of the newest daily note and the latest mtime
	// (default 2026-04-20).
	End time.Time
}

func (o *Options) defaults() {
	if o.Notes <= 0 {
		o.Notes = 1000
	}
	if o.AvgSize <= 0 {
		o.AvgSize = 6000
	}
	if o.Folders <= 0 {
		o.Folders = max(1, o.Notes/40)
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 4
	}
	if o.DailyFraction == 0 {
		o.DailyFraction = 0.08
	}
	o.DailyFraction = min(max(o.DailyFraction, 0), 1)
	if o.FrontmatterRate == 0 {
		o.FrontmatterRate = 0.85
	}
	o.FrontmatterRate = min(max(o.FrontmatterRate, 0), 1)
	if o.BrokenLinkRate == 0 {
		o.BrokenLinkRate = 0.03
	}
	o.BrokenLinkRate = min(max(o.BrokenLinkRate, 0), 1)
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.End.IsZero() {
		o.End = time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)
	}
}

// Stats describes a generated vault.
type Stats struct {
	Notes      int
	DailyNotes int
	// Folders counts the directories created below the vault root,
	// including journal folders.
	Folders int
	Bytes   int64
	// Links counts wikilinks, embeds and markdown links to notes;
	// BrokenLinks those whose target does not exist.
	Links       int
	BrokenLinks int
	// Paths are the vault-relative slash paths of all notes, sorted.
	Paths []string
	Took  time.Duration
}

type folder struct {
	path  string // vault-relative slash path, "" for the root
	depth int
	topic int
}

type plannedNote struct {
	path    string // vault-relative slash path
	name    string // basename without .md: the wikilink target
	folder  string
	topic   int
	daily   bool
	date    time.Time // daily notes: the day; others: last update
	size    int
	heading string // first "##" heading, a target for [[name#heading]]
}

type plan struct {
	opts    Options
	folders []folder
	notes   []plannedNote
	// popular is a permutation of note indices; links prefer its head,
	// which makes a few notes hubs, as in real vaults.
	popular []int
}

var topFolders = []string{"Projects", "Areas", "Resources", "Archive", "Knowledge Base", "Meetings",
	"People", "Reading", "recipes", "travel", "Work", "Inbox"}

// Generate writes a vault of opts.Notes notes into dir, creating dir if
// needed. dir must be empty or not exist.
func Generate(dir string, opts Options) (Stats, error) {
	start := time.Now()
	opts.defaults()
	if err := ensureEmpty(dir); err != nil {
		return Stats{}, err
	}
	p := makePlan(opts)

	dirs := map[string]bool{}
	for _, n := range p.notes {
		if n.folder != "" {
			dirs[n.folder] = true
		}
	}
	for _, f := range p.folders {
		if f.path != "" {
			dirs[f.path] = true
		}
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return Stats{}, fmt.Errorf("create folder %s: %w", d, err)
		}
	}
	if err := writeObsidianConfig(dir, opts.End); err != nil {
		return Stats{}, err
	}

	type result struct {
		bytes         int64
		links, broken int
		err           error
	}
	results := make([]result, opts.Workers)
	var wg sync.WaitGroup
	next := make(chan int, 256)
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var buf bytes.Buffer
			res := &results[w]
			for i := range next {
				if res.err != nil {
					continue // drain
				}
				buf.Reset()
				links, broken := p.render(&buf, i)
				res.links += links
				res.broken += broken
				res.bytes += int64(buf.Len())
				n := &p.notes[i]
				full := filepath.Join(dir, filepath.FromSlash(n.path))
				if err := os.WriteFile(full, buf.Bytes(), 0o644); err != nil {
					res.err = fmt.Errorf("write %s: %w", n.path, err)
					continue
				}
				if err := os.Chtimes(full, n.date, n.date); err != nil {
					res.err = fmt.Errorf("set mtime of %s: %w", n.path, err)
				}
			}
		}(w)
	}
	for i := range p.notes {
		next <- i
	}
	close(next)
	wg.Wait()

	st := Stats{Notes: len(p.notes), Folders: len(dirList)}
	for _, r := range results {
		if r.err != nil {
			return Stats{}, r.err
		}
		st.Bytes += r.bytes
		st.Links += r.links
		st.BrokenLinks += r.broken
	}
	st.Paths = make([]string, len(p.notes))
	for i, n := range p.notes {
		st.Paths[i] = n.path
		if n.daily {
			st.DailyNotes++
		}
	}
	sort.Strings(st.Paths)
	st.Took = time.Since(start)
	return st, nil
}

func ensureEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create vault dir: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read vault dir: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	return nil
}

func writeObsidianConfig(dir string, mtime time.Time) error {
	cfg := filepath.Join(dir, ".obsidian")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		return fmt.Errorf("create .obsidian: %w", err)
	}
	const app = "{\n  \"attachmentFolderPath\": \"attachments\",\n  \"alwaysUpdateLinks\": true\n}\n"
	name := filepath.Join(cfg, "app.json")
	if err := os.WriteFile(name, []byte(app), 0o644); err != nil {
		return fmt.Errorf("write .obsidian/app.json: %w", err)
	}
	if err := os.Chtimes(name, mtime, mtime); err != nil {
		return fmt.Errorf("set mtime of .obsidian/app.json: %w", err)
	}
	return nil
}

// makePlan decides every folder and note name, topic, date and size from
// the master random source, sequentially, so that rendering can run in
// parallel without changing the output.
func makePlan(o Options) *plan {
	r := rand.New(rand.NewPCG(uint64(o.Seed), 0x9e3779b97f4a7c15))
	v := getVocab()
	p := &plan{opts: o}

	// Folders: the root, then top-level areas, then nested ones.
	p.folders = append(p.folders, folder{path: "", topic: r.IntN(len(v.topics))})
	used := map[string]bool{"": true, "journal": true}
	nTop := min(max(o.Folders/5, 1), len(topFolders))
	for i := 0; i < o.Folders; i++ {
		var f folder
		if i < nTop {
			f = folder{path: topFolders[i], depth: 1, topic: r.IntN(len(v.topics))}
		} else {
			var parent folder
			for tries := 0; ; tries++ {
				parent = p.folders[1+r.IntN(len(p.folders)-1)]
				if parent.depth < o.MaxDepth || tries > 20 {
					break
				}
			}
			if parent.depth >= o.MaxDepth {
				parent = p.folders[1]
			}
			t := parent.topic
			if r.IntN(4) == 0 {
				t = r.IntN(len(v.topics))
			}
			var name string
			switch r.IntN(5) {
			case 0:
				name = titleWord(v.tail[r.IntN(len(v.tail))])
			case 1:
				name = strconv.Itoa(2019 + r.IntN(8))
			default:
				tn := v.topics[t].nouns
				name = titleWord(tn[r.IntN(len(tn))])
			}
			f = folder{path: parent.path + "/" + name, depth: parent.depth + 1, topic: t}
		}
		base := f.path
		for k := 2; used[strings.ToLower(f.path)]; k++ {
			f.path = base + " " + strconv.Itoa(k)
		}
		used[strings.ToLower(f.path)] = true
		p.folders = append(p.folders, f)
	}

	nDaily := int(math.Round(float64(o.Notes) * o.DailyFraction))
	names := map[string]bool{}
	sigma := 0.6
	sizeNorm := math.Exp(sigma * sigma / 2)
	folderZ := rand.NewZipf(r, 1.2, 3, uint64(len(p.folders)-1))
	day := o.End
	p.notes = make([]plannedNote, 0, o.Notes)
	for i := 0; i < o.Notes; i++ {
		size := int(float64(o.AvgSize) * math.Exp(r.NormFloat64()*sigma) / sizeNorm)
		size = min(max(size, 200), 10*o.AvgSize)
		n := plannedNote{size: size}
		if i < nDaily {
			n.daily = true
			n.date = day.Add(time.Duration(18*60+r.IntN(300)) * time.Minute)
			y := day.Format("2006")
			n.folder = "journal/" + y
			n.name = day.Format("2006-01-02")
			n.topic = r.IntN(len(v.topics))
			day = day.AddDate(0, 0, -1-r.IntN(2)*r.IntN(2)) // most days, some gaps
		} else {
			f := p.folders[folderZ.Uint64()]
			n.folder = f.path
			n.topic = f.topic
			if r.IntN(3) == 0 {
				n.topic = r.IntN(len(v.topics))
			}
			n.name = noteName(r, v, &v.topics[n.topic])
			// Noon-ish on a day in the three years before End.
			n.date = o.End.AddDate(0, 0, -r.IntN(3*365)).Add(time.Duration(8*60+r.IntN(720)) * time.Minute)
		}
		base := n.name
		for k := 2; names[strings.ToLower(n.name)]; k++ {
			n.name = base + " " + strconv.Itoa(k)
		}
		names[strings.ToLower(n.name)] = true
		if n.folder == "" {
			n.path = n.name + ".md"
		} else {
			n.path = n.folder + "/" + n.name + ".md"
		}
		n.heading = sectionNames[r.IntN(len(sectionNames))]
		p.notes = append(p.notes, n)
	}
	p.popular = r.Perm(len(p.notes))
	return p
}

// bodyOvershoot compensates for the frontmatter and for the last block
// overshooting the target, so that the average file size matches AvgSize.
const bodyOvershoot = 350

var sectionNames = []string{"Overview", "Summary", "Context", "Notes", "Background", "Details", "Log", "Ideas"}

func noteName(r *rand.Rand, v *vocab, t *topic) string {
	tn := func() string { return titleWord(t.nouns[r.IntN(len(t.nouns))]) }
	cn := func() string { return titleWord(v.nouns[r.IntN(len(v.nouns))]) }
	switch r.IntN(10) {
	case 0:
		return tn() + " " + cn()
	case 1:
		return titleWord(v.adjs[r.IntN(len(v.adjs))]) + " " + tn()
	case 2:
		return "Notes on " + tn() + " " + cn()
	case 3:
		return titleWord(v.tail[r.IntN(len(v.tail))]) + " " + cn()
	case 4:
		// kebab-case file names, as people who come from other tools write them
		return strings.ToLower(tn()) + "-" + strings.ToLower(cn())
	case 5:
		return tn() + " and " + tn()
	case 6:
		return cn() + " " + tn() + " " + cn()
	case 7:
		return titleWord(v.tail[r.IntN(len(v.tail))])
	default:
		return tn() + " " + cn() + " " + strconv.Itoa(1+r.IntN(99))
	}
}

// noteLinker writes links from one note to others of the plan.
type noteLinker struct {
	p      *plan
	self   int
	linkZ  *rand.Zipf
	links  int
	broken int
}

func (l *noteLinker) target(r *rand.Rand) int {
	for {
		var i int
		if r.IntN(2) == 0 {
			i = l.p.popular[l.linkZ.Uint64()]
		} else {
			i = r.IntN(len(l.p.notes))
		}
		if i != l.self || len(l.p.notes) == 1 {
			return i
		}
	}
}

func (l *noteLinker) link(b *bytes.Buffer, r *rand.Rand) {
	l.links++
	if r.Float64() < l.p.opts.BrokenLinkRate {
		l.broken++
		v := getVocab()
		b.WriteString("[[")
		b.WriteString(titleWord(v.tail[r.IntN(len(v.tail))]))
		b.WriteString(" Draft]]")
		return
	}
	t := &l.p.notes[l.target(r)]
	switch x := r.IntN(100); {
	case x < 60:
		b.WriteString("[[" + t.name + "]]")
	case x < 75:
		b.WriteString("[[" + t.name + "|" + strings.ToLower(t.name) + "]]")
	case x < 85 && !t.daily:
		b.WriteString("[[" + t.name + "#" + t.heading + "]]")
	case x < 90:
		b.WriteString("[[" + strings.TrimSuffix(t.path, ".md") + "]]")
	case x < 95:
		// markdown link relative to the linking note's folder
		self := &l.p.notes[l.self]
		rel := relPath(self.folder, t.path)
		b.WriteString("[" + t.name + "](" + escapePath(rel) + ")")
	case x < 97:
		b.WriteString("[[" + t.name + "]]")
	default:
		b.WriteString("![[" + t.name + "]]")
	}
}

// relPath returns the slash path of target relative to folder from.
func relPath(from, target string) string {
	var fromParts []string
	if from != "" {
		fromParts = strings.Split(from, "/")
	}
	tp := strings.Split(target, "/")
	i := 0
	for i < len(fromParts) && i < len(tp)-1 && fromParts[i] == tp[i] {
		i++
	}
	var parts []string
	for range fromParts[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, tp[i:]...)
	return path.Join(parts...)
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// noteSeed derives the per-note random source, so that a note's content
// depends only on the vault seed and its index.
func noteRand(seed int64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0xa0761d6478bd642f, uint64(i)*0xe7037ed1a0b428db+1))
}

// render writes note i into b and returns its link counts.
func (p *plan) render(b *bytes.Buffer, i int) (links, broken int) {
	n := &p.notes[i]
	r := noteRand(p.opts.Seed, i)
	v := getVocab()
	t := &v.topics[n.topic]
	l := &noteLinker{p: p, self: i, linkZ: rand.NewZipf(r, 1.3, 4, uint64(len(p.notes)-1))}
	g := newTextGen(r, v, t, l)

	if r.Float64() < p.opts.FrontmatterRate {
		p.frontmatter(b, g, n)
	}
	if n.daily {
		p.dailyBody(b, g, n)
	} else {
		p.noteBody(b, g, n)
	}
	return l.links, l.broken
}

func (p *plan) frontmatter(b *bytes.Buffer, g *textGen, n *plannedNote) {
	r := g.r
	b.WriteString("---\n")
	if !n.daily && (r.IntN(5) == 0 || strings.Contains(n.name, "-")) {
		b.WriteString("title: \"")
		b.WriteString(titleWord(strings.ReplaceAll(n.name, "-", " ")))
		if r.IntN(2) == 0 {
			b.WriteString(": ")
			b.WriteString(g.headingText())
		}
		b.WriteString("\"\n")
	}
	if !n.daily && r.IntN(4) == 0 {
		if r.IntN(2) == 0 {
			b.WriteString("aliases: ")
			b.WriteString(g.headingText())
			b.WriteByte('\n')
		} else {
			b.WriteString("aliases:\n  - ")
			b.WriteString(g.headingText())
			b.WriteString("\n  - ")
			b.WriteString(strings.ToLower(g.headingText()))
			b.WriteByte('\n')
		}
	}
	tags := []string{g.pick(g.topic.tags)}
	if n.daily {
		tags = append([]string{"daily"}, tags...)
	}
	for k := r.IntN(3); k > 0; k-- {
		tags = append(tags, g.tag())
	}
	tags = dedupe(tags)
	switch r.IntN(4) {
	case 0:
		b.WriteString("tags: " + strings.Join(tags, ", ") + "\n")
	case 1:
		b.WriteString("tags:\n")
		for _, tg := range tags {
			b.WriteString("  - " + tg + "\n")
		}
	default:
		b.WriteString("tags: [" + strings.Join(tags, ", ") + "]\n")
	}
	created := n.date.AddDate(0, 0, -r.IntN(400))
	if n.daily {
		created = n.date
	}
	b.WriteString("created: " + created.Format("2006-01-02") + "\n")
	b.WriteString("updated: " + n.date.Format("2006-01-02T15:04:05") + "\n")
	if r.IntN(3) == 0 {
		b.WriteString("status: " + []string{"active", "draft", "done", "paused", "in-progress"}[r.IntN(5)] + "\n")
	}
	if r.IntN(8) == 0 {
		b.WriteString("rating: " + strconv.Itoa(1+r.IntN(5)) + "\n")
	}
	if r.IntN(10) == 0 {
		b.WriteString("published: " + strconv.FormatBool(r.IntN(2) == 0) + "\n")
	}
	if r.IntN(12) == 0 {
		b.WriteString("source:\n  author: " + titleWord(g.v.tail[g.tailZ.Uint64()]) + " " + titleWord(g.v.tail[g.tailZ.Uint64()]) +
			"\n  url: https://example.com/" + g.v.tail[g.tailZ.Uint64()] + "\n  pages: " + strconv.Itoa(50+r.IntN(400)) + "\n")
	}
	b.WriteString("---\n")
}

func dedupe(s []string) []string {
	out := s[:0]
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func (p *plan) noteBody(b *bytes.Buffer, g *textGen, n *plannedNote) {
	r := g.r
	start := b.Len()
	if r.IntN(2) == 0 {
		b.WriteString("# " + n.name + "\n\n")
	}
	g.paragraph(b)
	b.WriteString("## " + n.heading + "\n\n")
	code := g.topic.tech && r.IntN(5) < 2
	for b.Len()-start < n.size-bodyOvershoot {
		switch x := r.IntN(100); {
		case x < 14:
			if r.IntN(10) == 0 {
				h := g.headingText()
				b.WriteString(h + "\n" + strings.Repeat("-", max(3, len(h))) + "\n\n")
			} else if r.IntN(3) == 0 {
				b.WriteString("### " + g.headingText() + "\n\n")
			} else {
				b.WriteString("## " + g.headingText() + "\n\n")
			}
		case x < 60:
			g.paragraph(b)
		case x < 72:
			g.bulletList(b, false)
		case x < 77:
			g.bulletList(b, true)
		case x < 80:
			g.quote(b)
		case x < 82:
			g.table(b)
		case x < 84:
			g.url(b)
		case x < 85:
			if r.IntN(4) == 0 {
				g.cjkParagraph(b)
			} else {
				g.paragraph(b)
			}
		case x < 92 && code:
			g.codeBlock(b)
		default:
			g.paragraph(b)
		}
	}
	if r.IntN(4) == 0 {
		b.WriteString("#" + g.tag() + " #" + g.tag() + "\n")
	}
}

func (p *plan) dailyBody(b *bytes.Buffer, g *textGen, n *plannedNote) {
	r := g.r
	start := b.Len()
	b.WriteString("# " + n.date.Format("Monday, 2 January 2006") + "\n\n")
	b.WriteString("## Log\n\n")
	g.bulletList(b, false)
	for b.Len()-start < n.size-bodyOvershoot {
		switch x := r.IntN(10); {
		case x < 2:
			b.WriteString("## " + g.headingText() + "\n\n")
		case x < 3:
			b.WriteString("## Tasks\n\n")
			g.bulletList(b, true)
		case x < 4 && r.IntN(10) == 0:
			g.cjkParagraph(b)
		default:
			g.paragraph(b)
		}
	}
}
