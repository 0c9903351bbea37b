package search

import (
	"slices"
	"sort"
	"time"

	"github.com/olebedev/when/rules"
	"github.com/olebedev/when/rules/common"
	"github.com/olebedev/when/rules/en"
)

// whenRules are olebedev/when's English and language-neutral rules. The
// library's own parser lives in its root package, whose init builds
// parsers for every language it knows (Russian, Dutch, Portuguese): over a
// megabyte of compiled expressions in every process, front-ends that
// never read a date included. whenDay applies the two rule sets the way
// that parser does.
var whenRules = slices.Concat(en.All, common.All)

// whenOptions are the library parser's defaults: matches at most five
// bytes apart form one expression, applied in rule order.
var whenOptions = &rules.Options{Distance: 5, MatchByOrder: true}

// whenDay is the instant expr names relative to now ("next tuesday", "3
// days ago", "March 5th"), and false when no rule reads it.
func whenDay(expr string, now time.Time) (time.Time, bool) {
	var matches []*rules.Match
	for i, r := range whenRules {
		if m := r.Find(expr); m != nil {
			m.Order = float64(i)
			matches = append(matches, m)
		}
	}
	if len(matches) == 0 {
		return time.Time{}, false
	}
	// The expression is the first run of matches that lie close together.
	sort.Sort(rules.MatchByIndex(matches))
	left, right := matches[0].Left, matches[0].Right
	for i, m := range matches {
		if m.Left > right+whenOptions.Distance {
			matches = matches[:i]
			break
		}
		right = m.Right
	}
	sort.Sort(rules.MatchByOrder(matches))
	ctx := &rules.Context{Text: expr[left:right]}
	applied := false
	for _, m := range matches {
		ok, err := m.Apply(ctx, whenOptions, now)
		if err != nil {
			return time.Time{}, false
		}
		applied = applied || ok
	}
	if !applied {
		return time.Time{}, false
	}
	t, err := ctx.Time(now)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
