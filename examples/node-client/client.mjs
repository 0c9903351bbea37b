// An example host for `vault-agent serve`, written the way an editor plugin
// would: vscode-jsonrpc over the sidecar's stdin/stdout (Content-Length
// framing). It initializes on a vault, searches, reads a note, runs the
// agent while rendering its agent/message notifications with the same regex
// the Obsidian plugin uses, runs it with allowEdits against a fake model that
// proposes an edit (answering vault/applyEdit: approved, then refused), then
// shuts down. Any failure exits non-zero. The edit writes into VAULT_DIR: use
// a copy.
//
//   VAULT_AGENT_BIN=/path/to/vault-agent node client.mjs   # a built binary
//   node client.mjs                                         # go run ./cmd/vault-agent
//
// Then it starts the sidecar again in the environments people have: with
// OPENAI_API_KEY exported and no model, and with OPENAI_BASE_URL at a port
// nothing listens on (both answer offline), and with a model named at that
// port (the run fails alone, saying which variable chose the model).
//
// Environment: VAULT_AGENT_BIN (binary, absolute or relative to the folder
// the client is started in; default `go run`), VAULT_DIR (vault; default
// testdata/vault), VAULT_AGENT_INDEX (index folder; default a temp folder),
// CLIENT_TIMEOUT_MS (default 120000), QUIET=1 (less output).

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as rpc from "vscode-jsonrpc/node";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..", "..");
const vault = path.resolve(process.env.VAULT_DIR ?? path.join(repoRoot, "testdata", "vault"));
const tmpIndex = process.env.VAULT_AGENT_INDEX ? null : mkdtempSync(path.join(tmpdir(), "vault-agent-node-"));
const indexDir = process.env.VAULT_AGENT_INDEX ?? path.join(tmpIndex, "index");
const timeoutMs = Number(process.env.CLIENT_TIMEOUT_MS ?? 120000);
const quiet = process.env.QUIET === "1";

// The host's marker regex (see PROTOCOL.md, agent/message): status, elapsed seconds, steps JSON.
const MARKER = /<!--AGENT_REASONING:(\w+):(\d+):(.+?)-->/;

const log = (...args) => {
  if (!quiet) console.log(...args);
};

class Failure extends Error {}
function check(cond, msg) {
  if (!cond) throw new Failure(msg);
}

// The sidecar runs in the repository root; a relative VAULT_AGENT_BIN is
// relative to where the client was started, so it is resolved first (a bare
// name is looked up on PATH).
const bin = process.env.VAULT_AGENT_BIN;
const [command, args] = bin
  ? [bin.includes("/") || bin.includes(path.sep) ? path.resolve(bin) : bin, ["serve"]]
  : ["go", ["run", "./cmd/vault-agent", "serve"]];

const child = spawn(command, args, { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
child.on("error", (err) => {
  console.error(`cannot start ${command}: ${err.message}`);
  process.exit(2);
});

const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout),
  new rpc.StreamMessageWriter(child.stdin),
);

const progress = [];
const warnings = [];
const messages = new Map(); // runId -> last parsed agent/message
const updates = new Map(); // runId -> update types in order

conn.onNotification("vault/indexProgress", (p) => progress.push(p));
conn.onNotification("window/logMessage", (p) => {
  warnings.push(p);
  log(`[sidecar ${p.type === 1 ? "error" : "warning"}] ${p.message}`);
});
conn.onNotification("agent/update", (p) => {
  check(typeof p.runId === "string" && typeof p.updateType === "string" && typeof p.step === "number",
    `malformed agent/update ${JSON.stringify(p)}`);
  if (!updates.has(p.runId)) updates.set(p.runId, []);
  updates.get(p.runId).push(p.updateType);
  if (p.updateType === "tool_start") log(`  [tool] ${p.summary || p.tool}`);
});
conn.onNotification("agent/message", (p) => {
  messages.set(p.runId, parseMessage(p.content));
});
conn.onError(([err]) => console.error("connection error:", err));
conn.listen();

// parseMessage splits a host message into the reasoning block and the answer.
function parseMessage(content) {
  const m = MARKER.exec(content);
  if (!m) return { status: null, elapsed: 0, steps: [], answer: content };
  const steps = JSON.parse(m[3]);
  check(Array.isArray(steps) && steps.every((s) => typeof s === "string"), `steps are not strings: ${m[3]}`);
  const answer = content.slice(m.index + m[0].length).replace(/^\n\n/, "");
  return { status: m[1], elapsed: Number(m[2]), steps, answer };
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (err) {
    check(err instanceof rpc.ResponseError, `${what}: ${err}`);
    check(err.code === code, `${what}: code ${err.code} (${err.message}), want ${code}`);
    log(`${what}: ${err.code} ${err.message}`);
    return err;
  }
  throw new Failure(`${what}: succeeded, want error ${code}`);
}

