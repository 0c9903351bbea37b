package eval

import (
	"fmt"
	"io"
	"strings"
)

// Report prints the comparison of engines as markdown tables: overall,
// by kind when the questions have kinds, and per question when verbose.
// Every engine after the first is compared with the first; with engines
// named lexical, hybrid and semantic, the by-kind table also gives the
// ratios of hybrid's MRR@10 to each of the two others.
func Report(w io.Writer, qs []Question, engines []*Engine, verbose bool) {
	fmt.Fprintf(w, "| engine | MRR@%d | top-1 (of %d) | recall@%d |\n|---|---|---|---|\n", K, len(qs), K)
	for _, e := range engines {
		s := Summarize(qs, e.Outcomes, nil)
		fmt.Fprintf(w, "| %s | %.3f | %d | %.3f |\n", e.Name, s.MRR, s.Top1, s.Recall)
	}
	if len(engines) >= 2 {
		fmt.Fprintln(w)
	}
	for _, e := range engines[min(1, len(engines)):] {
		a, b := Summarize(qs, e.Outcomes, nil), Summarize(qs, engines[0].Outcomes, nil)
		fmt.Fprintf(w, "%s vs %s: MRR@%d %s, top-1 %+d\n", e.Name, engines[0].Name, K, ratio(a.MRR, b.MRR), a.Top1-b.Top1)
	}
	// The ratios of hybrid search, when the three modes ran.
	lex, hyb, sem := byName(engines, "lexical"), byName(engines, "hybrid"), byName(engines, "semantic")
	ratios := lex != nil && hyb != nil && sem != nil
	kinds, by := Kinds(qs)
	if len(kinds) > 0 {
		fmt.Fprintf(w, "\nBy kind (MRR@%d / top-1 / recall@%d):\n\n| kind | n |", K, K)
		for _, e := range engines {
			fmt.Fprintf(w, " %s |", e.Name)
		}
		if ratios {
			fmt.Fprint(w, " hybrid / lexical | hybrid / semantic |")
		}
		fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(engines)+2*boolInt(ratios)))
		for _, k := range append(kinds, "all") {
			idx := by[k]
			if k == "all" {
				idx = nil
			}
			fmt.Fprintf(w, "| %s | %d |", k, len(idx)+len(qs)*boolInt(idx == nil))
			for _, e := range engines {
				s := Summarize(qs, e.Outcomes, idx)
				fmt.Fprintf(w, " %.2f / %d / %.2f |", s.MRR, s.Top1, s.Recall)
			}
			if ratios {
				h := Summarize(qs, hyb.Outcomes, idx).MRR
				fmt.Fprintf(w, " %s | %s |", ratio(h, Summarize(qs, lex.Outcomes, idx).MRR), ratio(h, Summarize(qs, sem.Outcomes, idx).MRR))
			}
			fmt.Fprintln(w)
		}
	}
	for _, e := range engines {
		if len(e.Millis) > 0 {
			fmt.Fprintf(w, "\n%s search time per question: p50 %.1f ms, p99 %.1f ms", e.Name, Percentile(e.Millis, 50), Percentile(e.Millis, 99))
			if len(e.EmbedMillis) > 0 {
				fmt.Fprintf(w, "; the query's embedding call alone p50 %.1f ms (hybrid makes it while it searches the words)", Percentile(e.EmbedMillis, 50))
			}
			fmt.Fprintln(w)
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

// ratio is a/b as "1.06x", "n/a" when b is 0.
func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// byName returns the engine called name, nil when none is.
func byName(engines []*Engine, name string) *Engine {
	for _, e := range engines {
		if e.Name == name {
			return e
		}
	}
	return nil
}
