// What the tests share: `epimem serve` on a free loopback port of a fresh database, and a
// scripted OpenAI-compatible model.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";

/** The client's folder. */
export const here = dirname(dirname(fileURLToPath(import.meta.url)));
/** The `epimem` binary the tests drive: EPIMEM_BIN, else the debug build (built here first
 * when a fresh clone has none, so that `npm install && npm test` is all it takes). */
export const bin = process.env.EPIMEM_BIN ?? join(here, "../../target/debug/epimem");
if (!process.env.EPIMEM_BIN && !existsSync(bin)) {
  execFileSync("cargo", ["build", "--quiet", "-p", "epimem"], { cwd: join(here, "../.."), stdio: "inherit" });
}

/** `epimem serve` on a free port of a fresh database (extra `args` before `serve`). */
export async function serve(...args) {
  const dir = mkdtempSync(join(tmpdir(), "epimem-ts-"));
  const config = join(dir, "epimem.toml");
  writeFileSync(config, "[server]\ntick_seconds = 0.1\n");
  const db = join(dir, "memory.db");
  const env = { ...process.env, EPIMEM_EMBEDDER: "hash", EPIMEM_CLOCK: "2026-05-04T12:00:00Z" };
  for (const name of ["EPIMEM_TENANT", "EPIMEM_CONFIG", "EPIMEM_LLM_URL", "EPIMEM_DB"]) delete env[name];
  const child = spawn(bin, ["--db", db, "--config", config, ...args, "serve", "--listen", "127.0.0.1:0"], {
    env,
    stdio: ["ignore", "pipe", "ignore"],
  });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`epimem serve exited with ${code}`)));
  });
  return { child, db, url: line.trim().split(" ").pop() };
}

/** An OpenAI-compatible model on loopback (start it with `server.listen`) that answers
 * "Noted.", whole or streamed, and keeps every request it was sent: `{ path, body }`. */
export function scriptedModel() {
  const requests = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const sent = JSON.parse(body);
      requests.push({ path: request.url, body: sent });
      const created = Math.floor(Date.now() / 1000);
      if (sent.stream) {
        response.writeHead(200, { "content-type": "text/event-stream" });
        for (const piece of ["No", "ted."]) {
          const chunk = { id: "c", object: "chat.completion.chunk", created, model: "scripted", choices: [{ index: 0, delta: { content: piece } }] };
          response.write(`data: ${JSON.stringify(chunk)}\n\n`);
        }
        const last = { id: "c", object: "chat.completion.chunk", created, model: "scripted", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
        response.end(`data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`);
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          created,
          model: "scripted",
          choices: [{ index: 0, message: { role: "assistant", content: "Noted." }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  return { server, requests };
}

/**
 * A real server and a scripted model for one file's tests, started before them and stopped
 * after: `epimem` and `model` are set once they run.
 */
export function serverAndModel() {
  const running = {};
  before(async () => {
    running.epimem = await serve();
    running.model = scriptedModel();
    await new Promise((resolve) => running.model.server.listen(0, "127.0.0.1", resolve));
  });
  after(() => {
    running.epimem.child.kill();
    running.model.server.close();
  });
  return running;
}

/** What a request the model was sent said in its system messages. */
export const systemOf = (request) =>
  request.body.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n");
