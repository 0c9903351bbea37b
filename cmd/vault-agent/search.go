package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vault-agent/vault-agent/rpc"
	"github.com/vault-agent/vault-agent/search"
	"github.com/vault-agent/vault-agent/service"
)

func newSearchCmd(g *globalFlags) *cobra.Command {
	var vf vaultFlags
	var limit int
	var asJSON bool
	var tags, folders []string
	var since, until, mode string
	cmd := &cobra.Command{
		Use:   "search --vault DIR [flags] QUERY",
		Short: "Search the notes of a vault",
		Long: `Search the notes of a vault, ranked by relevance (BM25 over titles, aliases, headings, tags,
paths, text and the words of the links pointing to each note; diacritics folded, English stemmed,
CJK supported). The index is updated first.

Query language (Obsidian's):
  free terms           sourdough starter       (ranked: notes with more of them first; none required)
  "phrase"             "feeding schedule"      (\" is a quote inside it)
  -term / -"phrase"    -rye                    (exclude; -(a b) excludes notes with both)
  OR, ( )              bread OR pizza, meeting (work OR meetup)
  tag:#x               tag:#project            (also matches nested tags like #project/alpha)
  path:folder/         path:recipes/           (path:/regex/ too)
  file:name            file:"Meeting Notes"    (file:/regex/ too)
  content:x            content:"happy cat"     (in the text only, not the name, tags or properties)
  match-case:x         match-case:HappyCat     (ignore-case:x for any case)
  line:x               line:(mix flour)        (a line holding both; -line:(...) for none)
  block:x, section:x   section:(dog cat)       (a block between blank lines; a section between headings)
  task:x               task-todo:call          (task-todo: open tasks, task-done: done ones; alone: any)
  [property]           [aliases]               (has the property)
  [property:value]     [status:draft OR review]  ([property:null] for an empty value)
  [property:<n]        [duration:>5], [due:<2026-04-01]  (numbers and dates; also <= and >=)
  /regex/              /\d{4}-\d{2}-\d{2}/     (RE2 syntax, any case, over the note's text)
An operator's value is a word, a "phrase", a /regex/ or a group in parentheses whose every part
is required: line:(mix -flour), task:(call OR email). Words match whole words, stemmed.
Misspelt free words of 4+ letters also match their likely spelling (the first letter must be right).
Free words also match their British or American spelling (colour, color; organise, organize)
and common clippings (sync, synchronise; config, configuration; repo, repository).
Chinese, Japanese and Korean match by pairs of characters; a run of 4+ characters (a question)
ranks the notes holding a third of its pairs or more.
A query is at most 4096 bytes and 64 words. 'vault-agent explain QUERY' says how one is read.
Results of line:, block:, section: and the task operators list the lines that matched.

Flags go before the query: from its first word on, every argument is query text, dashes included
(vault sync -plugin searches for "vault sync" without "plugin"). Put the query in single quotes
when it holds double quotes, # or *, so that the shell leaves them alone: 'tag:#x "a phrase"'.
With --tag, --folder, --since or --until the query may be empty (""): the matching notes are
listed, newest first. --exclude leaves notes out of this search only; the index keeps them.

With an embedding model (--embed-model, and --embed-base-url for a local server), search is
hybrid by default: the ranking by words fused with the notes closest in meaning, so a note is
found by words it never uses. --mode lexical|semantic|hybrid chooses. Filters apply in every mode.`,
		Example: `  vault-agent search --vault ~/Notes sourdough
  vault-agent search --vault ~/Notes --limit 5 'tag:#project "launch plan" -draft'
  vault-agent search --vault ~/Notes 'launch task-todo:'
  vault-agent search --vault ~/Notes '[status:draft] line:(deadline friday)'
  vault-agent search --vault ~/Notes vault sync -plugin
  vault-agent search --vault ~/Notes --since 2026-03-01 --until 2026-03-14 ""
  vault-agent search --vault ~/Notes --json --since 2026-03-01 standup`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			query, err := queryText(cmd, args)
			if err != nil {
				return err
			}
			if query == "" && len(tags) == 0 && len(folders) == 0 && since == "" && until == "" {
				return usageError(cmd, "a query is required, e.g. vault-agent search --vault DIR \"sourdough starter\" (or a filter: --tag, --folder, --since, --until)")
			}
			if limit < 1 || limit > 100 {
				return usageError(cmd, "--limit must be between 1 and 100, got %d", limit)
			}
			switch mode {
			case "", search.ModeLexical, search.ModeSemantic, search.ModeHybrid:
			default:
				return usageError(cmd, "--mode must be lexical, semantic or hybrid, got %q", mode)
			}
			// --exclude filters this search; the shared index keeps every note.
			req := search.Request{Query: query, Limit: limit, Tags: tags, Folders: folders, Excludes: vf.excludes, Mode: mode}
			vf.excludes = nil
			if req.From, err = parseDate(since); err != nil {
				return usageError(cmd, "--since: %v", err)
			}
			if req.To, err = parseDate(until); err != nil {
				return usageError(cmd, "--until: %v", err)
			}
			if !req.From.IsZero() && !req.To.IsZero() && req.To.Before(req.From) {
				return usageError(cmd, "--since %s is after --until %s, so no note can match: swap them", since, until)
			}
			if !req.To.IsZero() {
				req.To = req.To.Add(24*time.Hour - time.Millisecond)
			}
			if err := search.CheckQuerySize(query); err != nil {
				return usageError(cmd, "%v", err)
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			svc, err := vf.open(cmd, log, service.Options{}, false)
			if err != nil {
				return err
			}
			defer svc.Close()
			res, err := svc.Search(cmd.Context(), req)
			if errors.Is(err, search.ErrEmptyQuery) || errors.Is(err, search.ErrBadQuery) || errors.Is(err, service.ErrNoEmbedder) {
				return usageError(cmd, "%v", err)
			}
			if err != nil {
				return err
			}
			return writeResults(cmd.OutOrStdout(), res, asJSON)
		},
	}
	// Words after the first one of the query are query text, "-term"
	// included, not flags.
	cmd.Flags().SetInterspersed(false)
	vf.add(cmd)
	cmd.Flags().IntVarP(&limit, "limit", "n", 10, "maximum number of results (1-100)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print results as JSON")
	cmd.Flags().StringSliceVar(&tags, "tag", nil, "only notes with this tag (nested tags included; repeatable)")
	cmd.Flags().StringSliceVar(&folders, "folder", nil, "only notes under this folder (repeatable)")
	cmd.Flags().StringVar(&since, "since", "", "only notes modified or dated on or after this date (YYYY-MM-DD)")
	cmd.Flags().StringVar(&until, "until", "", "only notes modified or dated on or before this date (YYYY-MM-DD)")
	cmd.Flags().StringVar(&mode, "mode", "", "lexical (words), semantic (meaning) or hybrid (both); default hybrid with --embed-model, else lexical")
	return cmd
}

