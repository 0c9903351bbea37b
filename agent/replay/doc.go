// Package replay re-executes a recorded run and says whether it behaved the
// same, and renders a trace as a readable timeline.
//
// Run takes the events of a trace (agent.ReadTrace) and runs the agent again
// with the same run id, session, message, history and configuration, a
// model that answers with the recorded responses and a clock pinned to the
// recorded timestamps; host actions (a stop, a timeout, an answer to
// request_input) happen again at the same point. It then compares the two
// event sequences and reports the first difference. WriteTimeline and
// Summary need no vault.
//
// The package drives the agent only through its exported API; it knows
// nothing of front-ends.
package replay
