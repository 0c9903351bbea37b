package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/internal/fixture"
	"github.com/vault-agent/vault-agent/search"
)

// citedLines are the lines of an answer that quote a note with a
// citation (not See also or Sources).
func citedLines(answer string) []string {
	var out []string
	for _, l := range strings.Split(answer, "\n") {
		if strings.Contains(l, "[[") && !strings.HasPrefix(l, "Sources:") && !strings.HasPrefix(l, "See also") {
			out = append(out, l)
		}
	}
	return out
}

// TestAnswerIsOneNoteNotACollage: the answer quotes the note that answers;
// a note that only shares a word with the question is not quoted.
func TestAnswerIsOneNoteNotACollage(t *testing.T) {
	a := offlineAgent(t, fixture.Write(t, map[string]string{
		"work/Remote Work Policy.md": "# Remote Work Policy\n\nEveryone may work remotely up to three days a week. " +
			"Tell your team lead which days you work from home, and keep Tuesdays in the office for the team meeting.\n\n" +
			"## Equipment\n\nThe company pays for a monitor and a chair for your home office, up to 400 euros.\n",
		"ml/Proximal Policy Optimization.md": "# Proximal Policy Optimization\n\nPPO is a policy gradient method for reinforcement learning. " +
			"It clips the policy update so that the new policy stays close to the old one, which makes training work reliably.\n",
		"ml/Reinforcement Learning.md": "# Reinforcement Learning\n\nAn agent learns a policy by trial and error from rewards.\n",
		"journal/2026-03-02.md":        "Worked on the garden project. The tomatoes need stakes.\n",
	}), nil)
	res, _ := ask(t, a, "what is our policy on remote work?")
	lines := citedLines(res.Answer)
	if len(lines) == 0 || !strings.HasPrefix(res.Answer, "Everyone may work remotely up to three days a week.") {
		t.Fatalf("answer does not lead with the policy:\n%s", res.Answer)
	}
	for _, l := range lines {
		if !strings.Contains(l, "[[Remote Work Policy") {
			t.Errorf("a line quotes another note: %q\n%s", l, res.Answer)
		}
	}
}

// TestAnswerKeepsStepsAndLists: numbered steps stay numbered in their
// order, and a list stays a list.
func TestAnswerKeepsStepsAndLists(t *testing.T) {
	a := fixtureAgent(t)
	res, _ := ask(t, a, "how do I make a sourdough starter day by day?")
	want := []string{"From [[Sourdough Starter#Day by day]]:\n\n1. Day 1: mix 50 g whole rye flour", "\n2. Day 2:", "\n3. Day 3:", "\n4. Days 4 to 7:", "\n5. The starter is ready"}
	at := -1
	for _, w := range want {
		i := strings.Index(res.Answer, w)
		if i <= at {
			t.Fatalf("steps missing or out of order at %q:\n%s", w, res.Answer)
		}
		at = i
	}
	res, _ = ask(t, a, "what do I need to make a sourdough starter?")
	if !strings.HasPrefix(res.Answer, "From [[Sourdough Starter#What you need]]:\n\n- Whole rye flour for the first days") ||
		!strings.Contains(res.Answer, "\n- A glass jar with a loose lid, a rubber band, and a kitchen scale.") {
		t.Errorf("list:\n%s", res.Answer)
	}
}

// TestSupportComesFromANoteRankedNearTheLead: a note the search ranks far
// below the lead is not quoted as a supporting point, however many of the
// question's words it shares: it is named under See also.
func TestSupportComesFromANoteRankedNearTheLead(t *testing.T) {
	filler := strings.Repeat("The office moved to the third floor last spring, and the kitchen got a new coffee machine. ", 12)
	a := offlineAgent(t, fixture.Write(t, map[string]string{
		"work/Remote Work Policy.md": "# Remote Work Policy\n\nEveryone may work remotely up to three days a week. " +
			"Tell your team lead which days you work from home.\n",
		"work/Office Notes.md": "# Office Notes\n\n" + filler + "\n\nThe remote work policy says nothing about equipment budgets for a home office.\n\n" + filler + "\n",
	}), nil)
	res, _ := ask(t, a, "remote work policy home equipment")
	if !strings.HasPrefix(res.Answer, "Everyone may work remotely") {
		t.Fatalf("answer does not lead with the policy:\n%s", res.Answer)
	}
	for _, l := range citedLines(res.Answer) {
		if strings.Contains(l, "[[Office Notes") {
			t.Errorf("a note ranked far below the lead is quoted: %q\n%s", l, res.Answer)
		}
	}
	if !strings.Contains(res.Answer, "See also [[Office Notes]]") {
		t.Errorf("the other note is not named under See also:\n%s", res.Answer)
	}
}

