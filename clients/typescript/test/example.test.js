// The chat example, run as a user runs it, against `epimem serve` and a scripted
// OpenAI-compatible model server on loopback: the second session's first request to the model
// carries what the first was told.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import { test } from "node:test";

import { here, serve } from "./server.js";

test("a second session is told what the first was", async () => {
  const requests = [];
  const model = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      requests.push({ path: request.url, body: JSON.parse(body) });
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: "Noted." } }] }));
    });
  });
  await new Promise((resolve) => model.listen(0, "127.0.0.1", resolve));
  const server = await serve();
  try {
    // Not a synchronous child: the scripted model answers from this process's event loop.
    const run = (session, said) =>
      new Promise((resolve, reject) => {
        const chat = spawn(process.execPath, [join(here, "examples/chat.mjs"), session], {
          env: {
            ...process.env,
            EPIMEM_URL: server.url,
            OPENAI_BASE_URL: `http://127.0.0.1:${model.address().port}/v1`,
            OPENAI_MODEL: "scripted",
          },
          stdio: ["pipe", "pipe", "inherit"],
        });
        let out = "";
        chat.stdout.on("data", (chunk) => (out += chunk));
        chat.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`chat.mjs exited with ${code}`))));
        chat.stdin.end(said);
      });
    assert.equal((await run("s1", "My sister Ana moved to Porto last spring.\n")).trim(), "Noted.");
    assert.equal((await run("s2", "Where does my sister live now?\n")).trim(), "Noted.");
  } finally {
    server.child.kill();
    model.close();
  }
  const [first, second] = requests;
  assert.equal(first.path, "/v1/chat/completions");
  assert.doesNotMatch(first.body.messages[0].content, /Porto/);
  assert.match(second.body.messages[0].content, /Ana moved to Porto/);
  assert.deepEqual(second.body.messages[1], { role: "user", content: "Where does my sister live now?" });
});
