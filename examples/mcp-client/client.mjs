// An MCP client for `vault-agent mcp`, written with the official TypeScript
// SDK the way Claude Desktop, Cursor or VS Code talk to it: Client +
// StdioClientTransport spawning the server. It works on a temp copy of the
// fixture vault and checks the whole surface: the tools and their schemas,
// a call of every tool, the prompts, note resources, a note edited on disk showing up in
// search and as a resources/updated notification, bad input coming back as
// isError, and ask_vault with the offline model and with a fake
// OpenAI-compatible endpoint: its progress, its citations, and a run
// cancelled while its model call is in flight (the endpoint holds the call
// open until the client goes away, so the run is slow without any sleep).
// With --allow-edits, the edit tools: annotated destructive, their edits
// written, indexed at once, refused when unsafe; without it, no edit tool.
// The servers must survive all of it and exit cleanly when stdin closes.
// Last, servers started in the environments people have (OPENAI_API_KEY
// exported without a model, OPENAI_BASE_URL at a port nothing listens on,
// a model named at that port) start, search and answer offline, or fail
// that one ask_vault call naming the variable that chose the model.
// Any failure exits non-zero.
//
//   VAULT_AGENT_BIN=/path/to/vault-agent node client.mjs   # a built binary
//   node client.mjs                                         # go run ./cmd/vault-agent
//
// Environment: VAULT_AGENT_BIN (binary, absolute or relative to the folder
// the client is started in; default `go run`), VAULT_DIR (vault to copy;
// default testdata/vault), CLIENT_TIMEOUT_MS (default 120000), QUIET=1 (less
// output).

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..", "..");
const source = path.resolve(process.env.VAULT_DIR ?? path.join(repoRoot, "testdata", "vault"));
const timeoutMs = Number(process.env.CLIENT_TIMEOUT_MS ?? 120000);
const quiet = process.env.QUIET === "1";

const log = (...args) => {
  if (!quiet) console.log(...args);
};

class Failure extends Error {}
function check(cond, msg) {
  if (!cond) throw new Failure(msg);
}

// within rejects when promise has not settled in ms.
function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Failure(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// A fake OpenAI-compatible endpoint. Each chat call is handed to the next
// function of `script`, which answers it (SSE, as the real API streams) or
// holds it open; `calls` resolves as calls arrive.
function modelEndpoint(script) {
  const arrivals = [];
  const waiters = [];
  const server = http.createServer((req, res) => {
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end('{"error":{"message":"not found"}}');
      return;
    }
    req.resume();
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.flushHeaders();
    const call = { n: arrivals.length, gone: new Promise((resolve) => res.on("close", resolve)) };
    arrivals.push(call);
    waiters.shift()?.(call);
    const step = script[call.n];
    if (step) step(res);
  });
  let seen = 0;
  return {
    server,
    // nextCall resolves with the next call to arrive (or one that did).
    nextCall: () => (seen < arrivals.length ? Promise.resolve(arrivals[seen++]) : new Promise((r) => waiters.push((c) => (seen++, r(c))))),
  };
}

// sse writes one streamed completion: a delta, then the finish reason.
function sse(res, delta, finish) {
  const chunk = (d, f) => JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "fake", choices: [{ index: 0, delta: d, finish_reason: f }] });
  res.end(`data: ${chunk({ role: "assistant", ...delta }, null)}\n\ndata: ${chunk({}, finish)}\n\ndata: [DONE]\n\n`);
}

const tmp = mkdtempSync(path.join(tmpdir(), "vault-agent-mcp-"));
const vault = path.join(tmp, "vault");
// Symlinks are copied as they are: outside-link.md points out of the vault.
cpSync(source, vault, { recursive: true, verbatimSymlinks: true });

// The server runs in the repository root: a relative VAULT_AGENT_BIN is
// relative to where the client was started (a bare name is on PATH).
const bin = process.env.VAULT_AGENT_BIN;
const [command, baseArgs] = bin
  ? [bin.includes("/") || bin.includes(path.sep) ? path.resolve(bin) : bin, ["mcp"]]
  : ["go", ["run", "./cmd/vault-agent", "mcp"]];

// passed are the variables of this process a server gets besides PATH and
// HOME, as an MCP client passes its configured env.
const passed = Object.fromEntries(["XDG_CACHE_HOME", "XDG_CONFIG_HOME"].filter((k) => process.env[k]).map((k) => [k, process.env[k]]));

