// Drives `vault-agent acp` the way an editor does, with the official ACP
// TypeScript SDK's client (@agentclientprotocol/sdk: client() over
// ndJsonStream on the child's stdio). The vault is named only by each
// session's cwd. Any failed check exits non-zero.
//
//   VAULT_AGENT_BIN=/path/to/vault-agent VAULT_DIR=/tmp/copy-of-vault node client.mjs
//
// It checks, against an agent on the offline model:
//   initialize; a session in the vault; a prompt with a resource link to a
//   note (read first, through fs/read_text_file) and one without; the order
//   of plan, thought, tool_call/tool_call_update and message updates, and
//   [[note]] citations in the answer; set_mode roa and a run in that mode;
//   garbage lines and unknown methods answered with JSON-RPC errors while
//   the agent keeps serving; a clean exit on EOF.
// and, against an agent whose OpenAI-compatible model is a fake server in
// this process (a request containing HOLD is held open until the agent
// drops it, so the run is slow without any sleep):
//   two sessions at once; cancelling one turn gives stopReason "cancelled"
//   while the other session's turn completes;
// and, with --allow-edits and a fake model that proposes an edit:
//   session/request_permission with the edit's diff (allow once / reject);
//   allowed, the note is written through fs/write_text_file; rejected, it
//   is left as it was; the agent is told either way.
//
// and in the environments people have: OPENAI_API_KEY exported without a
// model, OPENAI_BASE_URL at a port nothing listens on (both answer
// offline), a model named at that port (the prompt fails alone, naming the
// variable that chose the model); initialize and session/new never fail.
//
// Environment: VAULT_AGENT_BIN (absolute or relative to the folder the
// client is started in; default `go run ./cmd/vault-agent`), VAULT_DIR
// (default testdata/vault: use a copy), CLIENT_TIMEOUT_MS (default 120000),
// QUIET=1 (less output).

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "..", "..");
const vault = path.resolve(process.env.VAULT_DIR ?? path.join(repoRoot, "testdata", "vault"));
const timeoutMs = Number(process.env.CLIENT_TIMEOUT_MS ?? 120000);
const quiet = process.env.QUIET === "1";
const log = (...a) => {
  if (!quiet) console.log(...a);
};

class Failure extends Error {}
function check(cond, msg) {
  if (!cond) throw new Failure(msg);
}

const watchdog = setTimeout(() => {
  console.error(`timed out after ${timeoutMs} ms`);
  process.exit(1);
}, timeoutMs);

// startAgent spawns `vault-agent acp` and wires the SDK's client onto its
// stdio. A tee of stdout checks that every line is a JSON-RPC message and
// keeps the error responses with id null (answers to garbage lines).
function startAgent(env = {}) {
  const extra = env.VAULT_AGENT_ARGS ? env.VAULT_AGENT_ARGS.split(" ") : [];
  // The agent runs in the repository root: a relative VAULT_AGENT_BIN is
  // relative to where the client was started (a bare name is on PATH).
  const bin = process.env.VAULT_AGENT_BIN;
  const [command, args] = bin
    ? [bin.includes("/") || bin.includes(path.sep) ? path.resolve(bin) : bin, ["acp", ...extra]]
    : ["go", ["run", "./cmd/vault-agent", "acp", ...extra]];
  const child = spawn(command, args, {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const stderr = [];
  child.stderr.on("data", (d) => stderr.push(d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  child.on("error", (err) => {
    console.error(`cannot start ${command}: ${err.message}`);
    process.exit(2);
  });
  const [forSdk, forCheck] = Readable.toWeb(child.stdout).tee();
  const nullErrors = [];
  const lines = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of forCheck) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          throw new Failure(`stdout carried a line that is not JSON: ${line.slice(0, 200)}`);
        }
        check(msg.jsonrpc === "2.0", `stdout carried a non JSON-RPC message: ${line.slice(0, 200)}`);
        if ("id" in msg && msg.id === null && msg.error) nullErrors.push(msg.error);
      }
    }
    check(buf === "", `stdout ended with a partial line: ${buf.slice(0, 200)}`);
  })();
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), forSdk);
  return { child, stream, exited, nullErrors, lines, stderr: () => Buffer.concat(stderr).toString() };
}