async function main() {
  await expectError(conn.sendRequest("vault/status"), -32002, "status before initialize");

  const init = await conn.sendRequest("initialize", {
    vault,
    index: indexDir,
    settings: { provider: "offline", maxIterations: 6 },
    clientInfo: { name: "node-client", version: "0.1.0" },
  });
  log(`initialized ${init.serverInfo.name} ${init.serverInfo.version}: ${init.index.notes} notes in ${init.index.tookMs} ms`);
  check(init.index.notes > 0, "no notes indexed");
  check(init.capabilities.methods.includes("agent/run"), "agent/run missing from capabilities");
  check(init.tools.length > 0, "no tools listed");
  const last = progress.at(-1);
  check(last && last.done === last.total, `final progress ${JSON.stringify(last)}`);

  const found = await conn.sendRequest("vault/search", { query: "sourdough starter", limit: 5 });
  check(found.results.length > 0, "search found nothing");
  log(`search: ${found.total} hits in ${found.tookMs} ms; top: ${found.results[0].path}`);

  const note = await conn.sendRequest("vault/readNote", { path: found.results[0].path });
  check(note.content.length > 0 && note.chunkCount >= 1, "empty note");
  log(`readNote ${note.path}: chunk ${note.chunkIndex + 1}/${note.chunkCount}, ${note.headings.length} headings`);

  await expectError(conn.sendRequest("vault/readNote", { path: "../../etc/passwd" }), -32602, "path escape");
  await expectError(conn.sendRequest("vault/search", { query: "x", limit: "five" }), -32602, "wrong type");
  await expectError(conn.sendRequest("vault/nope"), -32601, "unknown method");

  await runAgent();
  await editRuns();

  const status = await conn.sendRequest("vault/status");
  check(status.notes === init.index.notes, `status ${JSON.stringify(status)}`);

  await conn.sendRequest("shutdown");
  await conn.sendNotification("exit");
  const { code, signal } = await exited;
  check(code === 0, `sidecar exited with ${code ?? signal}, want 0`);

  await environmentChecks();
  log("ok");
}

// closedURL is a base URL at a local port nothing listens on (a model
// server that is not running).
async function closedURL() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

// environmentChecks starts the sidecar in the environments people have:
// initialize, search and a run work in each; the run answers offline, or,
// where a model is named and cannot be reached, fails alone with an error
// naming the variable that chose it. The key never shows.
async function environmentChecks() {
  const closed = await closedURL();
  const cases = [
    { name: "OPENAI_API_KEY without a model", env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "", OPENAI_MODEL: "" }, notice: "answering offline" },
    { name: "OPENAI_BASE_URL at a closed port", env: { OPENAI_API_KEY: "", OPENAI_BASE_URL: closed, OPENAI_MODEL: "" }, notice: "answering offline" },
    { name: "a model at a closed port", env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: closed, OPENAI_MODEL: "llama3.1" }, fails: "chosen by OPENAI_MODEL" },
  ];
  for (const c of cases) {
    const child = spawn(command, args, { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...c.env } });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const done = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    const sidecar = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
    sidecar.listen();
    try {
      const init = await sidecar.sendRequest("initialize", { vault, index: indexDir });
      check(init.index.notes > 0, `${c.name}: no notes`);
      const found = await sidecar.sendRequest("vault/search", { query: "sourdough starter", limit: 3 });
      check(found.results.length > 0, `${c.name}: search found nothing`);
      const res = await sidecar.sendRequest("agent/run", { message: "How do I keep my sourdough starter alive?" });
      if (c.fails) {
        check(res.stopReason === "error" && res.error.includes(c.fails), `${c.name}: run ${res.stopReason} ${res.error}, want an error with "${c.fails}"`);
      } else {
        check(res.stopReason === "final_answer" && res.answer.includes("[[Sourdough Starter]]"), `${c.name}: run ${res.stopReason} ${res.answer.slice(0, 200)}`);
      }
      check(!JSON.stringify(res).includes("sk-test"), `${c.name}: the key is in the result`);
      await sidecar.sendRequest("shutdown");
      await sidecar.sendNotification("exit");
      const { code, signal } = await done;
      check(code === 0, `${c.name}: sidecar exited with ${code ?? signal}\n${stderr}`);
      check(!stderr.includes("sk-test"), `${c.name}: the key is on stderr`);
      if (c.notice) check(stderr.includes(c.notice), `${c.name}: no notice on stderr:\n${stderr}`);
      log(`${c.name}: started, searched, ${c.fails ? "the run failed alone: " + res.error.slice(0, 120) : "answered offline"}`);
    } finally {
      sidecar.dispose();
      child.kill();
    }
  }
}