func parseDate(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, time.Local)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date like 2026-03-14", s)
	}
	return t, nil
}

func printResults(w io.Writer, res *search.Results) {
	if len(res.Results) == 0 {
		fmt.Fprintln(w, "No notes matched.")
		return
	}
	for i, r := range res.Results {
		if r.Score == 0 { // listed by filters, newest first: no score
			fmt.Fprintf(w, "%d. %s  (%s)\n", i+1, r.Title, r.Path)
		} else {
			fmt.Fprintf(w, "%d. %s  (%s)  score %.2f\n", i+1, r.Title, r.Path, r.Score)
		}
		if r.Heading != "" {
			fmt.Fprintf(w, "   § %s\n", r.Heading)
		}
		if s := strings.Join(strings.Fields(r.Snippet), " "); s != "" {
			fmt.Fprintf(w, "   %s\n", s)
		}
		for _, m := range r.Matches {
			fmt.Fprintf(w, "   L%d: %s\n", m.Line, m.Text)
		}
	}
	more := ""
	if res.Fuzzy {
		more = ", fuzzy matches"
	}
	if res.Partial {
		more += ", matching only some of the terms"
	}
	fmt.Fprintf(w, "\n%d of %d matching notes (%.1f ms%s)\n", len(res.Results), res.Total, res.TookMs, more)
}

// queryText joins the words of a query (or a question). The command's
// flags are not interspersed, so everything from the first word on is
// text; a flag of the command found there was surely meant as one, and is
// refused with a hint rather than searched for.
func queryText(cmd *cobra.Command, args []string) (string, error) {
	for _, a := range args[min(1, len(args)):] {
		name, _, _ := strings.Cut(a, "=")
		var f *pflag.Flag
		switch {
		case strings.HasPrefix(name, "--"):
			f = cmd.Flags().Lookup(name[2:])
		case len(name) == 2 && name[0] == '-':
			f = cmd.Flags().ShorthandLookup(name[1:])
		}
		if f != nil {
			return "", usageError(cmd, "flags go before the text: %q after %q would be taken as text; move it before %q, "+
				"or quote the whole text to mean it as text", a, args[0], args[0])
		}
	}
	return strings.TrimSpace(strings.Join(args, " ")), nil
}

// writeResults prints search results for a person, or as the JSON of
// vault/search's result.
func writeResults(w io.Writer, res *search.Results, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rpc.WireResults(res))
	}
	printResults(w, res)
	return nil
}
