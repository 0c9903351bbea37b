// Package llm defines the small model interface every agent loop uses, and
// the models that are not the agent's own policy:
//
//   - OpenAI: any OpenAI-compatible Chat Completions endpoint (OpenAI,
//     Ollama, llama.cpp server, vLLM, LM Studio, OpenRouter) through
//     go-openai, streaming, with tool-call deltas joined by index, retries
//     with backoff on 429/5xx honouring Retry-After, and thinking content
//     (<think> blocks, reasoning_content/reasoning fields) kept out of the
//     visible text; FirstModel asks a server that serves one model for its
//     name;
//   - Scripted: plays model turns from a JSON/YAML fixture for tests and
//     demos, failing loudly when a run asks for more turns.
//
// Embedder turns texts into vectors through the embeddings endpoint of any
// OpenAI-compatible server, with batches, timeouts and the same retries.
//
// ThinkFilter strips thinking blocks from a stream; JSONObject and
// TrailingJSONObject find the JSON a model wrote among its prose. The
// llmtest sub-package is a fake OpenAI-compatible server for tests, chat
// and embeddings, with deterministic embedding models.
//
// Constructors read no environment and make no request (the service package
// builds models from settings and the environment). The package knows
// nothing about the vault, the agent loop or JSON-RPC, and it never logs or
// returns an API key.
package llm
