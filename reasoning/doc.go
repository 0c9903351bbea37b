// Package reasoning renders an agent run as the "reasoning block" a host
// shows above the answer: a state machine (idle -> reasoning -> collapsed ->
// complete) with a timer and a list of short operational steps, serialized
// into the message content as
//
//	<!--AGENT_REASONING:{status}:{elapsedSeconds}:{stepsJSON}-->
//
// followed by "\n\n" and the answer so far.
//
// The marker is a contract with hosts that parse it with the JavaScript
// regex /<!--AGENT_REASONING:(\w+):(\d+):(.+?)-->/ and JSON.parse(group 3).
// Serialize guarantees that stepsJSON never contains a line terminator, '<',
// '>', '&' or "--", so hostile step text can neither end the HTML comment nor
// cut the lazy capture short. Parse emulates the host regex exactly; Strip
// removes markers (and legacy TOOL_CALL banners) before host history is
// shown to a model.
//
// Observer is a view of the agent's event stream (an agent.Sink): it turns
// events into steps (tagged [Plan] [Act] [Obs] [Reflect] when the planner is
// on), collapses the block when the answer streams, completes it when the
// run ends (saying what happened on stop, timeout or error), and publishes
// the whole message only when it changed, with a 100 ms timer that refreshes
// the elapsed seconds. LinePrinter is the CLI's terminal view of the same
// steps.
//
// The package imports agent only for its event types (and planner for the
// planner's tool names and limits). It must not drive the agent, call tools
// or models, or hold the run's context; steps are operational summaries
// supplied by the agent, never hidden chain-of-thought.
package reasoning