// connect starts a server with extra arguments (and env over a clean
// environment) and connects a client to it.
async function connect(name, extra, env = {}) {
  const transport = new StdioClientTransport({
    command,
    args: [...baseArgs, "--vault", vault, "--index", path.join(tmp, `index-${name}`), ...extra],
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmp, ...passed, OPENAI_API_KEY: "", OPENAI_BASE_URL: "", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: `vault-agent-example-${name}`, version: "0.1.0" });
  await client.connect(transport);
  // The child process, to see how it exits (the transport keeps it private).
  const child = transport._process;
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { client, transport, exited, stderr: () => stderr };
}

function text(result) {
  return result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

async function ok(client, name, args, options) {
  const res = await client.callTool({ name, arguments: args }, CallToolResultSchema, options);
  check(!res.isError, `${name}(${JSON.stringify(args)}) failed: ${text(res)}`);
  check(res.structuredContent && typeof res.structuredContent === "object", `${name}: no structured content`);
  return res;
}

async function toolError(client, name, args, mention) {
  const res = await client.callTool({ name, arguments: args });
  check(res.isError === true, `${name}(${JSON.stringify(args)}) should be a tool error, got: ${text(res)}`);
  if (mention) check(text(res).includes(mention), `${name}(${JSON.stringify(args)}): "${text(res)}" does not mention "${mention}"`);
  return text(res);
}

async function main() {
  const main = await connect("main", []);
  const { client } = main;

  const updated = [];
  let onUpdated = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
    onUpdated(n.params.uri);
  });
  let listChanged = 0;
  let onListChanged = () => {};
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanged++;
    onListChanged();
  });

  // ---- the server and its tools
  const info = client.getServerVersion();
  check(info?.name === "vault-agent", `server name ${info?.name}`);
  const caps = client.getServerCapabilities();
  check(caps?.tools && caps?.resources?.subscribe && caps?.prompts, `capabilities ${JSON.stringify(caps)}`);
  check(client.getInstructions()?.includes("search_notes"), "no instructions");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const want = ["ask_vault", "daily_note", "links", "list_notes", "list_notes_by_property", "list_tags", "list_tasks", "notes_in_range", "read_note", "search_notes"];
  check(JSON.stringify(names) === JSON.stringify(want), `tools ${names}`);
  for (const t of tools) {
    check(t.inputSchema?.type === "object", `${t.name}: input schema ${JSON.stringify(t.inputSchema)}`);
    check(t.outputSchema?.type === "object" && Object.keys(t.outputSchema.properties ?? {}).length > 0, `${t.name}: no output schema`);
    check(t.annotations?.readOnlyHint === true, `${t.name}: not readOnlyHint`);
    check((t.description ?? "").length > 80, `${t.name}: thin description`);
  }
  const search = tools.find((t) => t.name === "search_notes");
  for (const p of ["query", "limit", "tags", "folders", "since", "until"]) {
    check(search.inputSchema.properties[p], `search_notes lacks ${p}`);
  }
  check(JSON.stringify(search.inputSchema.required) === '["query"]', `search_notes required ${search.inputSchema.required}`);
  check(search.description.includes("tag:#") && search.description.includes('"exact phrase"'), "search_notes does not document its query language");
  const ask = tools.find((t) => t.name === "ask_vault");
  check(JSON.stringify(ask.inputSchema.properties.mode.enum) === '["react","roa","par","staged"]', "ask_vault mode enum");
  log(`tools: ${names.join(", ")}`);

  // ---- every tool
  let res = await ok(client, "search_notes", { query: "sourdough starter" });
  const hits = res.structuredContent.hits;
  check(hits[0]?.path === "recipes/Sourdough Starter.md", `top hit ${JSON.stringify(hits[0])}`);
  for (const h of hits) {
    check(typeof h.chunk === "number" && h.score > 0 && h.title && !h.snippet.includes("**"), `hit ${JSON.stringify(h)}`);
  }
  res = await ok(client, "search_notes", { query: "project" });
  check(res.structuredContent.hits.length === 10, `10 hits for "project": ${res.structuredContent.hits.length}`);
  const bytes = Buffer.byteLength(text(res));
  check(bytes < 2048, `10 hits in ${bytes} bytes of text`);
  log(`search_notes: 10 hits in ${bytes} bytes of text`);
  res = await ok(client, "search_notes", { query: "", tags: ["recipe"], limit: 1000 });
  check(res.structuredContent.hits.length <= 50 && res.structuredContent.total >= 5, "limit not clamped");

  res = await ok(client, "read_note", { path: "[[Sourdough Starter]]", heading: "Troubleshooting" });
  check(res.structuredContent.path === "recipes/Sourdough Starter.md", "lenient lookup");
  check(res.structuredContent.content.includes("nail-polish"), "section text");
  check(res.structuredContent.headings.includes("## Keeping it"), "headings");
  res = await ok(client, "read_note", { path: "recipes/Sourdough Starter.md", chunk: 0 });
  check(res.structuredContent.nextChunk === 1 && res.structuredContent.chunkCount > 1, "chunking");

  res = await ok(client, "list_notes", { folder: "recipes" });
  check(res.structuredContent.total === 7, `recipes: ${res.structuredContent.total}`);
  res = await ok(client, "list_tags", {});
  check(res.structuredContent.tags.some((t) => t.tag === "recipe"), "tags");
  res = await ok(client, "links", { path: "Sourdough Starter" });
  check(res.structuredContent.backlinks.some((b) => b.path === "recipes/Country Sourdough Loaf.md"), "backlinks");
  check(res.structuredContent.outgoing.some((l) => l.path === "recipes/Country Sourdough Loaf.md"), "outgoing links");
  res = await ok(client, "notes_in_range", { timeExpression: "2026-03" });
  check(res.structuredContent.notes.some((n) => n.path === "journal/2026-03-12.md"), "notes_in_range 2026-03");

  res = await ok(client, "ask_vault", { question: "how do I keep my sourdough starter alive?" });
  check(res.structuredContent.model === "offline" && res.structuredContent.stopReason === "final_answer", "ask_vault run");
  check(res.structuredContent.citations.some((c) => c.path === "recipes/Sourdough Starter.md"), "ask_vault citations");
  log(`ask_vault (offline): cited ${res.structuredContent.citations.map((c) => c.path).join(", ")}`);

  // ---- resources
  const starter = "vault:///recipes/Sourdough%20Starter.md";
  let resources = (await client.listResources()).resources;
  while (!resources.some((r) => r.uri === starter)) {
    // Registered once the index is ready; the list change is announced.
    const seen = listChanged;
    await within(new Promise((resolve) => (onListChanged = () => listChanged > seen && resolve())), 20000, "resources/list_changed");
    resources = (await client.listResources()).resources;
  }
  check(resources.length >= 40, `${resources.length} resources`);
  const { resourceTemplates } = await client.listResourceTemplates();
  check(resourceTemplates[0]?.uriTemplate === "vault:///{+path}", "resource template");
  const read = await client.readResource({ uri: starter });
  check(read.contents[0].text.startsWith("---\ntitle: Sourdough Starter") && read.contents[0].mimeType === "text/markdown", "read resource");
  const lenient = await client.readResource({ uri: "vault:///Sourdough%20Starter" });
  check(lenient.contents[0].uri === starter, "lenient resource read");
  log(`resources: ${resources.length} notes, read ${starter}`);

  // ---- prompts come with their notes
  const { prompts } = await client.listPrompts();
  check(prompts.map((p) => p.name).sort().join(",") === "summarize_notes,weekly_review", `prompts ${prompts.map((p) => p.name)}`);
  const summary = await client.getPrompt({ name: "summarize_notes", arguments: { topic: "sourdough" } });
  check(summary.messages[0].content.text.includes("recipes/Sourdough Starter.md"), "summarize_notes lists the notes");
  const review = await client.getPrompt({ name: "weekly_review", arguments: { period: "2026-03" } });
  check(review.messages[0].content.text.includes("journal/2026-03-12.md"), "weekly_review lists the period's notes");
  log("prompts: summarize_notes, weekly_review");

  // ---- an edit on disk: a notification, then search sees it
  await client.subscribeResource({ uri: starter });
  const notified = new Promise((resolve) => {
    onUpdated = (uri) => uri === starter && resolve();
  });
  const file = path.join(vault, "recipes", "Sourdough Starter.md");
  writeFileSync(file, readFileSync(file, "utf8") + "\nMy starter now lives on quokkaberry flour.\n");
  await within(notified, 20000, `notifications/resources/updated for ${starter}`);
  res = await ok(client, "search_notes", { query: "quokkaberry" });
  check(res.structuredContent.hits.length === 1 && res.structuredContent.hits[0].path === "recipes/Sourdough Starter.md", "edit not searchable");
  log("edit: notified and found");

  // ---- bad input is a tool error, never a protocol failure
  await toolError(client, "read_note", { path: "../../etc/passwd" }, "outside the vault");
  await toolError(client, "read_note", { path: "outside-link.md" }, "outside the vault");
  await toolError(client, "read_note", { path: "Sourdough Startr" }, "did you mean");
  await toolError(client, "read_note", { path: "Sourdough Starter", chunk: 999 }, "out of range");
  await toolError(client, "read_note", { notePath: "Home" }, "path (string, required)");
  await toolError(client, "search_notes", { query: "tag:" }, "Query language");
  await toolError(client, "search_notes", { query: "x", limit: "ten" });
  await toolError(client, "search_notes", { query: "x", folders: ["../.."] }, "outside the vault");
  await toolError(client, "list_notes", { since: "the day after the storm" }, "since");
  await toolError(client, "notes_in_range", { timeExpression: "when pigs fly" });
  await toolError(client, "links", { path: "nowhere at all" });
  await toolError(client, "ask_vault", { question: "x", mode: "fastest" }, "mode");
  let threw = false;
  try {
    await client.callTool({ name: "delete_everything", arguments: {} });
  } catch {
    threw = true; // an unknown tool is a protocol error, and only that
  }
  check(threw, "an unknown tool did not fail");
  log("bad input: tool errors");

  // ---- ask_vault with a model endpoint: progress, citations, cancel
  // The fake model first asks for a search, then, once the client has seen
  // the search's progress, answers; the next run's call is held open until
  // the client cancels. Every step waits on an event, never on time.
  let release;
  const released = new Promise((resolve) => (release = resolve));
  const endpoint = modelEndpoint([
    (res) => sse(res, { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "localSearch", arguments: '{"query":"sourdough starter"}' } }] }, "tool_calls"),
    (res) => released.then(() => sse(res, { content: "Keep it in the fridge and feed it weekly [[Sourdough Starter]]." }, "stop")),
    () => {}, // held until the client goes away
  ]);
  await new Promise((resolve) => endpoint.server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${endpoint.server.address().port}/v1`;
  const model = await connect("model", ["--provider", "openai", "--base-url", base, "--model", "fake-model"]);
  const modelAsk = (await model.client.listTools()).tools.find((t) => t.name === "ask_vault");
  check(modelAsk.annotations?.openWorldHint === true, "ask_vault with a model endpoint should be open-world");

  const steps = [];
  const asked = ok(model.client, "ask_vault", { question: "how do I keep my starter alive?" }, {
    onprogress: (p) => {
      steps.push(p.message);
      if (p.message?.startsWith("Found")) release();
    },
  });
  res = await within(asked, 30000, "ask_vault with the model endpoint");
  check(steps.some((m) => m?.startsWith("Searching notes for")) && steps.some((m) => m?.startsWith("Found")), `progress: ${steps}`);
  check(res.structuredContent.model === "openai/fake-model" && res.structuredContent.citations[0]?.path === "recipes/Sourdough Starter.md", `model answer ${JSON.stringify(res.structuredContent)}`);
  log(`ask_vault (model endpoint): progress ${JSON.stringify(steps)}, cited ${res.structuredContent.citations[0].path}`);

  await endpoint.nextCall();
  await endpoint.nextCall();
  const called = endpoint.nextCall();
  const abort = new AbortController();
  const asking = model.client.callTool({ name: "ask_vault", arguments: { question: "what is in my vault?" } }, CallToolResultSchema, {
    signal: abort.signal,
  });
  const call = await within(called, 30000, "the model call");
  abort.abort("the user changed their mind");
  let cancelled = false;
  try {
    await asking;
  } catch {
    cancelled = true;
  }
  check(cancelled, "the cancelled ask_vault resolved");
  await within(call.gone, 20000, "the model call to be dropped after the cancel");
  res = await ok(model.client, "search_notes", { query: "starter" });
  check(res.structuredContent.hits.length > 0, "no hits after the cancel");
  log("ask_vault: cancelled mid-run, the model call was dropped, the server goes on");

  // ---- edits: only with --allow-edits, annotated destructive
  const editTools = ["create_note", "append_to_note", "replace_in_note", "set_properties"];
  const mainTools = (await client.listTools()).tools.map((t) => t.name);
  check(!editTools.some((n) => mainTools.includes(n)), `edit tools offered without --allow-edits: ${mainTools}`);
  const edits = await connect("edits", ["--allow-edits", "--no-ask"]);
  const listed = (await edits.client.listTools()).tools;
  for (const name of editTools) {
    const tool = listed.find((t) => t.name === name);
    check(tool?.annotations?.destructiveHint === true && tool.annotations.readOnlyHint !== true, `${name}: ${JSON.stringify(tool?.annotations)}`);
  }
  const weekNote = path.join(vault, "Reviews", "Week 15.md");
  res = await ok(edits.client, "create_note", { path: "Reviews/Week 15.md", content: "---\n# written by hand\nstatus: draft\n---\n# Week 15\n" });
  check(res.structuredContent.applied === true && res.structuredContent.diff.includes("+# Week 15"), `create_note ${JSON.stringify(res.structuredContent)}`);
  res = await ok(edits.client, "set_properties", { path: "Reviews/Week 15.md", properties: { status: "done", reviewed: "2026-04-12" } });
  res = await ok(edits.client, "append_to_note", { path: "Reviews/Week 15.md", content: "Fixed the dripping tap." });
  const written = readFileSync(weekNote, "utf8");
  check(written === "---\n# written by hand\nstatus: done\nreviewed: 2026-04-12\n---\n# Week 15\n\nFixed the dripping tap.\n", `the note after the edits: ${JSON.stringify(written)}`);
  res = await ok(edits.client, "search_notes", { query: "dripping tap" });
  check(res.structuredContent.hits[0]?.path === "Reviews/Week 15.md", `search after the edits: ${JSON.stringify(res.structuredContent.hits)}`);
  await toolError(edits.client, "create_note", { path: "Reviews/Week 15.md", content: "again" }, "already exists");
  await toolError(edits.client, "create_note", { path: "../outside.md", content: "x" }, "escapes the vault");
  await toolError(edits.client, "replace_in_note", { path: "Reviews/Week 15.md", find: "#", replace: "x" }, "occurs");
  log("edits: written, indexed, refused when unsafe or ambiguous");

  // ---- the servers survived and end cleanly on stdin EOF
  await ok(client, "list_tags", {});
  for (const s of [main, model, edits]) {
    await s.client.close();
    const { code, signal } = await within(s.exited, 10000, "the server to exit");
    check(code === 0 && signal === null, `server exited with ${code} ${signal}\n${s.stderr()}`);
  }
  endpoint.server.close();
  log("servers exited cleanly");

  await environmentChecks();
}

// closedURL is a base URL at a local port nothing listens on.
async function closedURL() {
  const srv = http.createServer();
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

// environmentChecks starts servers in the environments people have: each
// connects, lists its tools, searches, and answers ask_vault offline, or
// fails that call alone where a model is named and cannot be reached.
async function environmentChecks() {
  const closed = await closedURL();
  const cases = [
    { name: "key-only", env: { OPENAI_API_KEY: "sk-test" } },
    { name: "closed-base-url", env: { OPENAI_BASE_URL: closed } },
    { name: "closed-model", env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: closed, OPENAI_MODEL: "llama3.1" }, fails: "chosen by OPENAI_MODEL" },
  ];
  for (const c of cases) {
    const s = await connect(c.name, [], c.env);
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    check(names.includes("ask_vault") && names.includes("search_notes"), `${c.name}: tools ${names}`);
    const found = await ok(s.client, "search_notes", { query: "sourdough starter" });
    check(found.structuredContent.hits.length > 0, `${c.name}: search found nothing`);
    const question = { question: "how do I keep my sourdough starter alive?" };
    if (c.fails) {
      const msg = await toolError(s.client, "ask_vault", question, c.fails);
      check(!msg.includes("sk-test"), `${c.name}: the key is in the error`);
      await ok(s.client, "list_tags", {}); // the server goes on
      log(`${c.name}: ask_vault failed alone: ${msg.slice(0, 120)}`);
    } else {
      const res = await ok(s.client, "ask_vault", question);
      check(res.structuredContent.model === "offline" && res.structuredContent.citations.some((x) => x.path === "recipes/Sourdough Starter.md"), `${c.name}: ${JSON.stringify(res.structuredContent).slice(0, 300)}`);
      log(`${c.name}: searched and answered offline`);
    }
    await s.client.close();
    const { code, signal } = await within(s.exited, 10000, "the server to exit");
    check(code === 0 && signal === null, `${c.name}: server exited with ${code} ${signal}\n${s.stderr()}`);
    check(!s.stderr().includes("sk-test"), `${c.name}: the key is on stderr`);
  }
}

let failed = false;
try {
  await within(main(), timeoutMs, "the whole run");
  console.log("mcp client: all checks passed");
} catch (err) {
  failed = true;
  console.error(`mcp client: ${err instanceof Failure ? "FAILED: " : ""}${err?.stack ?? err}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