// runAgent runs one question with the planner on and checks the streamed
// messages the way a host renders them.
async function runAgent() {
  const res = await conn.sendRequest("agent/run", {
    message: "How do I keep my sourdough starter alive?",
    runId: "node-1",
    history: [{ role: "user", content: "hello" }],
    settings: { enableAgentPlannerV0: true },
  });
  log(`agent/run: ${res.stopReason} after ${res.iterations} iteration(s), ${res.elapsedMs} ms`);
  check(res.runId === "node-1", `runId ${res.runId}`);
  check(typeof res.answer === "string" && res.answer.length > 0, "empty answer");
  const final = parseMessage(res.content);
  check(final.status === "complete", `final marker status ${final.status}`);
  const streamed = messages.get("node-1");
  check(streamed, "no agent/message notification");
  check(streamed.status === "complete", `last agent/message status ${streamed.status}`);
  for (const step of final.steps) log(`  step: ${step}`);
  for (const tag of ["[Plan]", "[Act]", "[Obs]", "[Reflect]"]) {
    check(final.steps.some((s) => s.startsWith(tag)), `no ${tag} step in ${JSON.stringify(final.steps)}`);
  }
  check(res.stopReason === "final_answer", `stopReason ${res.stopReason}`);
  check(final.answer.includes("[[Sourdough Starter]]"), "the answer does not cite [[Sourdough Starter]]");
  log(`  answer: ${final.answer.split("\n")[0].slice(0, 120)}`);
  const types = updates.get("node-1") ?? [];
  check(types[0] === "agent_start" && types.at(-1) === "agent_completion", `update types ${types}`);

  // Cancelling a run with $/cancelRequest (vscode-jsonrpc sends it for a
  // cancelled token): either the run already finished or it replies -32800.
  const source = new rpc.CancellationTokenSource();
  const pending = conn.sendRequest("agent/run", { message: "What is Project Alpha?", runId: "node-2" }, source.token);
  source.cancel();
  try {
    await pending;
    log("cancelled run finished before the cancel arrived");
  } catch (err) {
    check(err instanceof rpc.ResponseError && err.code === -32800, `cancelled run: ${err}`);
    log("cancelled run replied -32800");
  }
}

// editModel is an OpenAI-compatible endpoint that proposes one edit: its
// first answer calls append_to_note, its answer after the tool result
// quotes that result.
function editModel(line) {
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    if (!req.url.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const last = (JSON.parse(body).messages ?? []).at(-1);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finish = null) =>
      res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    if (last?.role === "tool") {
      chunk({ role: "assistant", content: `Edit result: ${last.content}` });
      chunk({}, "stop");
    } else {
      const args = JSON.stringify({ path: "Inbox.md", content: line });
      chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_edit", type: "function", function: { name: "append_to_note", arguments: args } }] });
      chunk({}, "tool_calls");
    }
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/v1` })));
}

// editRuns runs the agent with allowEdits: the sidecar asks vault/applyEdit
// for the edit it proposes; the first is approved (the note is written),
// the second refused (the note stays as it was).
async function editRuns() {
  const line = "- Call the plumber about the dripping tap.";
  const model = await editModel(line);
  const inbox = path.join(vault, "Inbox.md");
  const original = readFileSync(inbox, "utf8");
  const answers = [{ applied: true }, { applied: false, reason: "not now" }];
  const asked = [];
  const handler = conn.onRequest("vault/applyEdit", (params) => {
    asked.push(params);
    return answers.shift();
  });
  const settings = { allowEdits: true, provider: "openai", baseUrl: model.url, model: "fake" };
  try {
    const res = await conn.sendRequest("agent/run", { message: "add a task to my inbox", runId: "edit-1", settings });
    check(res.stopReason === "final_answer", `edit run: ${res.stopReason} ${res.error ?? ""}`);
    check(asked.length === 1, `vault/applyEdit asked ${asked.length} times`);
    const p = asked[0];
    check(p.runId === "edit-1" && p.path === "Inbox.md" && p.operation === "append_to_note", `vault/applyEdit params ${JSON.stringify(p).slice(0, 200)}`);
    check(p.diff.includes(`+${line}`) && p.newText.endsWith(line + "\n") && p.hash.length === 64, `vault/applyEdit diff ${p.diff}`);
    const after = readFileSync(inbox, "utf8");
    check(after === p.newText && after.startsWith(original.trimEnd()), "the approved edit was not written");
    check(res.answer.includes('"applied":true'), `the agent was not told the edit was applied: ${res.answer}`);
    log("edit approved and written:", p.diff.split("\n").filter((l) => l.startsWith("+") && !l.startsWith("+++")).join(" "));

    const refused = await conn.sendRequest("agent/run", { message: "add it again", runId: "edit-2", settings });
    check(asked.length === 2, `vault/applyEdit asked ${asked.length} times`);
    check(readFileSync(inbox, "utf8") === after, "the note changed after a refused edit");
    check(refused.answer.includes("refused by the person: not now"), `the agent was not told of the refusal: ${refused.answer}`);
    log("edit refused: the note is unchanged");
  } finally {
    handler.dispose();
    model.server.close();
  }
}

const timer = setTimeout(() => {
  console.error(`timed out after ${timeoutMs} ms`);
  child.kill();
  process.exit(1);
}, timeoutMs);

try {
  await main();
  clearTimeout(timer);
} catch (err) {
  clearTimeout(timer);
  console.error(err instanceof Failure ? `FAIL: ${err.message}` : err);
  child.kill();
  process.exitCode = 1;
} finally {
  conn.dispose();
  if (tmpIndex) rmSync(tmpIndex, { recursive: true, force: true });
}
