// The Vercel AI SDK's middleware against the real `ai` package (pinned in package.json), its
// OpenAI-compatible provider calling a scripted model server on loopback, and a real
// `epimem serve`: two sessions of one user, the second told what the first said, a new task
// told nothing, and a streamed answer remembered like a generated one.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText, wrapLanguageModel } from "ai";

import { memoryMiddleware } from "../dist/ai-sdk.js";
import { Client } from "../dist/index.js";
import { here, serverAndModel, systemOf } from "./server.js";

/** What `conversation` holds, oldest first, once closed into episodes: [role, content]. */
async function heldIn(memory, conversation) {
  await memory.flush(conversation);
  const held = [];
  for (const e of (await memory.episodes({ conversation })).episodes.reverse()) {
    for (const m of (await memory.episode(e.id)).messages ?? []) if (!m.context) held.push([m.role, m.content]);
  }
  return held;
}


const running = serverAndModel();

test("a second session is told what the first said, and a new task nothing", async () => {
  const { epimem, model } = running;
  const memory = new Client(epimem.url);
  const provider = createOpenAICompatible({ name: "scripted", baseURL: `http://127.0.0.1:${model.server.address().port}/v1` });
  const session = (conversation) =>
    wrapLanguageModel({ model: provider("scripted"), middleware: memoryMiddleware(memory, { conversation, user: "maya" }) });

  const first = await generateText({ model: session("s1"), prompt: "My sister Ana moved to Porto last spring." });
  assert.equal(first.text, "Noted.");
  assert.equal(systemOf(model.requests.at(-1)), "", "nothing is told while memory is empty");

  const second = await generateText({ model: session("s2"), prompt: "Where does my sister live now?" });
  assert.equal(second.text, "Noted.");
  assert.match(systemOf(model.requests.at(-1)), /Ana moved to Porto/);

  await generateText({ model: session("s2"), prompt: "Write a haiku about autumn leaves." });
  assert.equal(systemOf(model.requests.at(-1)), "", "a new task is told nothing");

  // Each exchange was remembered in its session, by its user.
  assert.deepEqual(await heldIn(memory, "s1"), [
    ["user", "My sister Ana moved to Porto last spring."],
    ["assistant", "Noted."],
  ]);
  assert.equal((await memory.conversation("s2")).last_seq, 4);
  // Another person's memory is not read.
  const other = wrapLanguageModel({ model: provider("scripted"), middleware: memoryMiddleware(memory, { conversation: "o1", user: "leo" }) });
  await generateText({ model: other, prompt: "Where does my sister live now?" });
  assert.equal(systemOf(model.requests.at(-1)), "");
});

test("a streamed answer is remembered whole", async () => {
  const { epimem, model } = running;
  const memory = new Client(epimem.url);
  const provider = createOpenAICompatible({ name: "scripted", baseURL: `http://127.0.0.1:${model.server.address().port}/v1` });
  const streamed = streamText({
    model: wrapLanguageModel({ model: provider("scripted"), middleware: memoryMiddleware(memory, { conversation: "st", user: "maya" }) }),
    prompt: "The offsite is in Lisbon in June.",
  });
  let text = "";
  for await (const piece of streamed.textStream) text += piece;
  assert.equal(text, "Noted.");
  assert.deepEqual(await heldIn(memory, "st"), [
    ["user", "The offsite is in Lisbon in June."],
    ["assistant", "Noted."],
  ]);
});

test("the middleware is what wrapLanguageModel takes, to TypeScript", () => {
  const tsc = join(here, "node_modules/typescript/bin/tsc");
  const options = ["--noEmit", "--strict", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--target", "ES2022", "--skipLibCheck"];
  execFileSync(process.execPath, [tsc, ...options, join(here, "test/ai-sdk-types.ts")], { cwd: here, stdio: "inherit" });
});