// TestLeadPassageSaysTheQuestion: a section whose heading names the
// question's subject but whose text says nothing of it (a warning before a
// list of links) does not lead when another note the search ranks close
// behind says it in its own words.
func TestLeadPassageSaysTheQuestion(t *testing.T) {
	answer := answerOver(t, map[string]string{
		"games/Tabletop games.md": "# Tabletop games\n\nWhat I play on Fridays.\n\n## Campaign and one-shot notes\n\n" +
			"> Spoilers ahead, read at your own risk.\n\n- [[Campaign]] notes: Strahd\n- [[One-shot]] notes: the haunted inn\n- [[Campaign]] notes: the dragon queen\n",
		"games/One-shot.md":  "# One-shot\n\nA one-shot is a short adventure played in a single session, as opposed to a campaign that runs for months.\n",
		"games/Campaign.md":  "# Campaign\n\nA long story told over many sessions.\n",
		"games/Dice bags.md": "# Dice bags\n\nThe green one holds the d20s.\n",
	}, "difference between a one-shot and a campaign")
	if strings.HasPrefix(answer, "Spoilers ahead") || !strings.HasPrefix(answer, "A one-shot is a short adventure") {
		t.Errorf("answer does not lead with the passage that says it:\n%s", answer)
	}
}

// TestLeadDefersToTheNoteItPointsTo: when the best-ranked note's passage
// only points to another note for the subject ("a write-up about
// [[X]]"), and that note says it in its own words, the answer leads with
// that note.
func TestLeadDefersToTheNoteItPointsTo(t *testing.T) {
	filler := strings.Repeat("Naps after lunch are a habit of mine, and the cat agrees. ", 2)
	for _, link := range []string{"[[Rest]]", "[[health/Rest|a note on rest]]", "[Rest](https://example.org/notes/Rest)"} {
		t.Run(link, func(t *testing.T) {
			answer := answerOver(t, map[string]string{
				"digest/Weekly digest.md": "# Weekly digest\n\n## Reading\n\n" +
					"- A write-up about " + link + ": how many hours adults should sleep at night, and why adults sleep less with age.\n" +
					"- A recipe for bread.\n- A note on bikes.\n",
				"health/Rest.md":    "# Rest\n\n" + filler + "\n\nMost adults need seven to nine hours of sleep at night; adults who sleep fewer hours at night tire.\n",
				"health/Running.md": "# Running\n\nI run three times a week.\n",
			}, "how many hours should adults sleep at night")
			if !strings.HasPrefix(answer, "Most adults need seven to nine hours of sleep") {
				t.Errorf("answer does not lead with the note the digest points to:\n%s", answer)
			}
		})
	}
}

// TestLeadThatSaysWhatItIsKeepsTheLead: a sentence that names its own
// note says what that note is; the note its link classifies it under (a
// list of core plugins) does not take the lead.
func TestLeadThatSaysWhatItIsKeepsTheLead(t *testing.T) {
	answer := answerOver(t, map[string]string{
		"plugins/Note composer.md": "# Note composer\n\nNote composer is a [[Core plugins|core plugin]] that lets you merge two notes into one note, or merge a note into another.\n",
		"plugins/Core plugins.md": "# Core plugins\n\nThe plugins that ship with the app:\n\n" +
			"- Backlinks: see the links to a page.\n- Merge two notes or split one into two.\n- Daily pages: a page for each day.\n" +
			"- Audio recorder: record audio.\n- Canvas: lay out ideas on a board.\n- Command palette: run commands.\n- File recovery: snapshots.\n",
		"plugins/Graph view.md": "# Graph view\n\nShows how notes link.\n",
	}, "how do I merge two notes")
	if !strings.HasPrefix(answer, "Note composer is a core plugin that lets you merge two notes") {
		t.Errorf("answer does not lead with the note that says what it is:\n%s", answer)
	}
}

// TestLabelLineComesWithItsSection: a one-line label ("Linux — 12%") that
// best holds the question is quoted with the paragraphs before it under
// its heading, which say what the figures are of.
func TestLabelLineComesWithItsSection(t *testing.T) {
	answer := answerOver(t, map[string]string{
		"stats/Survey results.md": "# Survey results\n\nWe asked the club in May.\n\n## Platform share\n\n" +
			"This section gives the share of members on each computer platform.\n\n**Windows** — 60%\n\n**MacOS** — 28%\n\n**Linux** — 12%\n",
		"stats/Budget.md": "# Budget\n\nThe club spent 300 euros on snacks.\n",
	}, "what share of people use linux")
	if !strings.HasPrefix(answer, "This section gives the share of members on each computer platform.") ||
		!strings.Contains(answer, "Linux — 12% [[Survey results#Platform share]]") {
		t.Errorf("the label line is not quoted with its section:\n%s", answer)
	}
}

// answerOver is the offline answer to q over a vault of files.
func answerOver(t *testing.T, files map[string]string, q string) string {
	t.Helper()
	res, _ := ask(t, offlineAgent(t, fixture.Write(t, files), nil), q)
	return res.Answer
}

