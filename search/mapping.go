package search

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/length"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/vault-agent/vault-agent/vault"
)

// Field names of the note document. One bleve document per note, keyed by
// its vault-relative path.
const (
	fTitle    = "title"    // title + aliases, text analyzer
	fTitleCJK = "titlecjk" // same, CJK bigrams; only for notes with CJK text
	fHeadings = "headings" // heading texts
	fTagText  = "tagtext"  // tags as text, so free terms match them
	fTag      = "tag"      // tags and their parents as keywords ("a", "a/b")
	fPathText = "pathtext" // path without ".md" as text
	fPath     = "pathkw"   // lower-cased path as one keyword (folder prefix filters)
	fFile     = "file"     // lower-cased basename without ".md" (file: filter)
	fBody     = "body"     // body text
	fBodyCJK  = "bodycjk"  // body as CJK bigrams; only for notes with CJK text
	fMTime    = "mtime"    // epoch ms, numeric, doc values for sorting
	fDate     = "date"     // epoch ms of the note's own date (vault.Note.Date), when it has one
	fURL      = "url"      // words of the URLs and link destinations of the body, kept out of fBody
	fAnchor   = "anchor"   // link texts of the links pointing to this note (aliases, markdown link text)
	fLinkText = "linktext" // the sentence or list item around each link pointing to this note
	fInbound  = "inbound"  // stored only: the links pointing to this note (inboundItem, JSON)
	fFacts    = "facts"    // keyword terms, one a line: tasks and properties (notepart.go)
	fParts    = "parts"    // stored only: its sections, blocks and tasks (encodeParts)
)

// Analyzer names in the mapping.
const (
	textAnalyzer  = "vault_text"
	factsAnalyzer = "vault_facts" // one term a line, as written
	cjkAnalyzer   = cjk.AnalyzerName
	foldFilter    = "vault_fold"
	lengthFilter  = "vault_length"
)

// lenFields are the text fields whose lengths ranking normalizes by; a
// note's lengths are kept in NoteMeta in this order.
var lenFields = [...]string{fTitle, fHeadings, fTagText, fPathText, fBody, fURL, fAnchor, fLinkText}

const numLenFields = len(lenFields)

// fieldLengths returns the analysed length of each of lenFields in an
// indexed (so analysed) document.
func fieldLengths(doc *document.Document) [numLenFields]int32 {
	var lens [numLenFields]int32
	for _, f := range doc.Fields {
		for i, name := range lenFields {
			if f.Name() == name {
				lens[i] += int32(f.AnalyzedLength())
				break
			}
		}
	}
	return lens
}

// maxTokenRunes is the longest word indexed.
const maxTokenRunes = 64

// Query-time boosts per field of the terms that are not ranked by a
// rankQuery (negated terms, CJK terms): the note's own fields. Title and
// aliases weigh most: a note named after the query is almost always what
// was meant.
var fieldBoosts = []struct {
	field string
	boost float64
}{
	{fTitle, 5},
	{fHeadings, 3},
	{fTagText, 2},
	{fPathText, 1.5},
	{fBody, 1},
	{fURL, 0.3},
}

// schemaVersion is bumped by hand when the document layout changes in a way
// the mapping hash would not show (for example what goes into a field).
// 3: link context fields, URLs out of the body, field lengths in the state.
// 4: tasks, properties, sections and blocks.
const schemaVersion = 4

func init() {
	if err := registry.RegisterTokenFilter(foldFilter, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return foldTokenFilter{}, nil
	}); err != nil {
		panic(err)
	}
}

// foldTokenFilter folds diacritics and other non-ASCII letters to ASCII
// ("café" → "cafe", "Müller" → "muller", "ß" → "ss") and drops combining
// marks left by decomposed (NFD) text. It is a token filter rather than
// bleve's asciifolding char filter so token offsets keep pointing into the
// original text, which the snippet builder relies on.
type foldTokenFilter struct{}

var asciiFolder = asciifolding.New()

func (foldTokenFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, tok := range input {
		if isASCII(tok.Term) {
			continue
		}
		folded := asciiFolder.Filter(tok.Term)
		if hasMark(folded) {
			folded = []byte(strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Mn, r) {
					return -1
				}
				return r
			}, string(folded)))
		}
		tok.Term = folded
	}
	return input
}

func isASCII[S ~string | ~[]byte](b S) bool {
	for i := 0; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func hasMark(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r >= 0x300 && unicode.Is(unicode.Mn, r) {
			return true
		}
		b = b[n:]
	}
	return false
}

// hasCJK reports whether s contains Han, Hiragana, Katakana or Hangul
// characters; only such notes get the CJK bigram fields.
func hasCJK(s string) bool {
	for _, r := range s {
		if isCJKRune(r) {
			return true
		}
	}
	return false
}

