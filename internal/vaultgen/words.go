package vaultgen

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// The word lists below are ordered roughly by how common the words are, so
// that a Zipf draw over the index gives a realistic frequency curve: a few
// words everywhere, a long tail of rare ones.

const nounList = `time team note day week idea plan list change issue problem question answer
reason result step part system service data file version work project meeting review test
release decision process rule goal way place thing detail example case point number value
order group user request response error document summary draft report schedule budget cost
month year morning evening weekend book chapter page article paper talk podcast video friend
family neighbour colleague manager customer support feature bug fix patch branch commit build
deploy pipeline server client database table index query schema cache queue worker job event
log metric alert dashboard config setting option default limit timeout retry backoff window
garden bed soil seed plant tree water compost harvest kitchen recipe bread dough oven flour
coffee tea breakfast dinner lunch market shop street city train station flight hotel trip
map route walk run race pace distance habit sleep routine health doctor appointment gym
account payment invoice receipt tax contract offer price discount checklist template folder
tag link heading section paragraph sentence word language phrase translation lesson course
exam class teacher student library notebook pen desk chair lamp window door wall floor roof
paint tool drill screw hinge shelf cabinet counter sink tap pipe cable socket battery sensor
board radio antenna signal network packet latency throughput memory disk storage backup
snapshot replica leader follower partition shard key lock transaction migration rollback`

const adjList = `new old small large quick slow good bad simple complex clear open closed early late
main final first last next previous short long high low hot cold warm dry wet fresh old-school
important useful annoying strange obvious careful rough detailed quiet busy noisy cheap
expensive stable flaky broken fixed local remote shared private public manual automatic
weekly daily monthly yearly current future recent rare common safe risky heavy light dark
bright green red blue yellow brown grey white black wooden metal plastic digital analog
physical virtual tiny huge honest practical lazy strict loose hidden visible empty full`

// Verbs are "base past" pairs.
const verbList = `check checked move moved fix fixed build built review reviewed update updated write wrote
read read test tested plan planned start started finish finished drop dropped add added
remove removed change changed try tried need needed use used find found keep kept miss missed
break broke replace replaced measure measured compare compared ask asked answer answered
explain explained follow followed ignore ignored clean cleaned cook cooked bake baked water watered
plant planted harvest harvested run ran walk walked visit visited book booked pay paid buy bought
sell sold send sent receive received call called share shared learn learned teach taught
deploy deployed ship shipped merge merged revert reverted debug debugged profile profiled
index indexed cache cached tune tuned batch batched split split join joined sort sorted
schedule scheduled cancel cancelled delay delayed document documented simplify simplified
describe described sketch sketched repair repaired paint painted sand sanded oil oiled
measure measured record recorded track tracked log logged notice noticed expect expected`

const prepList = `in on at for with without after before during under over between through into from
about around near behind across against towards`

const advList = `quickly slowly carefully again finally already still never often sometimes usually
probably clearly barely mostly almost early late together alone twice`

const connList = `and but because so although while since until unless whereas`

const subjPronouns = `we I they it she he`

// Non-ASCII words sprinkled through the text so that diacritic folding and
// UTF-8 handling get exercised on a realistic scale.
const nonASCIIList = `café naïve façade résumé crème brûlée jalapeño señor mañana piñata Müller Straße
über Grüße schön Brötchen Zürich Kraków São Paulo smörgåsbord fjäll déjà vu coöperate
Ångström Dvořák Łódź Gödel Curaçao Bogotá Málaga Tromsø Reykjavík Göteborg`

// cjkSentences are complete sentences in Chinese and Japanese.
var cjkSentences = []string{
	"今天下午我们在花园里种了番茄和辣椒。",
	"这个问题的根本原因是缓存没有及时失效。",
	"周末我去图书馆借了三本关于历史的书。",
	"数据库迁移需要先在测试环境里验证一遍。",
	"晚饭做了红烧肉，配米饭和青菜。",
	"今日は朝から雨が降っていたので、家で本を読んだ。",
	"来週の会議までに設計書を書き終える必要がある。",
	"京都の紅葉は十一月の中旬が一番きれいだそうだ。",
	"新しいパン屋さんのクロワッサンはとてもおいしかった。",
	"バックアップは毎晩二時に自動で実行される。",
}

// topic is a cluster of related words and tags; each note has a main topic,
// which makes search results meaningful (a query for "compost" finds the
// gardening notes, mostly).
type topic struct {
	name  string
	tags  []string
	nouns []string
	tech  bool // notes on technical topics sometimes carry code blocks
}