// TestLeadWithNoProseGivesWayToANoteNamedAfterTheQuestion: a note with
// nothing to quote but what it is (a plugin page that is all table) does
// not lead over a note that says something of the question and whose name
// holds more of it (the theme the question asks for).
func TestLeadWithNoProseGivesWayToANoteNamedAfterTheQuestion(t *testing.T) {
	answer := answerOver(t, map[string]string{
		"plugins/random-encyclopedia.md": "---\naliases: [Random encyclopedia article, Encyclopedia article of the day]\n---\n# random-encyclopedia\n\n" +
			"Plugin ID: `random-encyclopedia`\nDeveloped by: [[someone]]\nMobile compatible: Yes\n\n![[encyclopedia-article.png]]\n",
		"themes/Encyclopedia.md":   "# Encyclopedia\n\nSerif headings, an infobox on the right and thin rules under each heading, in the style of an encyclopedia.\n",
		"themes/Minimal.md":        "# Minimal\n\nA quiet theme with few colours.\n",
		"plugins/article-index.md": "# article-index\n\nLists every article of a folder.\n",
		"plugins/wiki-article.md":  "# wiki-article\n\nImports an article from a wiki.\n",
	}, "theme that makes my vault look like an encyclopedia article")
	if !strings.HasPrefix(answer, "Serif headings, an infobox") {
		t.Errorf("answer does not lead with the theme named after the question:\n%s", answer)
	}
}

// TestLeadNamedWithTheQuestionsWordsTogether: of two notes whose names
// hold the same words of the question, the one that holds two of them side
// by side, as the question says them, leads over the better-ranked one
// that holds them apart.
func TestLeadNamedWithTheQuestionsWordsTogether(t *testing.T) {
	files := map[string]string{
		"plugins/core-search-tweaks-plugin.md": "# core-search-tweaks-plugin\n\n" +
			"Enhance built-in search: keyboard interface, card preview, built-in sorting and built-in filters.\n",
		"Concepts/Core Plugins.md": "# Core Plugins\n\nThis note is a small index of the core plugins in the app, each with its ID.\n\n" +
			"## Backlinks\n\nShow backlinks in a sidebar.\n\nPlugin ID: `backlink`\n",
		"themes/Minimal.md": "# Minimal\n\nA quiet theme with few colours.\n",
	}
	// Community plugins that mention the core plugins make "core" and
	// "plugins" common, so the search ranks the note saying "built-in"
	// three times first.
	for _, name := range []string{"calendar", "kanban", "dataview", "tasks"} {
		files["plugins/"+name+".md"] = "# " + name + "\n\nA community plugin; it works beside the core plugins.\n"
	}
	const q = "list of built-in core plugins with their ids"
	answer := answerOver(t, files, q)
	if !strings.HasPrefix(answer, "This note is a small index of the core plugins") {
		t.Errorf("answer does not lead with the note named after the question's words together:\n%s", answer)
	}
	if !strings.Contains(answer, "[[core-search-tweaks-plugin]]") {
		t.Errorf("the better-ranked note is not in the answer, so the case is not set up:\n%s", answer)
	}
}

// TestLeadNamingANoteWithoutALinkGivesWayToIt: a journal entry that
// names a note of the vault in its own words, without a link ("a tip in
// the Atomic Habits book"), gives way to that note when it says something
// of the question, even though the journal ranks first.
func TestLeadNamingANoteWithoutALinkGivesWayToIt(t *testing.T) {
	files := map[string]string{
		"Daily/2022-08-14 Sunday.md": "# Journal\n\nAn unproductive day. I got some work done by picturing the outcome, which is a tip in the Atomic Habits book about daily habits. " +
			"Daily habits are hard: I must use more of its tips every day.\n",
		"Atomic Habits.md": "# Introduction\n\n- Little changes make big differences in the long run: success is a product of daily habits.\n" +
			"- Forget about goals, focus on systems instead.\n",
		"Daily/2022-08-05 Friday.md": "# Journal\n\nRead a book on the train.\n",
		"Facade pattern.md":          "# Facade pattern\n\nA facade hides a complex subsystem behind one simple interface.\n",
	}
	answer := answerOver(t, files, "book about tiny daily habits that compound over time")
	if !strings.HasPrefix(answer, "- Little changes make big differences") && !strings.HasPrefix(answer, "From [[Atomic Habits") {
		t.Errorf("answer does not lead with the note the journal names:\n%s", answer)
	}
	if !strings.Contains(answer, "[[2022-08-14 Sunday") {
		t.Errorf("the journal is not in the answer, so the case is not set up:\n%s", answer)
	}
}

// TestNearestNotesHoldTheQuestion: when no note answers, the notes listed
// as nearest each hold a word of the question, and at least half as much
// of it as the nearest; when none holds any, none is listed.
func TestNearestNotesHoldTheQuestion(t *testing.T) {
	files := map[string]string{
		"garage/Van.md":  "# Van\n\nThe carburetor of the old van leaks when it is cold.\n",
		"db/Postgres.md": "# Postgres\n\nREINDEX rebuilds a bloated index.\n",
		"db/Search.md":   "# Search\n\nThe search index is rebuilt every night; a full rebuild takes an hour. Find out anything with it.\n",
		"home/Shed.md":   "# Shed\n\nWe rebuild the shed roof in May.\n",
	}
	t.Run("some hold it", func(t *testing.T) {
		answer := answerOver(t, files, "how do I rebuild a motorcycle carburetor")
		if !strings.HasPrefix(answer, "Your notes don't seem to answer this") || !strings.Contains(answer, "The nearest notes are:\n\n- [[Van]]") {
			t.Fatalf("not answered with the nearest note:\n%s", answer)
		}
		for _, far := range []string{"[[Postgres]]", "[[Search]]", "[[Shed]]"} {
			if strings.Contains(answer, far) {
				t.Errorf("a note holding only a common word of the question is listed as near, %s:\n%s", far, answer)
			}
		}
	})
	t.Run("none holds it", func(t *testing.T) {
		answer := answerOver(t, files, "how do I find out why my bicycle squeaks")
		if !strings.HasPrefix(answer, "Your notes don't seem to answer this: none of your notes mention bicycle or squeaks.") || strings.Contains(answer, "[[") || strings.Contains(answer, "nearest") {
			t.Errorf("notes that hold none of the question are listed, or the words no note has are not named:\n%s", answer)
		}
	})
}

