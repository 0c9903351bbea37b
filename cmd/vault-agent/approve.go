package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// terminalApprover asks about each edit of `ask --allow-edits` on the
// terminal: it prints the diff and reads y/N. Without a terminal it
// refuses, unless --yes approved every edit in advance.
type terminalApprover struct {
	out io.Writer // where the diff and the question go (stderr)
	tty bool      // in and out are a terminal
	yes bool      // --yes: apply without asking

	once  sync.Once
	lines chan string // the lines read from in, by one goroutine
	in    io.Reader
}

func newTerminalApprover(in io.Reader, out io.Writer, tty, yes bool) *terminalApprover {
	return &terminalApprover{in: in, out: out, tty: tty, yes: yes}
}

// Approve shows the proposal and waits for the answer, or for ctx to end
// (the request-input timeout, Ctrl-C).
func (a *terminalApprover) Approve(ctx context.Context, p *service.EditProposal) (service.Decision, error) {
	// The diff is escaped already; escaping again costs nothing and keeps
	// the terminal safe whatever made the proposal.
	diff := vault.Printable(p.Diff)
	fmt.Fprintf(a.out, "\nThe agent proposes to %s %s:\n%s", verbOf(p.Op, p.Create), vault.Printable(p.Path), diff)
	if !strings.HasSuffix(diff, "\n") {
		fmt.Fprintln(a.out)
	}
	if p.Hidden {
		fmt.Fprintln(a.out, `Warning: this edit writes control or text-direction characters, shown escaped above (\r, \x1b, \u202e...); the note gets the characters themselves.`)
	}
	switch {
	case a.yes:
		fmt.Fprintln(a.out, "Applying it (--yes).")
		return service.Decision{Approved: true}, nil
	case !a.tty:
		fmt.Fprintln(a.out, "Not applied: there is no terminal to ask on (give --yes to apply edits without asking).")
		return service.Decision{Reason: "no terminal to ask for approval on, and --yes was not given"}, nil
	}
	a.once.Do(func() {
		a.lines = make(chan string)
		go func() {
			sc := bufio.NewScanner(a.in)
			for sc.Scan() {
				a.lines <- sc.Text()
			}
			close(a.lines)
		}()
	})
	fmt.Fprint(a.out, "Apply this edit? [y/N] ")
	select {
	case line, ok := <-a.lines:
		if ok {
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return service.Decision{Approved: true}, nil
			}
		}
		return service.Decision{Reason: "the person answered no"}, nil
	case <-ctx.Done():
		fmt.Fprintln(a.out)
		return service.Decision{}, context.Cause(ctx)
	}
}

func verbOf(op string, create bool) string {
	switch {
	case create:
		return "create"
	case op == "set_properties":
		return "set properties of"
	default:
		return "change"
	}
}
