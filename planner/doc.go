// Package planner holds the plans an agent run can follow and the rules
// around them:
//
//   - write_todos (State.Apply / State.ApplyJSON): the model's checklist, with
//     replace semantics, validated against a JSON schema generated from
//     WriteTodosArgs by google/jsonschema-go (limits set on the generated
//     schema, lengths counted in characters), plus unique ids. Each change is
//     a new revision; results are {ok, revision, todoCount, inProgress}.
//   - plan_progress (State.Progress, ValidateSolo): step bookkeeping inside a
//     revision; it never makes a new revision.
//   - OveruseGuard: at most 2 consecutive planner-only iterations, then the
//     tool error ErrOveruse ("planner_overuse_execute_next_step").
//   - Continuation: the plan-aware termination guard (at most 5
//     continuations per revision, only for plans of 2+ todos).
//   - AppendReminder: the goal+plan reminder, every 3rd iteration, appended
//     once to the last tool message of the batch.
//   - ReviewStore and FeedbackBlock: pending plan reviews persisted in an
//     embedded bbolt file, keyed by session id, with a TTL.
//   - CapsuleBuilder: the end-of-run context capsule.
//   - TypedPlan, PlanHistory, DiffPlans: the typed, versioned plans of the
//     plan-act-reflect loop (plan.v1, plan.v2...), validated against the
//     agent's tool names, diffed and rolled back.
//   - Policy, ParsePolicy, LoadPolicy: the stage policies of the staged loop
//     (ordered stages with prompts, output schemas, guardrails and
//     transitions), checked with every problem located, and the embedded
//     default.
//
// The package is pure state and rules: it does not call models, run tools,
// emit events, read the vault or know about JSON-RPC, and it must not import
// agent, llm, rpc or search (agent imports planner). Model-facing failures are
// returned as errors whose text is meant to be the tool result; the agent
// decides how to surface them. Only ReviewStore does I/O, on its own file,
// and LoadPolicy reads the policy file it is given.
//
// How the agent loop uses it, per iteration:
//
//  1. After the model call, with the names of its tool calls: if
//     guard.Step(names) is true, answer every planner call with ErrOveruse
//     (other calls run); if ValidateSolo(names) fails, answer plan_progress
//     with its error.
//  2. Run write_todos with State.ApplyJSON and plan_progress with
//     State.ProgressJSON; marshal the result as the tool message, or use the
//     error text as the tool error.
//  3. Before adding the batch's tool messages, call AppendReminder with
//     pointers to their contents.
//  4. On a text answer without tool calls: if cont.ShouldContinue(snapshot),
//     keep the text, add the cont.Next message and iterate again instead of
//     finalizing.
//
// State is safe for concurrent use; OveruseGuard and Continuation belong to
// one run's goroutine.
package planner
