// Package service is vault-agent's composition root: the one place that
// puts the vault, its index, the watcher, the model and the agent together,
// for every front-end (the JSON-RPC server, the command line, and any
// other) to use the same way.
//
//   - Open opens one vault from Options: it layers the front-end's settings
//     over the environment's and the config file's (Env.Layered), opens the
//     vault and its index, reconciles the index with the disk (reporting
//     progress), starts the watcher and the agent. No model setting can make
//     it fail: the model is built by the runs that use it.
//     Service.Close undoes all of it. A front-end that serves several vaults
//     opens one Service each. Start does the same with the reconcile in the
//     background (Opening.Wait waits for it, reporting progress), for a
//     front-end that must answer before a first index is built.
//   - Settings are the one set of knobs every front-end shares (model, mode,
//     limits, planner, trace, excludes), with Merge and Validate; their wire
//     forms belong to the front-ends.
//   - Service.Run runs the agent once with a run's settings over the
//     vault's: it builds the run's model (its own when those name one; one
//     that cannot be used fails that run alone, with a ModelError saying
//     what chose it), writes the trace they name, and strips a host's
//     reasoning markers from the history.
//   - ChooseModel is the one rule for the chat model: offline unless a
//     model or a provider is named; NewModel builds one at once.
//
// It is the only package that reads the environment (Env, ProcessEnv:
// OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL, the VAULT_AGENT_*
// variables, the config file, the user cache dir and the working
// directory) and
// the only one that chooses where files go: the index (Env.DefaultIndexPath)
// and the plan review store beside it. It never writes into the vault and
// never logs or returns an API key. It knows no wire protocol.
package service