// newClient returns a client app that records fs/read_text_file requests
// and answers them from disk plus a marker (as an editor with unsaved
// edits would).
function newClient(reads) {
  return acp.client({ name: "vault-agent-acp-test" }).onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    reads.push(params.path);
    const { readFile } = await import("node:fs/promises");
    return { content: (await readFile(params.path, "utf8")) + "\n\nUnsaved line typed in the editor." };
  });
}

// turn sends a prompt and collects its updates until it stops.
async function turn(session, prompt) {
  const pending = session.prompt(prompt);
  const updates = [];
  for (;;) {
    const m = await session.nextUpdate();
    if (m.kind === "stop") {
      await pending;
      return { updates, stopReason: m.stopReason };
    }
    updates.push(m.update);
  }
}

const kinds = (updates) => updates.map((u) => u.sessionUpdate);
const textOf = (updates, kind) =>
  updates
    .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");

// checkRun verifies the shape and order of one offline run's updates.
function checkRun(name, updates, { planner, planDone = true }) {
  const k = kinds(updates);
  const firstTool = k.indexOf("tool_call");
  // The agent's own first tool call (an attached note's read comes before the plan).
  const firstAgentTool = updates.findIndex((u) => u.sessionUpdate === "tool_call" && !u.toolCallId.includes("/mention-"));
  const firstMessage = k.indexOf("agent_message_chunk");
  check(firstTool >= 0, `${name}: no tool_call in ${k.join(",")}`);
  check(firstMessage > firstTool, `${name}: the answer did not come after the tool calls: ${k.join(",")}`);
  check(k.indexOf("agent_thought_chunk") >= 0 && k.indexOf("agent_thought_chunk") < firstMessage, `${name}: no thought before the answer`);
  const thoughts = textOf(updates, "agent_thought_chunk");
  if (planner) {
    for (const tag of ["[Plan]", "[Act]", "[Obs]"]) check(thoughts.includes(tag), `${name}: no ${tag} thought in ${JSON.stringify(thoughts)}`);
    const plans = updates.filter((u) => u.sessionUpdate === "plan");
    check(plans.length >= 2, `${name}: expected plan updates, got ${plans.length}`);
    check(k.indexOf("plan") < firstAgentTool, `${name}: the plan did not come before the first tool call: ${k.join(",")}`);
    for (const e of plans[0].entries) {
      check(typeof e.content === "string" && e.content && ["high", "medium", "low"].includes(e.priority), `${name}: bad plan entry ${JSON.stringify(e)}`);
    }
    check(plans[0].entries.some((e) => e.status === "in_progress"), `${name}: first plan has nothing in progress`);
    if (planDone) check(plans.at(-1).entries.every((e) => e.status === "completed"), `${name}: last plan not completed: ${JSON.stringify(plans.at(-1))}`);
  }
  // Every tool call goes pending -> in_progress -> completed|failed, in order.
  const calls = new Map();
  for (const u of updates) {
    if (u.sessionUpdate === "tool_call") {
      check(!calls.has(u.toolCallId), `${name}: tool call id reused: ${u.toolCallId}`);
      check(u.status === "pending", `${name}: tool_call not pending: ${JSON.stringify(u)}`);
      calls.set(u.toolCallId, { kind: u.kind, title: u.title, statuses: [u.status], locations: u.locations ?? [] });
    } else if (u.sessionUpdate === "tool_call_update") {
      const c = calls.get(u.toolCallId);
      check(c, `${name}: update for unknown tool call ${u.toolCallId}`);
      if (u.status) c.statuses.push(u.status);
      if (u.locations) c.locations = u.locations;
      if (u.status === "completed") c.content = u.content;
    }
  }
  for (const [id, c] of calls) {
    const s = c.statuses.join(">");
    check(s === "pending>in_progress>completed" || s === "pending>in_progress>failed", `${name}: tool call ${id} went ${s}`);
  }
  const all = [...calls.values()];
  const search = all.find((c) => c.kind === "search");
  check(search, `${name}: no search tool call`);
  check(search.content?.[0]?.content?.text, `${name}: search call has no result content`);
  const reads = all.filter((c) => c.kind === "read" && c.statuses.at(-1) === "completed");
  check(reads.length > 0, `${name}: no completed read tool call`);
  for (const r of reads) {
    check(r.locations.length > 0 && r.locations.every((l) => path.isAbsolute(l.path) && l.path.startsWith(vault)), `${name}: read locations not absolute vault paths: ${JSON.stringify(r.locations)}`);
  }
  const answer = textOf(updates, "agent_message_chunk");
  check(/\[\[[^\]]+\]\]/.test(answer), `${name}: the answer cites no note: ${answer.slice(0, 300)}`);
  return { answer, calls: all };
}