// TestMissingWordsAreOfThePassagesRead: a word of the question that the
// passages read lack but the vault has is not said to be in no note: only
// the matching part of a note is read, and the word may be in another
// ("computer", in the sections the question does not match). A word no
// note has is said to be in none.
func TestMissingWordsAreOfThePassagesRead(t *testing.T) {
	var printers strings.Builder
	printers.WriteString("# Printers\n\n")
	for _, c := range []string{"Add", "Get", "Remove", "Set"} {
		fmt.Fprintf(&printers, "## %s-Printer\n\n%s a printer on the specified computer. %s\n\n", c, c, strings.Repeat("It takes the name of the printer and of its port. ", 30))
	}
	printers.WriteString("## Rename-Printer\n\nRenames the specified printer.\n")
	answer := answerOver(t, map[string]string{
		"cmdlets/Printers.md": printers.String(),
		"home/Garden.md":      "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "rename a laptop and reboot it")
	if !strings.HasPrefix(answer, "Your notes don't seem to answer this: none of your notes mention laptop or reboot.") {
		t.Errorf("words in no note are not named as such:\n%s", answer)
	}
	answer = answerOver(t, map[string]string{
		"cmdlets/Printers.md": printers.String(),
		"home/Garden.md":      "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "rename a computer and restart it")
	if !strings.HasPrefix(answer, "Your notes don't seem to answer this: none of your notes mention restart, and none of the passages I read mention computer.") {
		t.Errorf("words the vault has are said to be in no note:\n%s", answer)
	}
}

// meaningIndex is a real index whose searches also return one note as a
// search by meaning would (hybrid search): after the others, with a
// snippet that marks none of the query's words.
type meaningIndex struct {
	*search.Index
	path, snippet string
}

func (m meaningIndex) Search(ctx context.Context, req search.Request) (*search.Results, error) {
	res, err := m.Index.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	res.Results = append(res.Results, search.Result{Path: m.path, Title: noteName(m.path), Score: 0.01, Snippet: m.snippet})
	res.Total++
	return res, nil
}

// TestNearestNoteFoundByMeaning: when no note read holds a word of the
// question, a note the search found by meaning (the question uses other
// words than the note) is listed as the nearest; notes that matched only
// the question's framing are not.
func TestNearestNoteFoundByMeaning(t *testing.T) {
	root := fixture.Write(t, map[string]string{
		"tools/Find and replace.md": "# Find and replace\n\nFind text in a note and replace it.\n",
		"help/Slowness.md":          "# Slowness\n\nIf Obsidian runs slowly, start it in safe mode to rule out plugins.\n",
	})
	a := agentOver(t, meaningIndex{Index: syncedIndex(t, root), path: "help/Slowness.md",
		snippet: "If Obsidian runs slowly, start it in safe mode to rule out plugins."}, nil)
	res, _ := ask(t, a, "everything feels sluggish, how do I find out why")
	if !strings.HasPrefix(res.Answer, "Your notes don't seem to answer this") || !strings.Contains(res.Answer, "The nearest notes are:\n\n- [[Slowness]]") ||
		strings.Contains(res.Answer, "[[Find and replace]]") {
		t.Errorf("answer:\n%s", res.Answer)
	}
}

// TestHowToQuestionIsAnsweredBySteps: a question asking how to do
// something leads with the note that says it in numbered steps, when the
// best-ranked note only mentions the question's words in a sentence; a
// question that does not ask how keeps the search's order.
func TestHowToQuestionIsAnsweredBySteps(t *testing.T) {
	files := map[string]string{
		"wiki/Wiki tips.md": "# Wiki tips\n\nThe wiki has a page for each tool; add a link to it when you can.\n",
		"wiki/Contributing guide.md": "# Contributing guide\n\nTo add a page to the wiki:\n\n" +
			"1. Open the folder of the section.\n2. Create the page from the template.\n3. Send it for review.\n",
		"home/Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}
	answer := answerOver(t, files, "how do I add a page to the wiki")
	if !strings.HasPrefix(answer, "To add a page to the wiki: [[Contributing guide]]\n\n1. Open the folder of the section.\n2. Create the page") {
		t.Errorf("a how-to question is not answered by the steps:\n%s", answer)
	}
	answer = answerOver(t, files, "wiki page links")
	if !strings.HasPrefix(answer, "The wiki has a page for each tool") {
		t.Errorf("a question that does not ask how gave up the search's order:\n%s", answer)
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text, key string
		want      bool
	}{
		{"a tip in the atomic habits book", "atomic habits", true},
		{"atomic habits", "atomic habits", true},
		{"the atomic habitsbook", "atomic habits", false},                  // inside a longer word
		{"subatomic habits", "atomic habits", false},                       // inside a longer word
		{"git is a tool; my git notes", "git", false},                      // one-word names are words
		{"not atomic, habits later", "atomic habits", false},               // not the name as written
		{"über atomic habits", "atomic habits", true},                      // after a multi-byte character and a space
		{"éatomic habits", "atomic habits", false},                         // right after a letter of another script
		{"first atomic habitz, then atomic habits", "atomic habits", true}, // a later whole-word match
	}
	for _, tt := range tests {
		if got := mentions(tt.text, tt.key); got != tt.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tt.text, tt.key, got, tt.want)
		}
	}
}

// TestFirstLeadNamedAfterAWordOfTheQuestion: a note named after a word of
// the question whose passage says another of them (a drill named for ball
// handling, listing dribbling exercises) may lead while it falls just
// short of holding the question, over a lower-ranked note that holds it by
// a common word ("better"); a note named after none of the question's
// words is held to the full bar.
func TestFirstLeadNamedAfterAWordOfTheQuestion(t *testing.T) {
	st := &convState{terms: queryTerms{keywords: []string{"ball", "handling", "exercises", "better", "dribbling"}}}
	rel := relevance{groups: termStems(st.terms), weights: []float64{0.25, 0.2, 0.05, 0.25, 0.25}, total: 1}
	pick := func(path, heading, text string, search float64) notePick {
		name := noteName(path)
		p := notePick{path: path, search: search, blocks: parseBlocks(text, heading)}
		p.set = mergeSets(stemSet(text), stemSet(name))
		p.title = rel.cover(stemSet(name))
		p.best, p.bestCover = 0, rel.cover(stemSet(text))
		return p
	}
	const drillText = "1. High to low dribbling\n2. Dynamic crossover floor touch\n"
	journal := pick("Daily/2023-04-21 Friday.md", "Journal", "I shoot better today and feel better with the ball.\n", 0.66)
	tests := []struct {
		name string
		lead notePick
		want int
	}{
		{"named after a word of the question", pick("Basketball Handling Drill 1.md", "Main Points", drillText, 0.95), 0},
		{"named after none", pick("Drill 1.md", "Main Points", drillText, 0.95), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if rel.held(tt.lead.set) || !rel.held(journal.set) {
				t.Fatalf("the case is not set up: drill held %v, journal held %v", rel.held(tt.lead.set), rel.held(journal.set))
			}
			if lead, ok := st.firstLead([]notePick{tt.lead, journal}, rel); !ok || lead != tt.want {
				t.Errorf("firstLead = %d, %v; want %d", lead, ok, tt.want)
			}
		})
	}
}

// TestSearchesBestHitIsSeenAlso: when the answer leads with another note,
// the search's best hit is named under "See also" if it holds a word of
// the question, however little of it its part read holds ("popup dialog
// asking the user for input": Modals); one holding none is not.
func TestSearchesBestHitIsSeenAlso(t *testing.T) {
	st := &convState{terms: queryTerms{keywords: []string{"popup", "dialog", "asking", "user", "input"}}}
	rel := relevance{groups: termStems(st.terms), weights: []float64{0.3, 0.3, 0.2, 0.1, 0.1}, total: 1}
	pick := func(src int, text string, search float64) notePick {
		return notePick{src: src, search: search, set: stemSet(text), best: 0}
	}
	lead := pick(0, "Frequently asked questions: ask the user", 0.8)
	for _, tt := range []struct {
		name, text string
		want       bool
	}{
		{"holds a word", "Modals display information and accept input from the user.", true},
		{"holds none", "A theme's colours and fonts.", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			best := pick(1, tt.text, 1)
			if c := rel.cover(best.set); c >= seeAlsoCover {
				t.Fatalf("the case is not set up: the best hit covers %.2f", c)
			}
			_, seeAlso := st.othersOf(nil, []notePick{lead, best}, 0, rel, nil)
			if got := slices.Contains(seeAlso, 1); got != tt.want {
				t.Errorf("best hit seen also = %v, want %v (seeAlso %v)", got, tt.want, seeAlso)
			}
		})
	}
}

// TestNearestNotesListSearchesBestHit: when no note answers, the search's
// best hit is among the nearest notes listed if it holds a word of the
// question, though another holds a rarer one.
func TestNearestNotesListSearchesBestHit(t *testing.T) {
	st := &convState{terms: queryTerms{keywords: []string{"back", "text", "wiped", "mistake"}}}
	rel := relevance{groups: termStems(st.terms), weights: []float64{0.1, 0.1, 0.5, 0.3}, total: 1}
	pick := func(src int, text string, search float64) notePick {
		return notePick{src: src, search: search, set: stemSet(text), best: 0}
	}
	home := pick(1, "If you find any mistakes, contribute improvements.", 0.8)
	for _, tt := range []struct {
		name, text string
		want       bool
	}{
		{"holds a word", "File recovery is not a backup: back up your files.", true},
		{"holds none", "Snapshots of your notes at intervals.", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			best := pick(0, tt.text, 1)
			if c, h := rel.cover(best.set), rel.cover(home.set); c >= nearestShare*h {
				t.Fatalf("the case is not set up: the best hit covers %.2f, the other %.2f", c, h)
			}
			var got []int
			for _, p := range nearestNotes([]notePick{best, home}, rel) {
				got = append(got, p.src)
			}
			if slices.Contains(got, 0) != tt.want || !slices.Contains(got, 1) {
				t.Errorf("nearest %v, want the other note and the best hit listed = %v", got, tt.want)
			}
		})
	}
}

