package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vault-agent/vault-agent/agent"
)

// Questions about a folder's notes ("what notes are in the Templates
// folder?", "list the notes in Projects/2026") are answered with a search
// for path:"folder/", which lists them, newest first, with their number;
// when no note's path starts so, the question is searched as any other.
// "How many notes do I have?" is answered from getFileTree.

var (
	// reFolderQuestion names the folder whose notes are asked for.
	reFolderQuestion = regexp.MustCompile(`(?i)(?:\b(?:notes?|files?|pages?)\s+(?:are\s+|do\s+i\s+have\s+)?(?:in|inside|under)\s+|` +
		`\b(?:what'?s|what\s+is|list|show)\s+(?:in|inside)\s+)(?:the\s+|my\s+)?(?:folder\s+)?["'“]?([^"'”?!]+?)["'”]?(?:\s+(?:folder|directory))?\s*[?.!]*$`)
	// reCountQuestion asks how many notes the vault holds.
	reCountQuestion = regexp.MustCompile(`(?i)\bhow\s+many\s+(?:notes|files|pages)\s+(?:do\s+i\s+have|are\s+(?:there|in\s+(?:my|the|this)\s+vault))\s*(?:in\s+(?:my|the|this)\s+vault)?\s*[?.!]*$`)
)

// questionFolder returns the folder the goal asks the notes of, "" when
// none.
func (st *convState) questionFolder() string {
	if !st.available(agent.ToolLocalSearch) || reHowTo.MatchString(st.goal) {
		return ""
	}
	m := reFolderQuestion.FindStringSubmatch(strings.TrimSpace(st.goal))
	if m == nil {
		return ""
	}
	f := strings.Trim(strings.TrimSpace(m[1]), "/")
	if f == "" || len(strings.Fields(f)) > 4 || strings.ContainsAny(f, "[]#") {
		return ""
	}
	return f
}

// folderQuery is the search listing the notes of folder.
func folderQuery(folder string) string { return "path:" + strconv.Quote(folder+"/") }

// countQuestion reports whether the goal asks how many notes the vault
// holds, and getFileTree can answer it.
func (st *convState) countQuestion() bool {
	return st.available(agent.ToolFileTree) && reCountQuestion.MatchString(strings.TrimSpace(st.goal))
}

// folderStep is the next step of a folder or count question; false when
// the goal is neither, or no note is in the folder it names.
func (st *convState) folderStep() (step, bool) {
	if st.countQuestion() {
		if st.tree == nil {
			return callStep("Counting the notes of the vault.", agent.ToolFileTree, map[string]any{}), true
		}
		if !st.tree.failed {
			return st.listedStep("folders", "Counted the vault's notes."), true
		}
	}
	folder := st.questionFolder()
	if folder == "" {
		return step{}, false
	}
	rec := st.searchFor(folderQuery(folder))
	if rec == nil {
		return callStep("Listing the notes in "+folder+"/.", agent.ToolLocalSearch, map[string]any{"query": folderQuery(folder)}), true
	}
	if rec.failed || len(rec.results) == 0 {
		return step{}, false
	}
	return st.listedStep("notes", "Listed the notes in "+folder+"/."), true
}

// fileTreeRec is the last getFileTree result.
type fileTreeRec struct {
	tree   agent.FileTree
	failed bool
}

// noteFileTree records a getFileTree result.
func (st *convState) noteFileTree(content string, failed bool) {
	rec := &fileTreeRec{failed: failed}
	if !failed && json.Unmarshal([]byte(content), &rec.tree) != nil {
		rec.failed = true
	}
	st.tree = rec
}

// folderAnswer answers a folder or count question; false when the goal
// was not answered so.
func (st *convState) folderAnswer() (string, bool) {
	if st.countQuestion() && st.tree != nil && !st.tree.failed {
		t := st.tree.tree
		folders := append([]agent.FolderInfo(nil), t.Folders...)
		sort.SliceStable(folders, func(i, j int) bool { return folders[i].Notes > folders[j].Notes })
		var b strings.Builder
		fmt.Fprintf(&b, "Your vault has %s", plural(t.Total, "note"))
		if len(folders) > 0 {
			fmt.Fprintf(&b, " in %s. The largest:\n\n", plural(len(folders), "folder"))
			for _, f := range folders[:min(len(folders), 5)] {
				fmt.Fprintf(&b, "- %s/: %s\n", strings.TrimSuffix(f.Path, "/"), plural(f.Notes, "note"))
			}
			return strings.TrimRight(b.String(), "\n"), true
		}
		return b.String() + ".", true
	}
	folder := st.questionFolder()
	if folder == "" {
		return "", false
	}
	rec := st.searchFor(folderQuery(folder))
	if rec == nil || rec.failed || len(rec.results) == 0 {
		return "", false
	}
	total := max(rec.total, len(rec.results))
	var b strings.Builder
	verb := "are"
	if total == 1 {
		verb = "is"
	}
	fmt.Fprintf(&b, "%s %s in %s/", plural(total, "note"), verb, folder)
	shown := rec.results[:min(len(rec.results), maxTagNotes)]
	if len(shown) < total {
		fmt.Fprintf(&b, " (its subfolders included); here are the %d most recently changed", len(shown))
	}
	b.WriteString(":\n\n")
	cited := writeHits(&b, rec, len(shown), false, folderQuery(folder))
	b.WriteString("\nSources: " + strings.Join(cited, ", "))
	return b.String(), true
}
