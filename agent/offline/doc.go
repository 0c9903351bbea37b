// Package offline is the offline model: a deterministic extractive policy,
// the default when no model provider is configured, that needs no network
// and no key. It reads the conversation of each call (the goal, the tools
// offered, the tool calls made so far and their results) and produces the
// next turn, so the agent's real loops and tools do the work: plan, search,
// read the best notes, and answer by quoting them with [[note]] citations.
//
// It is a policy for this agent: it knows the agent's tool names and
// result shapes, the phase tags of its loops (agent.FindTag) and the blocks
// the planner adds, and imports agent, planner and search for them. It
// never calls tools itself and keeps no state between calls.
package offline
