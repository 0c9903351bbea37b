package search

import "testing"

func TestExplain(t *testing.T) {
	tests := []struct{ query, want string }{
		{"meeting -work", `Find the notes with the word "meeting", ranked by it.
Keep only the notes that match all of these:
  - do not match the word "work"
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{"launch task-todo: [duration:<5] [due:>=2026-03-01]", `Find the notes with the word "launch", ranked by it.
Keep only the notes that match all of these:
  - have an open task
  - have the property "duration" less than 5
  - have the property "due" on or after 2026-03-01
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{`line:(mix -flour) OR [status:"in review"] path:/\d{4}/`, `Match notes by:
  - match any of these:
    - have a line that matches all of these:
      - match the word "mix"
      - do not match the word "flour"
    - match all of these:
      - have the property "status" with a value that matches the phrase "in review"
      - match a path matching the regular expression /\d{4}/
Nothing ranks them: the newest come first.
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{"sourdough 怎么查看磁盘使用情况 磁盘", `Rank notes by the words "sourdough", "怎么查看磁盘使用情况", "磁盘": a note needs one of them, and notes holding more of them, and the rarer ones, come first.
Chinese, Japanese and Korean are written without spaces: "怎么查看磁盘使用情况" is matched by its pairs of neighbouring characters; a note needs a third of them (two at least), and notes holding more of them come first.
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{"sourdough starter", `Rank notes by the words "sourdough", "starter": a note needs one of them, and notes holding more of them, and the rarer ones, come first.
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{"sync colour actor", `Rank notes by the words "sync", "colour", "actor": a note needs one of them, and notes holding more of them, and the rarer ones, come first.
Ranked words also match their other spellings, where notes use them: "sync" as synchronise, synchronize, synchronisation, synchronization; "colour" as color.
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{"how does advantage work", `Rank notes by the words "how", "does", "advantage", "work": a note needs one of them, and notes holding more of them, and the rarer ones, come first.
"work" only frames the question or request: it is not searched for.
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
		{"[aliases:null] -tag:#x/y file:*.md", `Match notes by all of these:
  - have the property "aliases" with no value
  - do not match the tag #x/y, or a tag nested under it (#x/y/...)
  - match a file name matching the pattern "*"
Nothing ranks them: the newest come first.
`},
		{"starter file:.md", `Find the notes with the word "starter", ranked by it.
Keep only the notes that match all of these:
  - match a file name ending in .md (every note)
Words match whole words in any case, accents and English endings aside (call, calls, calling), not inside other words.
`},
	}
	for _, tt := range tests {
		q, err := ParseQuery(tt.query)
		if err != nil {
			t.Fatalf("%q: %v", tt.query, err)
		}
		if got := Explain(q); got != tt.want {
			t.Errorf("Explain(%q) =\n%s\nwant\n%s", tt.query, got, tt.want)
		}
	}
}
