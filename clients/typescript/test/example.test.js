// The chat examples (plain fetch, and the Vercel AI SDK's), run as a user runs them, against
// `epimem serve` and a scripted OpenAI-compatible model server on loopback: the second
// session's first request to the model carries what the first was told.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { here, scriptedModel, serve } from "./server.js";

/** Runs `example` (a file of examples/, with its arguments after the session) twice, one
 * session each, against a real server and a scripted model; the requests the model was sent. */
async function twoSessions(example, ...args) {
  const { server: model, requests } = scriptedModel();
  await new Promise((resolve) => model.listen(0, "127.0.0.1", resolve));
  const server = await serve();
  try {
    // Not a synchronous child: the scripted model answers from this process's event loop.
    const run = (session, said) =>
      new Promise((resolve, reject) => {
        const chat = spawn(process.execPath, [join(here, "examples", example), session, ...args], {
          env: {
            ...process.env,
            EPIMEM_URL: server.url,
            OPENAI_BASE_URL: `http://127.0.0.1:${model.address().port}/v1`,
            OPENAI_MODEL: "scripted",
            OPENAI_API_KEY: "none",
            OPENAI_AGENTS_DISABLE_TRACING: "1",
          },
          stdio: ["pipe", "pipe", "inherit"],
        });
        let out = "";
        chat.stdout.on("data", (chunk) => (out += chunk));
        chat.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${example} exited with ${code}`))));
        chat.stdin.end(said);
      });
    assert.equal((await run("s1", "My sister Ana moved to Porto last spring.\n")).trim(), "Noted.");
    assert.equal((await run("s2", "Where does my sister live now?\n")).trim(), "Noted.");
  } finally {
    server.child.kill();
    model.close();
  }
  for (const request of requests) assert.equal(request.path, "/v1/chat/completions");
  return requests.map((r) => r.body.messages);
}

test("a second session is told what the first was", async () => {
  const [first, second] = await twoSessions("chat.mjs");
  assert.doesNotMatch(first[0].content, /Porto/);
  assert.match(second[0].content, /Ana moved to Porto/);
  assert.deepEqual(second[1], { role: "user", content: "Where does my sister live now?" });
});

test("the AI SDK example: a second session is told what the first was", async () => {
  const [first, second] = await twoSessions("ai-sdk.mjs", "maya");
  assert.deepEqual(first.map((m) => m.role), ["user"], "nothing is told while memory is empty");
  assert.equal(second[0].role, "system");
  assert.match(second[0].content, /Ana moved to Porto/);
  assert.deepEqual(second.at(-1), { role: "user", content: "Where does my sister live now?" });
});

test("the OpenAI Agents SDK example: a second session is told what the first was", async () => {
  const [first, second] = await twoSessions("openai-agents.mjs");
  assert.deepEqual(first.map((m) => [m.role, m.content]), [["system", "You are terse."], ["user", "My sister Ana moved to Porto last spring."]]);
  assert.equal(second[0].role, "system");
  assert.match(second[0].content, /^You are terse\.\n\nWhat you remember of earlier talks:[^]*Ana moved to Porto/);
});
