// Package service is vault-agent's composition root: the one place that
// puts the vault, its index, the watcher, the model and the agent together,
// for every front-end (the JSON-RPC server, the command line, and any
// other) to use the same way.
//
//   - Open opens one vault from Options: it builds the agent's model from
//     the settings, opens the vault and its index, reconciles the index with
//     the disk (reporting progress), starts the watcher and the agent.
//     Service.Close undoes all of it. A front-end that serves several vaults
//     opens one Service each. Start does the same with the reconcile in the
//     background (Opening.Wait waits for it, reporting progress), for a
//     front-end that must answer before a first index is built.
//   - Settings are the one set of knobs every front-end shares (model, mode,
//     limits, planner, trace, excludes), with Merge and Validate; their wire
//     forms belong to the front-ends.
//   - Service.Run runs the agent once with a run's settings over the
//     vault's: it builds the run's own model when those name one, writes
//     the trace they name, and strips a host's reasoning markers from the
//     history.
//   - NewModel builds a model from settings and an Env.
//
// It is the only package that reads the environment (Env, ProcessEnv:
// OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL and the user cache dir) and
// the only one that chooses where files go: the index (Env.DefaultIndexPath)
// and the plan review store beside it. It never writes into the vault and
// never logs or returns an API key. It knows no wire protocol.
package service