// TestCopiesAreReadOnce: a page kept in two folders (one per version of a
// product) is read, quoted and named once; the notes read instead are
// other notes.
func TestCopiesAreReadOnce(t *testing.T) {
	page := "# Install-Feature\n\nThe Install-Feature command installs a feature on the server. Restart the server when it asks.\n"
	answer := answerOver(t, map[string]string{
		"v1/Install-Feature.md": page,
		"v2/Install-Feature.md": page,
		"v3/Install-Feature.md": page,
		"v1/Get-Feature.md":     "# Get-Feature\n\nThe Get-Feature command lists the features installed on the server.\n",
	}, "install a feature on the server")
	copies := 0
	for _, v := range []string{"v1", "v2", "v3"} {
		copies += strings.Count(answer, "[["+v+"/Install-Feature")
	}
	if copies != 2 || !strings.Contains(answer, "Get-Feature]]") { // the lead's citation and Sources
		t.Errorf("the copies are quoted or named more than once, or crowd out the other note:\n%s", answer)
	}
}

// TestNoteNamedAfterTheQuestionKeepsItsLists: in a note named after the
// question ("TCP" for "summarize my notes on TCP") every item of a list
// is about it, though few items say its name: the list is quoted whole.
func TestNoteNamedAfterTheQuestionKeepsItsLists(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"net/Tcp.md": "# TCP\n\nCharacteristics:\n\n- Point-to-point: one sender, one receiver\n- Connection-oriented: handshaking before sending data\n" +
			"- Full duplex service\n- Reliable, in-order byte stream\n- A TCP connection is identified by a 4-tuple\n",
		"net/Udp.md": "# UDP\n\nNo handshaking; unlike TCP, datagrams may be lost.\n",
	}, "summarize my notes on TCP", "Characteristics: [[Tcp]]\n\n- Point-to-point: one sender, one receiver\n- Connection-oriented: handshaking before sending data\n"+
		"- Full duplex service\n- Reliable, in-order byte stream\n- A TCP connection is identified by a 4-tuple\n")
}

