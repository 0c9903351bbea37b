package vaultgen

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// linker turns a request for a link into link text; it is the piece of
// text generation that knows about the other notes of the vault.
type linker interface {
	// link writes one wikilink, embed or markdown link into b.
	link(b *bytes.Buffer, r *rand.Rand)
}

// textGen writes markdown prose for one note. It is not safe for concurrent
// use; each note gets its own, seeded from the vault seed and the note index.
type textGen struct {
	r     *rand.Rand
	v     *vocab
	topic *topic
	links linker

	nounZ, adjZ, verbZ, tailZ, topicZ, tagZ *rand.Zipf

	// Per-sentence probabilities of inline elements.
	pLink, pTag float64
}

func newTextGen(r *rand.Rand, v *vocab, t *topic, l linker) *textGen {
	return &textGen{
		r:      r,
		v:      v,
		topic:  t,
		links:  l,
		nounZ:  rand.NewZipf(r, 1.1, 2, uint64(len(v.nouns)-1)),
		adjZ:   rand.NewZipf(r, 1.2, 2, uint64(len(v.adjs)-1)),
		verbZ:  rand.NewZipf(r, 1.1, 2, uint64(len(v.verbsBase)-1)),
		tailZ:  rand.NewZipf(r, 1.05, 1, uint64(len(v.tail)-1)),
		topicZ: rand.NewZipf(r, 1.1, 3, uint64(len(t.nouns)-1)),
		tagZ:   rand.NewZipf(r, 1.4, 1, uint64(len(v.globalTags)-1)),
		pLink:  0.04,
		pTag:   0.03,
	}
}

func (g *textGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *textGen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// noun draws a noun: mostly common or topic words, sometimes a rare one.
func (g *textGen) noun() string {
	switch x := g.r.IntN(100); {
	case x < 30:
		return g.topic.nouns[g.topicZ.Uint64()]
	case x < 88:
		return g.v.nouns[g.nounZ.Uint64()]
	case x < 99:
		return g.v.tail[g.tailZ.Uint64()]
	default:
		return g.pick(g.v.nonASCII)
	}
}

func (g *textGen) adj() string { return g.v.adjs[g.adjZ.Uint64()] }

func (g *textGen) tag() string {
	if g.chance(0.6) {
		return g.pick(g.topic.tags)
	}
	return g.v.globalTags[g.tagZ.Uint64()]
}

func article(next string) string {
	r, _ := utf8.DecodeRuneInString(next)
	switch unicode.ToLower(r) {
	case 'a', 'e', 'i', 'o', 'u':
		return "an"
	}
	return "a"
}

var determiners = []string{"the", "the", "the", "this", "our", "every", "that", "my", "each", "one"}

// nounPhrase writes "the quick noun" or a link in place of the noun phrase.
func (g *textGen) nounPhrase(b *bytes.Buffer, allowLink bool) {
	if allowLink && g.links != nil && g.chance(g.pLink) {
		g.links.link(b, g.r)
		return
	}
	var adj string
	if g.chance(0.35) {
		adj = g.adj()
	}
	n := g.noun()
	det := g.pick(determiners)
	if det == "one" {
		if adj != "" {
			det = article(adj)
		} else {
			det = article(n)
		}
	}
	b.WriteString(det)
	b.WriteByte(' ')
	if adj != "" {
		b.WriteString(adj)
		b.WriteByte(' ')
	}
	b.WriteString(n)
	if g.chance(0.12) {
		b.WriteString(" of the ")
		b.WriteString(g.noun())
	}
}

var modals = []string{"should", "will", "could", "must", "might", "can"}

func (g *textGen) clause(b *bytes.Buffer) {
	if g.chance(0.3) {
		b.WriteString(g.pick(g.v.pronouns))
	} else {
		g.nounPhrase(b, true)
	}
	b.WriteByte(' ')
	if g.chance(0.15) {
		b.WriteString(g.pick(g.v.advs))
		b.WriteByte(' ')
	}
	i := g.verbZ.Uint64()
	if g.chance(0.7) {
		b.WriteString(g.v.verbsPast[i])
	} else {
		b.WriteString(g.pick(modals))
		b.WriteByte(' ')
		b.WriteString(g.v.verbsBase[i])
	}
	b.WriteByte(' ')
	g.nounPhrase(b, true)
	if g.chance(0.45) {
		b.WriteByte(' ')
		b.WriteString(g.pick(g.v.preps))
		b.WriteByte(' ')
		g.nounPhrase(b, true)
	}
}

// sentence writes one capitalised sentence ending in punctuation.
func (g *textGen) sentence(b *bytes.Buffer) {
	start := b.Len()
	g.clause(b)
	if g.chance(0.3) {
		b.WriteString(", ")
		b.WriteString(g.pick(g.v.conns))
		b.WriteByte(' ')
		g.clause(b)
	}
	if g.chance(g.pTag) {
		b.WriteString(" #")
		b.WriteString(g.tag())
	}
	if g.chance(0.01) {
		b.WriteString(" (see `")
		b.WriteString(g.v.tail[g.tailZ.Uint64()])
		b.WriteString(" #not-a-tag`)")
	}
	switch x := g.r.IntN(40); {
	case x == 0:
		b.WriteByte('?')
	case x == 1:
		b.WriteByte('!')
	default:
		b.WriteByte('.')
	}
	capitalizeAt(b, start)
}

// capitalizeAt upper-cases the rune at offset i of b in place when its
// upper-case form has the same width (true for the ASCII starts we produce).
func capitalizeAt(b *bytes.Buffer, i int) {
	buf := b.Bytes()
	if i < len(buf) && buf[i] >= 'a' && buf[i] <= 'z' {
		buf[i] -= 'a' - 'A'
	}
}

func (g *textGen) paragraph(b *bytes.Buffer) {
	n := 2 + g.r.IntN(5)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		g.sentence(b)
	}
	b.WriteString("\n\n")
}