async function offlineChecks() {
  const agent = startAgent({ OPENAI_API_KEY: "", OPENAI_BASE_URL: "", OPENAI_MODEL: "" });
  const reads = [];
  await newClient(reads).connectWith(agent.stream, async (cx) => {
    const init = await cx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
      clientInfo: { name: "vault-agent-acp-test", version: "1.0.0" },
    });
    check(init.protocolVersion === 1, `protocolVersion ${init.protocolVersion}`);
    check(init.agentInfo?.name === "vault-agent", `agentInfo ${JSON.stringify(init.agentInfo)}`);
    check(init.agentCapabilities.promptCapabilities.embeddedContext === true, "embeddedContext not advertised");
    check(init.agentCapabilities.promptCapabilities.image !== true, "image advertised");
    log("initialize:", JSON.stringify(init));

    const session = await cx.buildSession(vault).start();
    const modes = session.modes;
    check(modes?.currentModeId === "react", `current mode ${modes?.currentModeId}`);
    check(["react", "roa", "par", "staged"].every((id) => modes.availableModes.some((m) => m.id === id && m.name && m.description)), `modes ${JSON.stringify(modes)}`);
    const opts = session.newSessionResponse.configOptions ?? [];
    check(["mode", "planner", "maxIterations"].every((id) => opts.some((o) => o.id === id)), `config options ${JSON.stringify(opts)}`);
    log("session:", session.sessionId);

    // A prompt with a resource link: the note is read first, through the client.
    const note = path.join(vault, "recipes", "Sourdough Starter.md");
    const linked = await turn(session, [
      { type: "text", text: "How often should I feed my sourdough starter?" },
      { type: "resource_link", uri: pathToFileURL(note).href, name: "Sourdough Starter.md" },
    ]);
    check(linked.stopReason === "end_turn", `linked prompt stopped with ${linked.stopReason}`);
    const first = linked.updates[0];
    check(first.sessionUpdate === "tool_call" && first.kind === "read" && first.locations?.[0]?.path === note, `the linked note was not read first: ${JSON.stringify(first)}`);
    check(reads.includes(note), `fs/read_text_file was not asked for the linked note: ${JSON.stringify(reads)}`);
    checkRun("linked prompt", linked.updates, { planner: true });
    log("linked prompt:", [...new Set(kinds(linked.updates))].join(" "));

    // A prompt without a link.
    const plain = await turn(session, "how do I keep my sourdough starter alive?");
    check(plain.stopReason === "end_turn", `plain prompt stopped with ${plain.stopReason}`);
    const { answer } = checkRun("plain prompt", plain.updates, { planner: true });
    log("answer:", answer.slice(0, 200).replaceAll("\n", " "));

    // Set mode roa and run again.
    await cx.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "roa" });
    const roa = await turn(session, "what is the transactional outbox pattern?");
    check(roa.stopReason === "end_turn", `roa prompt stopped with ${roa.stopReason}`);
    const modeUpdate = roa.updates.find((u) => u.sessionUpdate === "current_mode_update");
    check(modeUpdate?.currentModeId === "roa", `no current_mode_update to roa before the roa run: ${kinds(roa.updates).join(",")}`);
    // roa may answer before the offline model marks its last to-dos done.
    checkRun("roa prompt", roa.updates, { planner: true, planDone: false });
    log("roa prompt:", kinds(roa.updates).length, "updates");

    // Bad mode, image content and unknown sessions are clear errors.
    await expectError(cx.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "yolo" }), -32602, "set_mode yolo");
    await expectError(
      cx.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt: [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] }),
      -32602,
      "image prompt",
    );
    await expectError(cx.request(acp.methods.agent.session.prompt, { sessionId: "sess_nope", prompt: [{ type: "text", text: "hi" }] }), -32002, "unknown session");

    // Garbage lines and unknown methods get JSON-RPC errors; the agent keeps serving.
    agent.child.stdin.write("this is not json\n");
    agent.child.stdin.write('{"jsonrpc":"2.0","id":77,"params":{}}\n');
    agent.child.stdin.write("[1,2,3]\n");
    await expectError(cx.request("vault/doesNotExist", {}), -32601, "unknown method");
    await expectError(cx.request("_vaultagent/unknownExtension", {}), -32601, "unknown extension method");
    const again = await turn(session, "what did I note about power budgets?");
    check(again.stopReason === "end_turn", `after garbage the prompt stopped with ${again.stopReason}`);
    check(agent.nullErrors.some((e) => e.code === -32700), `no -32700 for the garbage line: ${JSON.stringify(agent.nullErrors)}`);
    check(agent.nullErrors.filter((e) => e.code === -32600).length >= 1, `no -32600 for the batch: ${JSON.stringify(agent.nullErrors)}`);
    log("errors for garbage:", JSON.stringify(agent.nullErrors));

  });
  // EOF: closing the connection ends the agent's stdin; it exits cleanly.
  agent.child.stdin.end();
  const exit = await agent.exited;
  check(exit.code === 0, `exit after EOF: ${JSON.stringify(exit)}\n${agent.stderr()}`);
  await agent.lines;
  log("offline agent exited cleanly");
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (err) {
    check(err.code === code, `${what}: error code ${err.code}, want ${code} (${err.message})`);
    check(typeof err.message === "string" && err.message.length > 0, `${what}: empty error message`);
    return err;
  }
  throw new Failure(`${what}: succeeded, want error ${code}`);
}