// TestSectionGoesOnThroughItsLists: a section that answers in a paragraph,
// its points and another paragraph ("In TCP, ...", "In UDP, ...") is quoted
// through them while they hold the question; a list after the last such
// paragraph is not.
func TestSectionGoesOnThroughItsLists(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"Sockets.md": "# Sockets\n\n## Comparison between UDP and TCP sockets\n\nIn TCP, two processes talk as if through a pipe.\n\n" +
			"- The sender writes bytes to the pipe.\n- The TCP socket adds the address, not the programmer.\n\n" +
			"In UDP, programmers attach the destination address to every datagram.\n\n- Checksums for UDP are optional.\n- Ports are sixteen bits.\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "what is the difference between TCP and UDP", "In TCP, two processes talk as if through a pipe.\n\n"+
		"- The sender writes bytes to the pipe.\n- The TCP socket adds the address, not the programmer.\n\n"+
		"In UDP, programmers attach the destination address to every datagram. [[Sockets#Comparison between UDP and TCP sockets]]\n\n")
}

// TestPassageDoesNotEndOnAColon: what a part of the passage ends on a
// colon to introduce (steps, a list) comes with it, though its words are
// not the question's; the citation ends the last paragraph, not the list.
func TestPassageDoesNotEndOnAColon(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"Plugin security.md": "# Plugin security\n\n## Restricted mode\n\nRestricted mode keeps community plugins from running.\n\n" +
			"To turn off Restricted mode:\n\n1. Open Settings.\n2. Select Community plugins.\n3. Select Turn on.\n\n## Reviews\n\nPlugins are reviewed once.\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "what is restricted mode", "Restricted mode keeps community plugins from running.\n\n"+
		"To turn off Restricted mode: [[Plugin security#Restricted mode]]\n\n1. Open Settings.\n2. Select Community plugins.\n3. Select Turn on.\n\n")
}

// TestNoteWithNothingButLinksFirstIsReadOn: a note found by its name whose
// part read is only a line of links under its frontmatter is read on: the
// answer quotes what it says next, cited by its section, which is not the
// note's title though it is its first heading.
func TestNoteWithNothingButLinksFirstIsReadOn(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"algo/Dynamic Programming.md": "---\ntags: [algorithm]\n---\nLinks: [[Algorithms]]\n- - -\n\n## When to use\n" +
			"1. Count the number of ways to do something\n2. Minimize or maximize a cost\n\n## Techniques\n\nEither iterative with tabulation or recursive with memoization.\n",
		"algo/Algorithms.md":  "# Algorithms\n\n[[Dynamic Programming]], [[Greedy]].\n",
		"algo/Knapsack.md":    "# Knapsack\n\nSolved with dynamic programming over the capacity.\n",
		"algo/Coin change.md": "# Coin change\n\nA dynamic programming classic: count the ways to make an amount.\n",
	}, "explain dynamic programming", "From [[Dynamic Programming#When to use]]:\n\n1. Count the number of ways to do something\n2. Minimize or maximize a cost\n")
}

