package search

import (
	"regexp"
	"slices"
	"sync"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// Spelling variants. A word of a query also matches the other spellings of
// the same word: British and American ("colour" and "color", "organise" and
// "organize", "centre" and "center", "catalogue" and "catalog") and the
// common clippings of English and of computing ("sync" and "synchronise",
// "config" and "configuration", "repo" and "repository"). A vault is
// written by its owner in one spelling and searched in another, or holds
// pages copied from both sides of the Atlantic; the stemmer joins
// "synchronising" and "synchronised" but not "sync" and "synchronise".
//
// The rules are written both ways and produce candidates; a ranked search
// keeps only those the index holds, and a candidate no note has costs
// nothing. The rules stay off words where a swap makes another word: "floor"
// is not "flour", "four" is not "for".

// variantRules swap one spelling for the other in a word's ending; the stem
// before it has three letters at least. A swap marked guess makes a word
// that is seldom one ("actor" to "actour"): explain does not show it.
var variantRules = []struct {
	re   *regexp.Regexp
	swap map[string]swap
}{
	// organise / organize, synchronisation / synchronization, analyse / analyze.
	{regexp.MustCompile(`^([a-z]{3,})(is|iz|ys|yz)(e|es|ed|ing|er|ers|ation|ations|ational|able)$`),
		map[string]swap{"is": {"iz", false}, "iz": {"is", false}, "ys": {"yz", false}, "yz": {"ys", false}}},
	// colour / color, favourite / favorite, behavioural / behavioral; not
	// after an o (floor, door, poor).
	{regexp.MustCompile(`^([a-z]{2,}[a-np-z])(our|or)(s|ed|ing|ite|ites|able|ably|al|ally|ful|fully|less|er|ers|ist|ists)?$`),
		map[string]swap{"our": {"or", false}, "or": {"our", true}}},
}

type swap struct {
	to    string
	guess bool
}

// variantPairs are the variants no rule covers, and the clippings, each
// group one word; keyed by their stems, so inflected forms count too
// ("greyed", "repos").
var variantPairs = [][]string{
	{"centre", "center"}, {"theatre", "theater"}, {"metre", "meter"}, {"litre", "liter"},
	{"fibre", "fiber"}, {"calibre", "caliber"}, {"sombre", "somber"}, {"lustre", "luster"},
	{"kilometre", "kilometer"}, {"centimetre", "centimeter"}, {"millimetre", "millimeter"},
	{"manoeuvre", "maneuver"}, {"grey", "gray"}, {"catalogue", "catalog"}, {"dialogue", "dialog"},
	{"analogue", "analog"}, {"programme", "program"}, {"licence", "license"},
	{"defence", "defense"}, {"offence", "offense"}, {"pretence", "pretense"},
	{"aluminium", "aluminum"}, {"plough", "plow"}, {"mould", "mold"},
	{"sceptic", "skeptic"}, {"sceptical", "skeptical"}, {"jewellery", "jewelry"},
	{"enquiry", "inquiry"}, {"enquire", "inquire"}, {"judgement", "judgment"},
	{"acknowledgement", "acknowledgment"}, {"ageing", "aging"}, {"artefact", "artifact"},
	{"fulfil", "fulfill"}, {"enrol", "enroll"}, {"practise", "practice"},
	{"pyjamas", "pajamas"}, {"encyclopaedia", "encyclopedia"}, {"mediaeval", "medieval"},
	{"paediatric", "pediatric"}, {"anaesthesia", "anesthesia"}, {"haemoglobin", "hemoglobin"},
	// Clippings.
	{"sync", "synchronise", "synchronize", "synchronisation", "synchronization"},
	{"config", "configuration", "configure"},
	{"repo", "repository"},
	{"info", "information"},
	{"doc", "document", "documentation"},
	{"pic", "picture"},
	{"img", "image"},
	{"stats", "statistics"},
	{"admin", "administrator", "administration"},
	{"auth", "authentication"},
	{"env", "environment"},
	{"dir", "directory"},
	{"lib", "library"},
	{"pkg", "package"},
	{"msg", "message"},
	{"nav", "navigation"},
	{"intro", "introduction"},
	{"calc", "calculator", "calculation"},
	{"photo", "photograph"},
	{"math", "maths", "mathematics"},
	{"db", "database"},
	{"js", "javascript"},
	{"demo", "demonstration"},
	{"fav", "favourite", "favorite"},
	{"tech", "technology"},
}

var variantGroups = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, g := range variantPairs {
		for _, w := range g {
			s := porterstemmer.StemString(w)
			for _, o := range g {
				if o != w && !slices.Contains(m[s], o) {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	return m
})

// SpellingVariants returns the other spellings of a lower-cased word (see
// above), nil when it has none. They are candidates: some are not words.
func SpellingVariants(word string) []string {
	return spellingVariants(word, true)
}

// spellingVariants is SpellingVariants; without guesses, it leaves out the
// swaps that seldom make a word.
func spellingVariants(word string, guesses bool) []string {
	if len(word) < 2 || len(word) > maxTokenRunes || !isASCII(word) {
		return nil
	}
	var out []string
	add := func(v string) {
		if v != word && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	swapped := func(w string) {
		for _, r := range variantRules {
			if m := r.re.FindStringSubmatch(w); m != nil {
				if sw := r.swap[m[2]]; guesses || !sw.guess {
					add(m[1] + sw.to + m[3])
				}
			}
		}
	}
	for _, v := range variantGroups()[porterstemmer.StemString(word)] {
		add(v)
	}
	swapped(word)
	// The British form of a clipping's long form: "synchronising".
	for _, v := range slices.Clone(out) {
		swapped(v)
	}
	return out
}
