package agent

import "regexp"

// Names of the agent's own tools (the planner's are planner.ToolWriteTodos
// and planner.ToolPlanProgress).
const (
	ToolLocalSearch  = "localSearch"
	ToolRelated      = "relatedNotes"
	ToolReadNote     = "readNote"
	ToolFileTree     = "getFileTree"
	ToolTagList      = "getTagList"
	ToolTimeRange    = "getTimeRangeMs"
	ToolCurrentTime  = "getCurrentTime"
	ToolRequestInput = "request_input"
)

// Phase tags. The system message of every model call of the roa, par and
// staged loops carries one, so that a model can tell what the call asks
// for (the offline policy answers by them): reason, act and observe (roa;
// par's act and reflection use act and observe), plan (par's typed plan),
// and StageTag(name) for a stage of a policy. React calls carry none.
const (
	TagReason  = "[phase:reason]"
	TagAct     = "[phase:act]"
	TagObserve = "[phase:observe]"
	TagPlan    = "[phase:plan]"
)

// StageTag is the tag of the system message of stage name.
func StageTag(name string) string { return "[stage:" + name + "]" }

var reTag = regexp.MustCompile(`\[(phase|stage):([A-Za-z0-9_.\-]+)\]`)

// FindTag returns the first phase or stage tag in a system message: the
// phase ("reason", "act", "observe", "plan"), or "stage" and the stage's
// name. ok is false when there is none. Unknown phases are passed over.
func FindTag(system string) (phase, stage string, ok bool) {
	for _, m := range reTag.FindAllStringSubmatch(system, -1) {
		if m[1] == "stage" {
			return "stage", m[2], true
		}
		switch m[2] {
		case "reason", "observe", "act", "plan":
			return m[2], "", true
		}
	}
	return "", "", false
}