// TestPassageDoesNotEndOnAColonItCannotKeep: a paragraph that goes on
// answering but introduces a list too long to come with it is left out,
// rather than ending the passage on its colon.
func TestPassageDoesNotEndOnAColonItCannotKeep(t *testing.T) {
	var list strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&list, "- A helper that works in every window, number %d, with a long description of what it does.\n", i)
	}
	answer := answerOver(t, map[string]string{
		"Pop-out windows.md": "# Pop-out windows\n\nPop-out windows come with their own globals: each window has its own document.\n\n" +
			"The API has helpers for windows and their document:\n\n" + list.String(),
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "why does document differ in pop-out windows")
	if !strings.HasPrefix(answer, "Pop-out windows come with their own globals: each window has its own document. [[Pop-out windows]]\n\n") {
		t.Errorf("answer:\n%s", answer)
	}
}

// TestOtherSpellingAnswers: a passage in the other spelling of a word of
// the question ("synchronise" for "sync") holds that word.
func TestOtherSpellingAnswers(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"Phone.md": "# Phone\n\n## Storage\n\nA phone keeps each vault in a folder of the app.\n\n" +
			"## Across devices\n\nTo synchronise a vault with a phone, turn it on in the settings of both.\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "how do I sync a vault to my phone", "To synchronise a vault with a phone, turn it on in the settings of both. [[Phone#Across devices]]\n\n")
}

// TestOtherSpellingIsTheWord: the match unit of a word of the question
// holds its other spellings.
func TestOtherSpellingIsTheWord(t *testing.T) {
	for _, tt := range []struct{ word, text string }{
		{"sync", "Synchronise the vault."},
		{"colour", "Pick a color."},
		{"customize", "Customising the ribbon."},
	} {
		g := termStems(queryTerms{keywords: []string{tt.word}})
		if len(g) != 1 || len(g[0]) != 1 || !hasUnit(stemSet(tt.text), g[0][0]) {
			t.Errorf("%q: unit %v not in %q", tt.word, g, tt.text)
		}
	}
}

// TestHowToIsAnsweredByWhatSaysHow: of two passages of a section holding
// the question's words alike, a question asking how to do something is
// answered by the sentence that introduces the points saying how, not by
// the one before it; a sentence that introduces consequences and says
// less of the question does not replace the one that answers.
func TestHowToIsAnsweredByWhatSaysHow(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"Ribbon.md": "# Ribbon\n\n## Customize the ribbon\n\nYour customized ribbon is remembered across sessions.\n\n" +
			"On the desktop, you can customize the ribbon as follows:\n\n- Drag the icons to reorder them.\n- Right-click to hide an icon.\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "how do I customize the ribbon", "On the desktop, you can customize the ribbon as follows: [[Ribbon#Customize the ribbon]]\n\n- Drag the icons to reorder them.\n- Right-click to hide an icon.\n")
	answerStartsWith(t, map[string]string{
		"Regions.md": "# Regions\n\n## Change region\n\nTo change your remote vault's region, recreate the vault on another server.\n\n" +
			"When you migrate a remote vault your data is replaced. This means:\n\n1. Remote data is removed.\n2. Version history is lost.\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "how do I change the region of my remote vault", "To change your remote vault's region, recreate the vault on another server.")
}

// TestTagLineIsNotAnswer: a line of tags, labelled or not ("^Tags:
// #condition", "Tags: #rule #mechanic"), is not a passage, though it holds
// a word of the question.
func TestTagLineIsNotAnswer(t *testing.T) {
	answerStartsWith(t, map[string]string{
		"Conditions/Frightened.md": "# Frightened\n\n## Description\n\n- A frightened creature has disadvantage on ability checks.\n" +
			"- The creature can't willingly move closer to the source of its fear.\n\n^Tags: #condition\n",
		"Garden.md": "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "what does the frightened condition do", "From [[Frightened#Description]]:\n\n- A frightened creature has disadvantage on ability checks.\n")
	for _, line := range []string{"^Tags: #condition", "Tags: #rule #mechanic", "#a #b/c", "tags: #rarity_unknown_(magic), #type_melee"} {
		if !notProse(line, 1, true) {
			t.Errorf("%q is prose", line)
		}
	}
	for _, line := range []string{"Tags are words with a #hash in front.", "Note: #1 is the best."} {
		if reTagOnly.MatchString(line) {
			t.Errorf("%q is read as a line of tags", line)
		}
	}
}

// TestAttributeTableIsNotWhatTheNoteSays: asked what a note is or does, by
// its name alone, the answer is what it says, read on past its title and
// the table of its attributes; asked one of those attributes, or something
// in words no note found has, the table.
func TestAttributeTableIsNotWhatTheNoteSays(t *testing.T) {
	spell := func(name, level, text string) string {
		return "# " + name + "\n\n## Spell Summary\n\n| Attribute | Value |\n|---|---|\n| Name | " + name + " |\n| Level | " + level +
			" |\n| Range | 150 ft. |\n\n---\n\n## Description\n\n" + text + "\n\n## Usage\n\n**Available to Classes:** Wizard\n"
	}
	files := map[string]string{
		"Spells/Fireball.md": spell("Fireball", "3", "A bright streak flashes from your finger and blossoms into an explosion of flame."),
		"Spells/Shield.md":   spell("Shield", "1", "An invisible barrier of magical force appears and protects you."),
		"Garden.md":          "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}
	answerStartsWith(t, files, "what is fireball", "A bright streak flashes from your finger and blossoms into an explosion of flame.")
	answerStartsWith(t, files, "what level is the spell shield", "From [[Shield#Spell Summary]]:\n\n| Attribute | Value |")
	// A word no note found has ("cost") may be one a label says in other
	// words: the table is not left out.
	answerStartsWith(t, files, "how much does fireball cost", "From [[Fireball#Spell Summary]]:\n\n| Attribute | Value |")
	// But a word the search leaves out as the frame of the question is
	// not one of those.
	answerStartsWith(t, files, "how does fireball work", "A bright streak flashes from your finger and blossoms into an explosion of flame.")
}

// TestFramingWordsAreNotMissing: the words the search weighs as filler
// ("compare", "difference") are not named among those the notes lack.
func TestFramingWordsAreNotMissing(t *testing.T) {
	answer := answerOver(t, map[string]string{
		"sec/Kerberoasting.md": "# Kerberoasting\n\nKerberoasting requests service tickets and cracks them offline.\n",
		"food/Roast beef.md":   "# Roast beef\n\nRoasting beef slowly keeps it tender.\n",
		"home/Garden.md":       "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}, "compare kerberoasting and asrep roasting")
	if !strings.Contains(answer, "asrep") || strings.Contains(answer, "compare") {
		t.Errorf("answer:\n%s", answer)
	}
}

// TestListOfNotesAnswersWhatItsHeadingNames: a list of links alone under
// a heading that names what is asked ("# Tools") answers with the notes
// it names, as links; one under a heading the question does not name
// ("# Concepts") does not.
func TestListOfNotesAnswersWhatItsHeadingNames(t *testing.T) {
	files := map[string]string{
		"sec/Fuzzing.md": "---\ntags: [security]\n---\nGenerating semi-random input to find crashes.\n# Concepts\n- [[Test Oracle]]\n- [[Test Corpus]]\n" +
			"# Tools\n- [[American Fuzzy Lop]]\n- [[libfuzzer]]\n",
		"sec/Intruder.md": "# Intruder\n\nIntruder is a tool for fuzzing, and among fuzzing tools the one for web forms.\n",
		"Garden.md":       "# Garden\n\nThe tomatoes went in on Sunday.\n",
	}
	answerStartsWith(t, files, "list the tools for fuzzing", "From [[Fuzzing#Tools]]:\n\n- [[American Fuzzy Lop]]\n- [[libfuzzer]]\n")
	if answer := answerOver(t, files, "what is a test oracle in fuzzing"); strings.Contains(answer, "[[Test Corpus]]") {
		t.Errorf("a list of notes its heading does not name was quoted:\n%s", answer)
	}
}

// TestLinkAmongItemsIsNotAnItem: in a list whose other items say
// something, an item that is only a link is left out, as before lists of
// links were read.
func TestLinkAmongItemsIsNotAnItem(t *testing.T) {
	blocks := parseBlocks("## Tools\n- AFL finds crashes by mutation.\n- [[libfuzzer]]\n- Honggfuzz runs in parallel.\n", "")
	if len(blocks) != 1 || len(blocks[0].items) != 2 || blocks[0].linkList() {
		t.Fatalf("blocks: %+v", blocks)
	}
	blocks = parseBlocks("## Tools\n- [[AFL]]\n- [[libfuzzer]].\n", "")
	if len(blocks) != 1 || !blocks[0].linkList() || blocks[0].items[1].text != "[[libfuzzer]]" {
		t.Fatalf("blocks: %+v", blocks)
	}
}

// TestListOfNotesSaysItsHeading: a list of notes under a heading that
// names the question says what the heading names, though the notes'
// names hold none of the question's words: the lead does not pass to a
// note further down whose sentence holds them.
func TestListOfNotesSaysItsHeading(t *testing.T) {
	blocks := parseBlocks("# Tools\n- [[American Fuzzy Lop]]\n- [[libfuzzer]]\n", "")
	rel := relevance{groups: [][]string{{stemOf("tools")}, {stemOf("fuzzing")}}, weights: []float64{1, 1}, total: 2}
	p := notePick{blocks: blocks, best: 0, bestCover: 0.5}
	if len(blocks) != 1 || !blocks[0].linkList() || !p.says(rel) {
		t.Errorf("blocks %+v: says %v", blocks, p.says(rel))
	}
}