var topicDefs = []struct {
	name, tags, nouns string
	tech              bool
}{
	{"gardening", "garden area/garden area/garden/compost", "compost mulch tomato courgette bean seedling trellis raised-bed watering-can hose slug aphid marigold kale chard rhubarb greenhouse cloche manure leafmould germination frost", false},
	{"baking", "baking recipe recipe/bread", "sourdough levain starter crumb crust banneton proofing hydration rye spelt autolyse gluten scoring loaf brioche croissant lamination yeast oven-spring", false},
	{"cooking", "cooking recipe recipe/dinner", "risotto stock saffron shallot garlic braise marinade skillet wok noodle dumpling curry lentil chickpea tahini harissa crème jalapeño miso ramen", false},
	{"running", "running area/health area/health/fitness", "interval tempo cadence marathon half-marathon trainers shin-splints taper stride warm-up cooldown threshold fartlek hill-repeats parkrun", false},
	{"sleep", "sleep area/health area/health/sleep", "caffeine melatonin insomnia nap circadian adenosine bedtime alarm snooze REM dream pillow mattress blackout earplugs", false},
	{"finance", "finance money area/money", "savings pension ETF dividend mortgage rent insurance invoice receipt spreadsheet allowance interest inflation bond portfolio", false},
	{"travel", "travel trip travel/europe", "itinerary passport luggage ferry hostel ryokan museum cathedral tram metro airport layover visa souvenir guidebook café", false},
	{"databases", "kb/databases postgres databases", "postgres vacuum WAL replica btree GIN planner EXPLAIN deadlock isolation tuple sequence constraint foreign-key materialized-view", true},
	{"golang", "kb/go golang programming", "goroutine channel context mutex waitgroup errgroup interface struct slice map generics module gofmt pprof escape-analysis", true},
	{"distributed", "kb/distributed-systems distributed-systems", "consensus raft quorum gossip heartbeat vector-clock idempotency outbox saga backpressure sharding rebalancing failover", true},
	{"networking", "kb/networking networking", "TCP UDP DNS TLS certificate handshake MTU router firewall VLAN subnet NAT proxy websocket HTTP2 QUIC", true},
	{"ml", "kb/ml machine-learning", "embedding transformer attention gradient tokenizer dataset overfitting regularization epoch checkpoint inference quantization benchmark", true},
	{"search", "kb/search search", "BM25 analyzer stemmer tokenizer inverted-index posting relevance recall precision facet highlight synonym fuzzy", true},
	{"electronics", "electronics hardware project/alpha", "ESP32 LoRa resistor capacitor MOSFET regulator firmware solder breadboard oscilloscope multimeter PCB enclosure", true},
	{"woodworking", "woodworking home/workshop", "chisel plane dovetail mortise tenon walnut oak beech sandpaper shellac hardwax clamp workbench joinery", false},
	{"music", "music hobby/music", "piano scale chord metronome sonata etude arpeggio pedal sight-reading rehearsal concert Dvořák Chopin", false},
	{"photography", "photography hobby/photo", "aperture shutter ISO lens prime tripod exposure histogram raw lightroom composition bokeh", false},
	{"cycling", "cycling area/health/fitness", "derailleur cassette chain saddle puncture tubeless gravel climb headwind panniers bikepacking", false},
	{"history", "history reading/history", "empire treaty dynasty revolution archive manuscript chronicle republic monastery siege guild", false},
	{"languages", "languages learning/languages", "vocabulary grammar conjugation pronunciation flashcard subjunctive dialect idiom naïve façade Müller señor Straße über", false},
	{"home", "home home/renovation", "countertop tiles grout plaster skirting radiator insulation draught boiler contractor quote permit", false},
	{"reading", "reading reading/book", "novel essay memoir biography anthology footnote margin highlight paperback hardcover translation", false},
	{"work", "work area/work", "standup retro roadmap OKR incident postmortem on-call handover onboarding promotion feedback one-on-one", false},
	{"coffee", "coffee drinks", "espresso grinder burr portafilter crema pour-over aeropress roast origin Ethiopia Colombia café", false},
}

// vocab is built once; it does not depend on the seed, so vaults generated
// with different seeds share the same language.
type vocab struct {
	nouns, adjs, verbsBase, verbsPast []string
	preps, advs, conns, pronouns      []string
	nonASCII                          []string
	tail                              []string // long tail of rare, made-up words (names, jargon)
	topics                            []topic
	globalTags                        []string
}

var (
	vocabOnce sync.Once
	theVocab  *vocab
)

func getVocab() *vocab {
	vocabOnce.Do(func() { theVocab = buildVocab() })
	return theVocab
}

func buildVocab() *vocab {
	v := &vocab{
		nouns:    strings.Fields(nounList),
		adjs:     strings.Fields(adjList),
		preps:    strings.Fields(prepList),
		advs:     strings.Fields(advList),
		conns:    strings.Fields(connList),
		pronouns: strings.Fields(subjPronouns),
		nonASCII: strings.Fields(nonASCIIList),
	}
	vs := strings.Fields(verbList)
	for i := 0; i+1 < len(vs); i += 2 {
		v.verbsBase = append(v.verbsBase, vs[i])
		v.verbsPast = append(v.verbsPast, vs[i+1])
	}
	for _, d := range topicDefs {
		v.topics = append(v.topics, topic{
			name:  d.name,
			tags:  strings.Fields(d.tags),
			nouns: strings.Fields(d.nouns),
			tech:  d.tech,
		})
	}
	v.tail = makeTail(6000)
	v.globalTags = []string{"todo", "idea", "question", "decision", "status/todo", "status/doing",
		"status/done", "type/meeting", "type/reference", "type/idea", "project/alpha", "project/beta",
		"project/gamma", "area/health/sleep", "area/work", "review", "later", "important"}
	return v
}

// makeTail builds pronounceable made-up words from syllables with a fixed
// seed, standing in for names, product jargon and typos that give real
// vaults their large term dictionaries.
func makeTail(n int) []string {
	onsets := []string{"b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "pr", "r", "s", "sh", "st", "t", "tr", "v", "w", "z"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ei", "ou", "ia", "y"}
	codas := []string{"", "", "", "n", "r", "l", "s", "th", "x", "nd", "rk", "m"}
	r := rand.New(rand.NewPCG(0x5eed, 0x7a11))
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	var b strings.Builder
	for len(out) < n {
		b.Reset()
		syl := 2 + r.IntN(2)
		for i := 0; i < syl; i++ {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
			if i == syl-1 || r.IntN(3) == 0 {
				b.WriteString(codas[r.IntN(len(codas))])
			}
		}
		w := b.String()
		if len(w) < 4 || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}
