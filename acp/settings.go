package acp

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/vault-agent/vault-agent/agent"
	"github.com/vault-agent/vault-agent/service"
)

// modeInfo describes one agent loop as an ACP session mode.
type modeInfo struct {
	id, name, description string
}

// modes are the agent loops offered as session modes, in menu order.
var modes = []modeInfo{
	{agent.ModeReact, "ReAct", "Search and read notes with tool calls, then answer (default, fastest)."},
	{agent.ModeROA, "Reason · Act · Observe", "Each step reasons about what to do next, acts with tools and observes the results; more deliberate."},
	{agent.ModePAR, "Plan · Act · Reflect", "Writes a typed plan first, runs each step with its tools and checks it against the plan's exit criteria."},
	{agent.ModeStaged, "Staged", "Runs fixed stages (frame the goal, decompose, search and read, synthesize) with guardrails per stage."},
}

func validMode(id string) bool {
	return slices.ContainsFunc(modes, func(m modeInfo) bool { return m.id == id })
}

func modeIDs() string {
	ids := make([]string, len(modes))
	for i, m := range modes {
		ids[i] = m.id
	}
	return strings.Join(ids, ", ")
}

// Session config option ids. Mode is also offered as the session mode, for
// clients that do not know config options.
const (
	optMode          = "mode"
	optPlanner       = "planner"
	optMaxIterations = "maxIterations"
)

// iterationChoices are the max-iterations values offered in the select; a
// client may set any value from 1 to 50 through _meta.
var iterationChoices = []int{3, 5, 10, 15, 20, 30, 50}

func modeState(current string) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current)}
	for _, m := range modes {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m.id), Name: m.name, Description: sdk.Ptr(m.description)})
	}
	return st
}

// sessionDefaults fills in what a session shows as its settings: the mode
// (react) and max iterations (10, at most 50) when s leaves them open.
func sessionDefaults(s service.Settings) service.Settings {
	if s.Mode == "" {
		s.Mode = agent.ModeReact
	}
	if s.MaxIterations <= 0 {
		s.MaxIterations = 10
	}
	s.MaxIterations = min(s.MaxIterations, 50)
	return s
}

// configOptions renders s as the session's complete config options. The
// planner is a select ("on"/"off") so that clients without boolean config
// options can show it.
func configOptions(s service.Settings) []sdk.SessionConfigOption {
	modeOpts := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(modes))
	for _, m := range modes {
		modeOpts = append(modeOpts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.id), Name: m.name, Description: sdk.Ptr(m.description)})
	}
	iters := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(iterationChoices)+1)
	for _, n := range iterationChoices {
		iters = append(iters, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(strconv.Itoa(n)), Name: strconv.Itoa(n)})
	}
	if !slices.Contains(iterationChoices, s.MaxIterations) {
		// A value set through _meta stays selectable.
		iters = append(iters, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(strconv.Itoa(s.MaxIterations)), Name: strconv.Itoa(s.MaxIterations)})
		slices.SortFunc(iters, func(a, b sdk.SessionConfigSelectOption) int {
			x, _ := strconv.Atoi(string(a.Value))
			y, _ := strconv.Atoi(string(b.Value))
			return x - y
		})
	}
	planner := "off"
	if isTrue(s.Planner) {
		planner = "on"
	}
	sel := func(id, name, desc string, cat *sdk.SessionConfigOptionCategory, current string, opts sdk.SessionConfigSelectOptionsUngrouped) sdk.SessionConfigOption {
		return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
			Type: "select", Id: sdk.SessionConfigId(id), Name: name, Description: sdk.Ptr(desc), Category: cat,
			CurrentValue: sdk.SessionConfigValueId(current), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts},
		}}
	}
	return []sdk.SessionConfigOption{
		sel(optMode, "Mode", "The agent loop that answers.", sdk.Ptr(sdk.SessionConfigOptionCategoryMode), s.Mode, modeOpts),
		sel(optPlanner, "Planner", "Keep a visible to-do plan (write_todos) while working.", nil, planner, sdk.SessionConfigSelectOptionsUngrouped{
			{Value: "on", Name: "On", Description: sdk.Ptr("Plan the work as to-dos and show progress.")},
			{Value: "off", Name: "Off", Description: sdk.Ptr("No plan; fewer model calls.")},
		}),
		sel(optMaxIterations, "Max iterations", "Model turns before the agent stops (the turn then ends with max_turn_requests).", nil, strconv.Itoa(s.MaxIterations), iters),
	}
}

// setOption applies one config option value to s.
func setOption(s *service.Settings, id, value string) error {
	switch id {
	case optMode:
		if !validMode(value) {
			return fmt.Errorf("mode must be one of %s, got %q", modeIDs(), value)
		}
		s.Mode = value
	case optPlanner:
		switch value {
		case "on", "true":
			s.Planner = sdk.Ptr(true)
		case "off", "false":
			s.Planner = sdk.Ptr(false)
		default:
			return fmt.Errorf("planner must be on or off, got %q", value)
		}
	case optMaxIterations:
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 50 {
			return fmt.Errorf("maxIterations must be a whole number from 1 to 50, got %q", value)
		}
		s.MaxIterations = n
	default:
		return fmt.Errorf("unknown config option %q (known: %s, %s, %s)", id, optMode, optPlanner, optMaxIterations)
	}
	return nil
}

// MetaKey is the _meta key under which session/new and session/prompt may
// carry vault-agent settings:
//
//	"_meta": {"vaultAgent": {"mode": "roa", "enableAgentPlannerV0": true, "maxIterations": 25, "timeoutMs": 120000}}
//
// The keys are the same as serve's settings. In session/new they become the
// session's settings; in session/prompt they apply to that turn only.
const MetaKey = "vaultAgent"

// applyMeta applies the vault-agent settings found in meta to s and returns
// the keys it did not know.
func applyMeta(s *service.Settings, meta map[string]any) (unknown []string, err error) {
	raw, ok := meta[MetaKey]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("_meta.%s must be an object", MetaKey)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		field := "_meta." + MetaKey + "." + k
		switch k {
		case "mode":
			str, ok := v.(string)
			if !ok || !validMode(str) {
				return unknown, fmt.Errorf("%s must be one of %s, got %v", field, modeIDs(), v)
			}
			s.Mode = str
		case "enableAgentPlannerV0", "planner":
			b, ok := v.(bool)
			if !ok {
				return unknown, fmt.Errorf("%s must be a boolean, got %v", field, v)
			}
			s.Planner = &b
		case "maxIterations", "timeoutMs":
			n, ok := v.(float64)
			if !ok {
				return unknown, fmt.Errorf("%s must be a number, got %v", field, v)
			}
			// Checked before it is made a duration: 9e15 ms would overflow.
			var se *service.SettingError
			if err := service.CheckNumber(k, n); errors.As(err, &se) {
				return unknown, fmt.Errorf("%s %s", field, se.Msg)
			}
			switch {
			case n == 0: // the default: the session's value stays
			case k == "maxIterations":
				s.MaxIterations = int(n)
			default:
				s.Timeout = time.Duration(n) * time.Millisecond
			}
		default:
			unknown = append(unknown, k)
		}
	}
	return unknown, nil
}

func isTrue(p *bool) bool { return p != nil && *p }

// capText cuts s to at most max bytes at a rune boundary.
func capText(s string, max int) (string, bool) {
	if max <= 0 || len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
