package offline

import (
	"strings"
	"testing"

	"github.com/vault-agent/vault-agent/agent"
)

func TestLinkQuestion(t *testing.T) {
	tests := []struct {
		goal, note string
		back       bool
	}{
		{"which notes link to TCP?", "TCP", true},
		{"what links to [[Sockets]]", "Sockets", true},
		{"what are the backlinks of the note Transport Layer", "Transport Layer", true},
		{"notes that point to “Raft Consensus”", "Raft Consensus", true},
		{"what does Sockets link to?", "Sockets", false},
		{"outgoing links of [[Reading List|my list]]", "Reading List", false},
		{"how do I link to a heading", "", false},
		{"what is a link", "", false},
	}
	for _, tt := range tests {
		st := &convState{goal: tt.goal, tools: true, offered: map[string]bool{agent.ToolNoteLinks: true}}
		if note, back := st.linkQuestion(); note != tt.note || back != tt.back {
			t.Errorf("linkQuestion(%q) = %q, %v; want %q, %v", tt.goal, note, back, tt.note, tt.back)
		}
	}
}

var linkVault = map[string]string{
	"net/Transport.md": "# Transport\n\nSee [[TCP]] and [[TCP#Handshake]], then [[UDP]] and [[QUIC]]. ![[stack.png]]\n",
	"net/TCP notes.md": "# TCP notes\n\nMore on [[TCP]].\n",
	"net/Tcp.md":       "# TCP\n\nReliable.\n\n## Handshake\n\nSYN, SYN-ACK, ACK.\n",
	"net/Udp.md":       "# UDP\n\nUnreliable datagrams; see [[Transport]].\n",
	"home/Garden.md":   "# Garden\n\nTomatoes.\n",
}

// TestLinkQuestionListsTheLinks: the notes linking to a note, and the
// notes it links to, are listed from getNoteLinks; a name no note has is
// searched as any other question.
func TestLinkQuestionListsTheLinks(t *testing.T) {
	answerStartsWith(t, linkVault, "which notes link to TCP?",
		"2 notes link to [[Tcp]]:\n\n- [[TCP notes]]\n- [[Transport]] (2 links)\n\nSources: [[Tcp]], [[TCP notes]], [[Transport]]")
	answerStartsWith(t, linkVault, "what does Transport link to?",
		"[[Transport]] links to 5 targets:\n\n- [[Tcp]]\n- [[Tcp]] (its section Handshake)\n- [[Udp]]\n- not yet a note: QUIC\n- embedded files: stack.png\n")
	answer := answerOver(t, linkVault, "which notes link to tomatoes")
	if strings.Contains(answer, "link to") || !strings.Contains(answer, "[[Garden]]") {
		t.Errorf("a name no note has was not searched:\n%s", answer)
	}
}
