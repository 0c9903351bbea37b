package planner

// Tags of the blocks the planner adds to a conversation (a model, such as
// the offline policy, recognises them by these): the plan review feedback
// (FeedbackBlock), the goal and plan reminder (Reminder) and the
// continuation message (ContinuationMessage), each written
// <tag>...</tag>.
const (
	TagFeedback     = "plan_feedback"
	TagReminder     = "goal_plan_reminder"
	TagContinuation = "plan-continuation"
)

// ToolDescription is the write_todos tool description offered to the model.
const ToolDescription = `Write your execution checklist for a multi-step task. Send the FULL current list every time: it replaces the previous one (1-8 todos; id 1-40 characters; content 1-140 characters; status pending, in_progress or completed; optional focus up to 40 and note up to 200 characters). Use it when the task needs 2 or more meaningful actions, before the first expensive tool call. Keep todos short and action-oriented, keep one todo in_progress, and do not rewrite an unchanged list. Planning is not progress: after writing the plan, execute the next step with a real tool.`

// ProgressToolDescription is the plan_progress tool description.
const ProgressToolDescription = `Record progress on your write_todos plan. After finishing a step, call it with step_id (the todo you completed), an optional one-sentence step_summary, and optionally next_step (the todo you start next; by default the first pending one). When every step is done, call it with plan_status="completed", then give the final answer. Needs an existing plan and must be the ONLY tool call in its turn.`

// PromptGuidance is the planner section of the agent system prompt,
// included only when the planner is enabled.
const PromptGuidance = `## Planning
You have two planning tools: write_todos (your checklist) and plan_progress (step bookkeeping).
1. Use write_todos for multi-step tasks (2 or more meaningful actions). Answer simple questions directly, without a plan.
2. For a non-trivial task, call write_todos before the first expensive tool (search, reading notes).
3. Keep todos short and action-oriented ("Search notes for X", "Read the top 3 notes", "Write the answer").
4. Update statuses as execution progresses: after finishing a step, call plan_progress(step_id=..., step_summary=...), alone in its turn, or send the updated list with write_todos when the plan itself changes.
5. Do not repeatedly rewrite unchanged todos. Planning alone is not progress: after two planning-only turns, planner calls are refused until you run a real tool.
6. Do not stop while steps remain unfinished. When every step is done, call plan_progress(plan_status="completed") and then give the final answer.`
