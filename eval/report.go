package eval

import (
	"fmt"
	"io"
	"strings"
)

// Report prints the comparison of engines as markdown tables: overall,
// by kind when the questions have kinds, and per question when verbose.
func Report(w io.Writer, qs []Question, engines []*Engine, verbose bool) {
	fmt.Fprintf(w, "| engine | MRR@%d | top-1 (of %d) | recall@%d |\n|---|---|---|---|\n", K, len(qs), K)
	for _, e := range engines {
		s := Summarize(qs, e.Outcomes, nil)
		fmt.Fprintf(w, "| %s | %.3f | %d | %.3f |\n", e.Name, s.MRR, s.Top1, s.Recall)
	}
	if len(engines) == 2 {
		a, b := Summarize(qs, engines[0].Outcomes, nil), Summarize(qs, engines[1].Outcomes, nil)
		ratio := "n/a"
		if b.MRR > 0 {
			ratio = fmt.Sprintf("%.2fx", a.MRR/b.MRR)
		}
		fmt.Fprintf(w, "\n%s vs %s: MRR@%d %s, top-1 %+d\n", engines[0].Name, engines[1].Name, K, ratio, a.Top1-b.Top1)
	}
	kinds, by := Kinds(qs)
	if len(kinds) > 0 {
		fmt.Fprintf(w, "\nBy kind (MRR@%d / top-1 / recall@%d):\n\n| kind | n |", K, K)
		for _, e := range engines {
			fmt.Fprintf(w, " %s |", e.Name)
		}
		fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(engines)))
		for _, k := range kinds {
			fmt.Fprintf(w, "| %s | %d |", k, len(by[k]))
			for _, e := range engines {
				s := Summarize(qs, e.Outcomes, by[k])
				fmt.Fprintf(w, " %.2f / %d / %.2f |", s.MRR, s.Top1, s.Recall)
			}
			fmt.Fprintln(w)
		}
	}
	for _, e := range engines {
		if len(e.Millis) > 0 {
			fmt.Fprintf(w, "\n%s search time per question: p50 %.1f ms, p99 %.1f ms\n", e.Name, Percentile(e.Millis, 50), Percentile(e.Millis, 99))
		}
	}
	for _, e := range engines {
		if e.Asks != nil {
			ReportAsks(w, qs, e.Name, e.Asks)
		}
	}
	if !verbose {
		return
	}
	fmt.Fprintf(w, "\nPer question (rank of the first expected note in the top %d, - when absent):\n", K)
	for i, q := range qs {
		fmt.Fprintf(w, "\n[%s] %q\n", q.Kind, q.Q)
		for _, e := range engines {
			o := e.Outcomes[i]
			rank := "-"
			if o.Rank > 0 {
				rank = fmt.Sprint(o.Rank)
			}
			line := fmt.Sprintf("  %-12s rank %-2s found %d/%d", e.Name, rank, o.Found, len(q.Expect))
			if o.Err != "" {
				line += "  error: " + o.Err
			} else if o.Rank != 1 && o.Top != "" {
				line += "  top: " + o.Top
			}
			fmt.Fprintln(w, line)
			if e.Asks != nil && i < len(e.Asks.Outcomes) {
				a := e.Asks.Outcomes[i]
				mark := "miss"
				if a.Hit {
					mark = "hit"
				}
				line := fmt.Sprintf("  %-12s answer %s (first line %v, %d/%d lines), cites: %s", "", mark, a.FirstHit, a.Expected, a.Lines, strings.Join(a.Cited, " | "))
				if a.Err != "" {
					line += "  error: " + a.Err
				}
				fmt.Fprintln(w, line)
			}
		}
		fmt.Fprintf(w, "  expect: %s\n", strings.Join(q.Expect, " | "))
	}
}
