// Package llm defines the small model interface every agent loop uses, and
// its implementations:
//
//   - OpenAI: any OpenAI-compatible Chat Completions endpoint (OpenAI,
//     Ollama, llama.cpp server, vLLM, LM Studio, OpenRouter) through
//     go-openai, streaming, with tool-call deltas joined by index, retries
//     with backoff on 429/5xx honouring Retry-After, and thinking content
//     (<think> blocks, reasoning_content/reasoning fields) kept out of the
//     visible text;
//   - Offline: the default without a key, a deterministic extractive policy
//     that drives the real tools (plan, localSearch, readNote) and answers by
//     quoting the notes with [[note]] citations; its doc comment lists the
//     prompt tags ([phase:...], [stage:...]) other loops use;
//   - Scripted: plays model turns from a JSON/YAML fixture for tests and
//     demos, failing loudly when a run asks for more turns.
//
// New picks one from a Config. ThinkFilter strips thinking blocks from a
// stream. The llmtest sub-package is a fake OpenAI-compatible server for
// tests.
//
// The package knows nothing about the vault, the agent loop or JSON-RPC, and
// it never logs or returns an API key.
package llm
