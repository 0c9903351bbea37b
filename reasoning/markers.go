package reasoning

import "github.com/vault-agent/vault-agent/reasoning/marker"

// The marker format lives in package marker, shared with the service (which
// strips markers from host history); these names keep the block's API whole.
type (
	// Status is the state of a reasoning block.
	Status = marker.Status
	// Marker is one parsed marker.
	Marker = marker.Marker
)

// Block states, in the order a run normally goes through them.
const (
	StatusIdle      = marker.StatusIdle
	StatusReasoning = marker.StatusReasoning
	StatusCollapsed = marker.StatusCollapsed
	StatusComplete  = marker.StatusComplete
)

// Serialize, Parse and Strip are marker.Serialize, marker.Parse and
// marker.Strip.
var (
	Serialize = marker.Serialize
	Parse     = marker.Parse
	Strip     = marker.Strip
)
