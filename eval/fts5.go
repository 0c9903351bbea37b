package eval

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

//go:embed fts5.py
var fts5Script string

// ErrNoPython is returned by FTS5 when python3 is not on the PATH.
var ErrNoPython = errors.New("python3 not found on PATH (the FTS5 baseline runs in python3's sqlite3 module)")

// FTS5 indexes the vault at root in SQLite FTS5 and returns the top K
// paths of every question (see doc.go for the exact baseline), and the
// number of notes it indexed.
func FTS5(ctx context.Context, root string, questions []string) ([][]string, int, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, 0, ErrNoPython
	}
	in, err := json.Marshal(map[string]any{"vault": root, "questions": questions, "k": K})
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.CommandContext(ctx, py, "-c", fts5Script)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("fts5 baseline: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res struct {
		Notes   int        `json:"notes"`
		Results [][]string `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, 0, fmt.Errorf("fts5 baseline: bad output: %w", err)
	}
	if len(res.Results) != len(questions) {
		return nil, 0, fmt.Errorf("fts5 baseline: %d answers for %d questions", len(res.Results), len(questions))
	}
	return res.Results, res.Notes, nil
}