// isCJKRune reports whether r is a Han, Hiragana, Katakana or Hangul
// character (none is below U+2E80).
func isCJKRune(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// newMapping builds the index mapping. Only the links pointing to a note
// are stored (see below): the index keeps note metadata (title, tags,
// mtime) in memory and in its state record, so results need no stored
// fields. Term vectors are kept only on the text
// fields that phrase queries run against (bleve's phrase searcher needs term
// positions); the keyword and path fields have none.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := mapping.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	im.DefaultAnalyzer = textAnalyzer
	// Words longer than maxTokenRunes are not words: base64 attachments,
	// Excalidraw's compressed drawings, hashes. Dropping them keeps the
	// term dictionary (and fuzzy queries, which walk it) small.
	if err := im.AddCustomTokenFilter(lengthFilter, map[string]interface{}{
		"type": length.Name,
		"max":  float64(maxTokenRunes),
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(textAnalyzer, map[string]interface{}{
		"type":      custom.Name,
		"tokenizer": wordTokenizerName, // unicode's tokens, faster (tokenizer.go)
		"token_filters": []interface{}{
			lengthFilter,
			en.PossessiveName,
			lowercase.Name,
			foldFilter,
			en.StopName,
			stemFilterName, // porter's stems, remembered (tokenizer.go)
		},
	}); err != nil {
		return nil, err
	}

	if err := im.AddCustomAnalyzer(factsAnalyzer, map[string]interface{}{
		"type":      custom.Name,
		"tokenizer": lineTokenizerName,
	}); err != nil {
		return nil, err
	}

	text := textFieldMapping
	kw := func() *mapping.FieldMapping { return text(keyword.Name, false) }
	doc := mapping.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fTitle, text(textAnalyzer, true))
	doc.AddFieldMappingsAt(fTitleCJK, text(cjkAnalyzer, true))
	doc.AddFieldMappingsAt(fHeadings, text(textAnalyzer, true))
	doc.AddFieldMappingsAt(fTagText, text(textAnalyzer, false))
	doc.AddFieldMappingsAt(fTag, kw())
	doc.AddFieldMappingsAt(fPathText, text(textAnalyzer, false))
	doc.AddFieldMappingsAt(fPath, kw())
	doc.AddFieldMappingsAt(fFile, kw())
	doc.AddFieldMappingsAt(fBody, text(textAnalyzer, true))
	doc.AddFieldMappingsAt(fBodyCJK, text(cjkAnalyzer, true))
	doc.AddFieldMappingsAt(fURL, text(textAnalyzer, false))
	doc.AddFieldMappingsAt(fAnchor, text(textAnalyzer, false))
	doc.AddFieldMappingsAt(fLinkText, text(textAnalyzer, false))
	// The links pointing to a note are stored with it, not indexed: an
	// update recomputes inbound context from them instead of reading the
	// linking notes again.
	doc.AddFieldMappingsAt(fInbound, storedOnly())
	doc.AddFieldMappingsAt(fFacts, text(factsAnalyzer, false))
	// A note's tasks and the line ranges of its sections and blocks are
	// stored with it: task listings and line:, block: and section: read
	// them instead of parsing notes again.
	doc.AddFieldMappingsAt(fParts, storedOnly())
	mt := mapping.NewNumericFieldMapping()
	mt.Store = false
	mt.IncludeInAll = false
	mt.DocValues = true
	doc.AddFieldMappingsAt(fMTime, mt)
	dt := mapping.NewNumericFieldMapping()
	dt.Store = false
	dt.IncludeInAll = false
	dt.DocValues = false
	doc.AddFieldMappingsAt(fDate, dt)
	// No "_all" field: every query names its fields, and bleve would
	// otherwise give every document an empty composite field that the
	// segment builder walks like any other (a twentieth of the CPU of a
	// first index).
	doc.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	im.DefaultMapping = doc
	im.DefaultField = fBody
	return im, nil
}

// storedOnly maps a field that is stored, not indexed.
func storedOnly() *mapping.FieldMapping {
	fm := mapping.NewTextFieldMapping()
	fm.Analyzer = keyword.Name
	fm.Store, fm.Index, fm.IncludeInAll, fm.DocValues, fm.IncludeTermVectors = true, false, false, false, false
	return fm
}

// textFieldMapping maps a field indexed by analyzer, not stored, with term
// vectors (positions, for phrase queries) when vectors is set.
func textFieldMapping(analyzer string, vectors bool) *mapping.FieldMapping {
	fm := mapping.NewTextFieldMapping()
	fm.Analyzer = analyzer
	fm.Store = false
	fm.IncludeInAll = false
	fm.DocValues = false
	fm.IncludeTermVectors = vectors
	return fm
}

// noteDoc makes the bleve document of note n, whose inbound link context is
// in (nil: none), through mapping m, its text fields analysed through fused
// (fastFields).
func noteDoc(m *mapping.IndexMappingImpl, fused *fusedChain, n *vault.Note, in *inbound) (*document.Document, error) {
	doc := document.NewDocument(n.Path)
	d := noteDocument(n, in)
	words := textWords{fused: fused}
	if fused == nil {
		words.an = m.AnalyzerNamed(textAnalyzer)
	}
	addNoteParts(d, words, n)
	if err := m.MapDocument(doc, d); err != nil {
		return nil, err
	}
	fastFields(doc, fused, false)
	return doc, nil
}

// schemaStamp identifies the document layout: a change in the mapping or in
// schemaVersion makes an existing index incompatible.
func schemaStamp(im *mapping.IndexMappingImpl) (string, error) {
	b, err := json.Marshal(im)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "vault-agent-search/" + itoa(schemaVersion) + "/" + hex.EncodeToString(sum[:6]), nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// noteDocument is the data bleve maps into one document. in is the context
// of the links pointing to the note (nil when none).
func noteDocument(n *vault.Note, in *inbound) map[string]interface{} {
	titles := titleValues(n.Title, n.Aliases)
	headings := make([]string, 0, len(n.Headings))
	for _, h := range n.Headings {
		headings = append(headings, h.Text)
	}
	tagTree := tagAncestors(n.Tags)
	noExt := strings.TrimSuffix(n.Path, path.Ext(n.Path))
	body, urls := indexBody(n.Body)
	d := map[string]interface{}{
		fTitle:    titles,
		fHeadings: headings,
		fTagText:  n.Tags,
		fTag:      tagTree,
		fPathText: noExt,
		fPath:     strings.ToLower(n.Path),
		fFile:     fileKey(n.Path),
		fBody:     body,
		fMTime:    float64(msec(n.ModTime)),
	}
	if urls != "" {
		d[fURL] = urls
	}
	if in != nil {
		if len(in.anchors) > 0 {
			d[fAnchor] = in.anchors
		}
		if len(in.texts) > 0 {
			d[fLinkText] = in.texts
		}
		if len(in.items) > 0 {
			d[fInbound] = string(encodeItems(in.items))
		}
	}
	if !n.Date.IsZero() {
		d[fDate] = float64(msec(n.Date))
	}
	titleText := strings.Join(titles, " ")
	if hasCJK(titleText) {
		d[fTitleCJK] = titles
	}
	if hasCJK(n.Body) {
		d[fBodyCJK] = n.Body
	}
	return d
}

// titleValues returns the title and the aliases that add a word to it. An
// alias made of the title's words ("On This Day" for "on-this-day") names
// the note again; indexed too, it would count the same words twice and
// make a note with such an alias outrank one named the same without.
func titleValues(title string, aliases []string) []string {
	out := make([]string, 1, 1+len(aliases))
	out[0] = title
	seen := map[string]bool{}
	for _, w := range titleWords(title) {
		seen[w] = true
	}
	for _, a := range aliases {
		ws := titleWords(a)
		fresh := false
		for _, w := range ws {
			if !seen[w] {
				fresh = true
			}
		}
		if !fresh {
			continue
		}
		for _, w := range ws {
			seen[w] = true
		}
		out = append(out, a)
	}
	return out
}

// titleWords splits s into lower-cased words, folding diacritics.
func titleWords(s string) []string {
	var out []string
	scanWords(s, func(start, end int) {
		w := strings.ToLower(s[start:end])
		if !isASCII([]byte(w)) {
			w = string(asciiFolder.Filter([]byte(w)))
		}
		out = append(out, w)
	})
	return out
}

// tagAncestors returns the tags plus every parent of a nested tag, so that
// tag:a matches notes tagged a/b with one term lookup.
func tagAncestors(tags []string) []string {
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.Trim(t, "#/"))
		for t != "" {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
			i := strings.LastIndexByte(t, '/')
			if i < 0 {
				break
			}
			t = t[:i]
		}
	}
	return out
}

// fileKey is the file: key of a path: lower-cased basename without ".md".
func fileKey(p string) string { return lowerFileKey(strings.ToLower(p)) }

// lowerFileKey is the fileKey of a path already lower-cased (l), a
// substring of it: the path tables keep both without a copy.
func lowerFileKey(l string) string {
	return strings.TrimSuffix(path.Base(l), ".md")
}

func msec(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