func (g *textGen) cjkParagraph(b *bytes.Buffer) {
	n := 2 + g.r.IntN(3)
	for i := 0; i < n; i++ {
		b.WriteString(g.pick(cjkSentences))
	}
	b.WriteString("\n\n")
}

func (g *textGen) bulletList(b *bytes.Buffer, tasks bool) {
	n := 3 + g.r.IntN(4)
	for i := 0; i < n; i++ {
		b.WriteString("- ")
		if tasks {
			if g.chance(0.4) {
				b.WriteString("[x] ")
			} else {
				b.WriteString("[ ] ")
			}
		}
		start := b.Len()
		g.clause(b)
		capitalizeAt(b, start)
		if g.chance(0.05) {
			b.WriteString(" #")
			b.WriteString(g.tag())
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

func (g *textGen) quote(b *bytes.Buffer) {
	b.WriteString("> ")
	g.sentence(b)
	b.WriteString("\n\n")
}

func (g *textGen) table(b *bytes.Buffer) {
	b.WriteString("| Item | Count | Note |\n|---|---|---|\n")
	n := 2 + g.r.IntN(4)
	for i := 0; i < n; i++ {
		b.WriteString("| ")
		b.WriteString(g.noun())
		b.WriteString(" | ")
		b.WriteString(strconv.Itoa(g.r.IntN(500)))
		b.WriteString(" | ")
		b.WriteString(g.adj())
		b.WriteByte(' ')
		b.WriteString(g.noun())
		b.WriteString(" |\n")
	}
	b.WriteByte('\n')
}

func (g *textGen) url(b *bytes.Buffer) {
	b.WriteString("Reference: [")
	b.WriteString(g.noun())
	b.WriteByte(' ')
	b.WriteString(g.noun())
	b.WriteString("](https://example.com/")
	b.WriteString(g.v.tail[g.tailZ.Uint64()])
	b.WriteString("/docs#section-")
	b.WriteString(strconv.Itoa(1 + g.r.IntN(9)))
	b.WriteString(").\n\n")
}

// codeBlock writes a fenced block whose comment lines look like headings
// and tags to a careless parser.
func (g *textGen) codeBlock(b *bytes.Buffer) {
	id := g.v.tail[g.tailZ.Uint64()]
	id2 := g.v.tail[g.tailZ.Uint64()]
	n := strconv.Itoa(1 + g.r.IntN(500))
	switch g.r.IntN(4) {
	case 0:
		b.WriteString("```go\n// #not-a-tag\nfunc " + id + "(ctx context.Context, n int) error {\n\tfor i := 0; i < n; i++ {\n\t\tif err := " + id2 + "(ctx, i); err != nil {\n\t\t\treturn fmt.Errorf(\"" + id + " %d: %w\", i, err)\n\t\t}\n\t}\n\treturn nil\n}\n```\n\n")
	case 1:
		b.WriteString("```sql\n-- #not-a-tag\nSELECT " + id + "_id, count(*)\n  FROM " + id2 + "\n WHERE created_at > now() - interval '" + n + " days'\n GROUP BY 1\n ORDER BY 2 DESC;\n```\n\n")
	case 2:
		b.WriteString("```bash\n# not a heading, just a comment #not-a-tag\nexport " + id + "_LIMIT=" + n + "\n./" + id2 + " --verbose | tee /tmp/" + id + ".log\n```\n\n")
	default:
		b.WriteString("```yaml\n# not a heading\n" + id + ":\n  enabled: true\n  limit: " + n + "\n  owner: " + id2 + " # #not-a-tag\n```\n\n")
	}
}

// headingText returns 1-4 title-cased words.
func (g *textGen) headingText() string {
	var b bytes.Buffer
	n := 1 + g.r.IntN(3)
	if g.chance(0.3) {
		b.WriteString(titleWord(g.adj()))
		b.WriteByte(' ')
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(titleWord(g.noun()))
	}
	return b.String()
}

// titleWord upper-cases the first letter of w.
func titleWord(w string) string {
	r, size := utf8.DecodeRuneInString(w)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return w
	}
	return string(unicode.ToUpper(r)) + w[size:]
}