// chatEndpoint serves an OpenAI-compatible chat endpoint on a free local
// port. answer(messages, chunk, res) streams one reply with chunk(delta,
// finish); it returns false to leave the request open, else the stream is
// ended. extra is added to the result ({ server, url }).
function chatEndpoint(answer, extra = {}) {
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    if (!req.url.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const msgs = JSON.parse(body).messages ?? [];
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta, finish = null) =>
      res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    if (answer(msgs, chunk, res) !== false) res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/v1`, ...extra })),
  );
}

// fakeModel is an OpenAI-compatible chat endpoint. A request whose last
// user message contains HOLD is held open until the client drops it; any
// other gets a short streamed answer.
function fakeModel() {
  let heldResolve, droppedResolve;
  const held = new Promise((r) => (heldResolve = r));
  const dropped = new Promise((r) => (droppedResolve = r));
  return chatEndpoint((msgs, chunk, res) => {
    const last = [...msgs].reverse().find((m) => m.role === "user")?.content ?? "";
    if (last.includes("HOLD")) {
      chunk({ role: "assistant", content: "" });
      res.on("close", () => droppedResolve());
      heldResolve();
      return false; // never ends: the run waits on this request, not on a timer
    }
    chunk({ role: "assistant", content: "Quick answer, see [[Sourdough Starter]]." });
    chunk({}, "stop");
  }, { held, dropped });
}

async function cancelChecks() {
  const model = await fakeModel();
  const agent = startAgent({ OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.url, OPENAI_MODEL: "fake" });
  await newClient([]).connectWith(agent.stream, async (cx) => {
    await cx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const slow = await cx.buildSession(vault).start();
    const quick = await cx.buildSession(vault).start();
    check(slow.sessionId !== quick.sessionId, "two sessions share an id");

    let slowSettled = false;
    const slowTurn = turn(slow, "HOLD this one: what is in my journal?").then((r) => {
      slowSettled = true;
      return r;
    });
    await model.held; // the slow run is now waiting on the model

    const q = await turn(quick, "quick question about sourdough");
    check(q.stopReason === "end_turn", `quick session stopped with ${q.stopReason}`);
    check(textOf(q.updates, "agent_message_chunk").includes("Quick answer"), `quick answer missing: ${JSON.stringify(q.updates)}`);
    check(!slowSettled, "the slow turn ended while the other session ran");

    await cx.notify(acp.methods.agent.session.cancel, { sessionId: slow.sessionId });
    const s = await slowTurn;
    check(s.stopReason === "cancelled", `cancelled turn stopped with ${s.stopReason}`);
    await model.dropped; // the model request was abandoned, not left running
    log("cancel: slow turn cancelled while the quick session completed");

    // The cancelled session still serves.
    const after = await turn(slow, "and now a quick one");
    check(after.stopReason === "end_turn", `after cancel the session stopped with ${after.stopReason}`);
  });
  agent.child.stdin.end();
  const exit = await agent.exited;
  model.server.close();
  check(exit.code === 0, `exit after EOF: ${JSON.stringify(exit)}\n${agent.stderr()}`);
  check(!agent.stderr().includes("test-key"), "the API key appeared on stderr");
  await agent.lines;
}


// editModel is an OpenAI-compatible endpoint that proposes one edit: its
// first answer to a prompt calls append_to_note, its answer after the tool
// result quotes that result.
function editModel(line) {
  return chatEndpoint((msgs, chunk) => {
    const last = msgs.at(-1);
    if (last?.role === "tool") {
      chunk({ role: "assistant", content: `Edit result: ${last.content}` });
      chunk({}, "stop");
    } else {
      const args = JSON.stringify({ path: "Inbox.md", content: line });
      chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_edit", type: "function", function: { name: "append_to_note", arguments: args } }] });
      chunk({}, "tool_calls");
    }
  });
}

// editChecks runs `vault-agent acp --allow-edits`: each edit the agent
// proposes comes as session/request_permission with the diff; "allow" gets
// it written through the client's fs/write_text_file, "reject" leaves the
// note as it was, and the agent is told either way.
async function editChecks() {
  const { readFile, writeFile } = await import("node:fs/promises");
  const line = "- Call the plumber about the dripping tap.";
  const model = await editModel(line);
  const agent = startAgent({ OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: model.url, OPENAI_MODEL: "fake", VAULT_AGENT_ARGS: "--allow-edits" });
  const inbox = path.join(vault, "Inbox.md");
  const original = await readFile(inbox, "utf8");
  const answers = ["allow", "reject"];
  const asked = [];
  const writes = [];
  const app = acp
    .client({ name: "vault-agent-acp-edit-test" })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: answers.shift() } };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      writes.push(params.path);
      await writeFile(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => ({ content: await readFile(params.path, "utf8") }));
  await app.connectWith(agent.stream, async (cx) => {
    await cx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    const session = await cx.buildSession(vault).start();

    const allowed = await turn(session, "add a task to my inbox");
    check(allowed.stopReason === "end_turn", `allowed edit: stopped with ${allowed.stopReason}`);
    check(asked.length === 1, `want one permission request, got ${asked.length}`);
    const p = asked[0];
    check(p.toolCall.kind === "edit", `permission tool call kind ${p.toolCall.kind}`);
    check(p.toolCall.locations?.[0]?.path === inbox, `permission location ${JSON.stringify(p.toolCall.locations)}`);
    const diff = p.toolCall.content?.[0];
    check(diff?.type === "diff" && diff.path === inbox && diff.oldText === original && diff.newText.endsWith(line + "\n"), `permission diff ${JSON.stringify(diff).slice(0, 300)}`);
    check(JSON.stringify(p.options.map((o) => o.kind)) === JSON.stringify(["allow_once", "reject_once"]), `options ${JSON.stringify(p.options)}`);
    const call = allowed.updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "edit");
    check(call && call.toolCallId === p.toolCall.toolCallId, `the permission names no announced edit tool call: ${JSON.stringify(call)}`);
    check(writes.length === 1 && writes[0] === inbox, `fs/write_text_file calls ${JSON.stringify(writes)}`);
    const afterAllow = await readFile(inbox, "utf8");
    check(afterAllow.endsWith(line + "\n") && afterAllow.startsWith(original.trimEnd()), `note after the allowed edit: ${afterAllow.slice(-200)}`);
    check(textOf(allowed.updates, "agent_message_chunk").includes('"applied":true'), `the agent was not told the edit was applied: ${textOf(allowed.updates, "agent_message_chunk")}`);
    log("edit allowed and written through fs/write_text_file");

    const rejected = await turn(session, "add it again");
    check(rejected.stopReason === "end_turn", `rejected edit: stopped with ${rejected.stopReason}`);
    check(asked.length === 2 && writes.length === 1, `after reject: ${asked.length} asks, ${writes.length} writes`);
    check((await readFile(inbox, "utf8")) === afterAllow, "the note changed after a rejected edit");
    check(textOf(rejected.updates, "agent_message_chunk").includes("refused by the person"), `the agent was not told of the refusal: ${textOf(rejected.updates, "agent_message_chunk")}`);
    log("edit rejected: the note is unchanged");
  });
  agent.child.stdin.end();
  const exit = await agent.exited;
  model.server.close();
  check(exit.code === 0, `exit after EOF: ${JSON.stringify(exit)}\n${agent.stderr()}`);
  await agent.lines;
}

// closedURL is a base URL at a local port nothing listens on.
async function closedURL() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

// environmentChecks starts the agent in the environments people have:
// initialize and session/new succeed in each, and a prompt searches and
// answers offline, or fails alone where a model is named and cannot be
// reached, saying which variable chose it. The key never shows.
async function environmentChecks() {
  const closed = await closedURL();
  const cases = [
    { name: "OPENAI_API_KEY without a model", env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "", OPENAI_MODEL: "" } },
    { name: "OPENAI_BASE_URL at a closed port", env: { OPENAI_API_KEY: "", OPENAI_BASE_URL: closed, OPENAI_MODEL: "" } },
    { name: "a model at a closed port", env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: closed, OPENAI_MODEL: "llama3.1" }, fails: "chosen by OPENAI_MODEL" },
  ];
  for (const c of cases) {
    const agent = startAgent(c.env);
    await newClient([]).connectWith(agent.stream, async (cx) => {
      await cx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      const session = await cx.buildSession(vault).start();
      const prompt = [{ type: "text", text: "how do I keep my sourdough starter alive?" }];
      if (c.fails) {
        const err = await expectError(cx.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt }), -32603, c.name);
        check(err.message.includes(c.fails) && !err.message.includes("sk-test"), `${c.name}: ${err.message}`);
        log(`${c.name}: the prompt failed alone: ${err.message.slice(0, 120)}`);
        // The session still serves.
        await cx.request(acp.methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "roa" });
      } else {
        const r = await turn(session, prompt);
        check(r.stopReason === "end_turn", `${c.name}: stopped with ${r.stopReason}`);
        checkRun(c.name, r.updates, { planner: true });
        log(`${c.name}: searched and answered offline`);
      }
    });
    agent.child.stdin.end();
    const exit = await agent.exited;
    check(exit.code === 0, `${c.name}: exit ${JSON.stringify(exit)}\n${agent.stderr()}`);
    check(!agent.stderr().includes("sk-test"), `${c.name}: the key is on stderr`);
    await agent.lines;
  }
}

try {
  await offlineChecks();
  await environmentChecks();
  await cancelChecks();
  await editChecks();
  clearTimeout(watchdog);
  console.log("acp client: all checks passed");
} catch (err) {
  console.error(err instanceof Failure ? `FAIL: ${err.message}` : err);
  process.exit(1);
}
