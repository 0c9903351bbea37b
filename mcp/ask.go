package mcp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/reasoning"
	"github.com/vault-agent/vault-agent/search/shared"
	"github.com/vault-agent/vault-agent/service"
	"github.com/vault-agent/vault-agent/vault"
)

// AskInput are ask_vault's arguments.
type AskInput struct {
	Question string `json:"question" jsonschema:"the question about the notes, in plain words"`
	Mode     string `json:"mode,omitempty" jsonschema:"the agent loop: react (default: search and read until it can answer), roa (reason-act-observe), par (plan-act-reflect) or staged"`
}

// AskOutput is ask_vault's result.
type AskOutput struct {
	Answer string `json:"answer" jsonschema:"the answer, citing notes as [[Note]]"`
	// Citations are the notes the answer cites, resolved to paths.
	Citations  []Citation `json:"citations" jsonschema:"the notes the answer cites"`
	StopReason string     `json:"stopReason" jsonschema:"final_answer, or why the run ended early: max_iterations, timeout, stopped"`
	Iterations int        `json:"iterations"`
	ElapsedMs  int64      `json:"elapsedMs"`
	Model      string     `json:"model" jsonschema:"the model that answered (offline is vault-agent's extractive model)"`
}

// Citation is one cited note.
type Citation struct {
	Path  string `json:"path"`
	Title string `json:"title"`
}

func (s *Server) addAskTool() {
	info := s.cfg.Model
	desc := "Ask vault-agent's own agent a question about the notes. It searches and reads the vault by itself and returns an " +
		"answer that cites the notes it used, with their paths. It takes seconds to minutes; progress is reported while it runs, " +
		"and it can be cancelled. Prefer search_notes and read_note when you want to read the notes yourself."
	if info.Offline {
		desc += " The configured model is offline: an extractive model that answers by quoting the most relevant sentences."
	} else {
		desc += fmt.Sprintf(" The configured model is %s; the notes it reads are sent to that model.", info.Name)
	}
	in := schemaFor[AskInput]()
	modes := make([]any, len(service.Modes))
	for i, m := range service.Modes {
		modes[i] = m
	}
	in.Properties["mode"].Enum = modes
	addTool(s, &sdk.Tool{
		Name:        "ask_vault",
		Description: desc,
		InputSchema: in,
		// Reads only; open-world when the notes go to a remote model.
		Annotations: &sdk.ToolAnnotations{Title: "Ask the vault", ReadOnlyHint: true, OpenWorldHint: &[]bool{!info.Offline}[0]},
	}, s.askVault)
}

func (s *Server) askVault(ctx context.Context, req *sdk.CallToolRequest, in AskInput) (*sdk.CallToolResult, AskOutput, error) {
	var out AskOutput
	q := strings.TrimSpace(in.Question)
	if q == "" {
		return nil, out, errors.New("question is empty: ask something about the notes, e.g. \"what did I decide about the database migration?\"")
	}
	token := req.Params.GetProgressToken()
	svc, err := s.vault(ctx, req.Session, token)
	if err != nil {
		return nil, out, err
	}
	var sink agent.Sink
	if token != nil && req.Session != nil {
		// Progress must increase; steps come from the run's goroutine, but
		// guard anyway so a future caller cannot break that.
		var mu sync.Mutex
		n := 0
		onStep := func(step string) {
			mu.Lock()
			n++
			p := n
			mu.Unlock()
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(p), Message: step})
		}
		// The steps are the reasoning block's lines, as the command line
		// prints them (tagged [Plan], [Act]... when the planner is on).
		planner := svc.Settings().Planner
		sink = reasoning.NewObserver(reasoning.Config{Planner: planner != nil && *planner, OnStep: onStep})
	}
	// Cancelling ctx (notifications/cancelled) stops the run.
	res, err := svc.Run(ctx, service.RunRequest{Message: q, Settings: service.Settings{Mode: in.Mode}}, sink)
	if err != nil {
		if ctx.Err() != nil {
			return nil, out, ctx.Err()
		}
		return nil, out, fmt.Errorf("the agent could not run: %v", err)
	}
	if ctx.Err() != nil {
		// Cancelled by the client: nobody reads this result.
		return nil, out, ctx.Err()
	}
	if res.StopReason == agent.StopError {
		return nil, out, fmt.Errorf("the agent failed: %s", res.Error)
	}
	out = AskOutput{
		Answer: strings.TrimSpace(res.Answer), Citations: citations(svc.Index(), res.Answer), StopReason: res.StopReason,
		Iterations: res.Iterations, ElapsedMs: res.ElapsedMs, Model: s.cfg.Model.Name,
	}
	return result(renderAnswer(out)), out, nil
}

var wikilinkRE = regexp.MustCompile(`\[\[([^\[\]]+)\]\]`)

// citations resolves the [[links]] of an answer to notes, each once.
func citations(ix *shared.Index, answer string) []Citation {
	paths := ix.Paths()
	out := []Citation{}
	seen := map[string]bool{}
	for _, m := range wikilinkRE.FindAllStringSubmatch(answer, -1) {
		p, err := vault.LookupIn("[["+m[1]+"]]", paths)
		if err != nil || seen[p] {
			continue
		}
		seen[p] = true
		m, _ := ix.Note(p)
		out = append(out, Citation{Path: p, Title: m.Title})
	}
	return out
}
