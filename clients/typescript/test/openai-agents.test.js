// The OpenAI Agents SDK's session and input filter with the real `@openai/agents` (pinned in
// package.json), its chat-completions model calling a scripted model server on loopback, and a
// real `epimem serve`: two sessions of one user, the second told what the first said, a new
// task told nothing, a session read back whole by the SDK, and each method of `Session`.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";

import { Client, EpimemError } from "../dist/index.js";
import { EpimemSession } from "../dist/openai-agents.js";
import { here, serverAndModel, systemOf } from "./server.js";

// Traces would be sent to OpenAI: nothing leaves loopback.
setTracingDisabled(true);

const running = serverAndModel();


async function say(session, text) {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${running.model.server.address().port}/v1`, apiKey: "none", maxRetries: 0 });
  const agent = new Agent({ name: "assistant", instructions: "You are terse.", model: new OpenAIChatCompletionsModel(client, "scripted") });
  const result = await run(agent, text, { session, callModelInputFilter: session.inputFilter });
  return result.finalOutput;
}

test("a second session is told what the first said, and a new task nothing", async () => {
  const { epimem, model } = running;
  const memory = new Client(epimem.url);
  assert.equal(await say(new EpimemSession(memory, "s1", { user: "maya" }), "My sister Ana moved to Porto last spring."), "Noted.");
  assert.equal(systemOf(model.requests.at(-1)), "You are terse.", "nothing is told while memory is empty");

  const second = new EpimemSession(memory, "s2", { user: "maya" });
  await say(second, "Where does my sister live now?");
  assert.match(systemOf(model.requests.at(-1)), /^You are terse\.\n\nWhat you remember of earlier talks:[^]*Ana moved to Porto/);

  await say(second, "Write a haiku about autumn leaves.");
  assert.equal(systemOf(model.requests.at(-1)), "You are terse.", "a new task is told nothing");
  // The SDK read the session back: the second turn was sent the first.
  const text = (content) => (typeof content === "string" ? content : content.map((part) => part.text).join(""));
  const sent = model.requests.at(-1).body.messages.filter((m) => m.role !== "system").map((m) => text(m.content));
  assert.deepEqual(sent, ["Where does my sister live now?", "Noted.", "Write a haiku about autumn leaves."]);

  await say(new EpimemSession(memory, "o1", { user: "leo" }), "Where does my sister live now?");
  assert.equal(systemOf(model.requests.at(-1)), "You are terse.", "another person's memory is not read");
});

test("each method of the session", async () => {
  const { epimem } = running;
  const memory = new Client(epimem.url);
  const session = new EpimemSession(memory, "items", { user: "maya" });
  assert.equal(await session.getSessionId(), "items");
  assert.deepEqual(await session.getItems(), []);
  assert.equal(await session.popItem(), undefined);
  const items = [
    { role: "user", content: "Weather in Porto?" },
    { type: "function_call", callId: "c1", name: "weather", arguments: '{"city":"Porto"}' },
    { type: "function_call_result", callId: "c1", name: "weather", status: "completed", output: { type: "text", text: "Sunny" } },
    { role: "assistant", status: "completed", content: [{ type: "output_text", text: "Sunny." }] },
  ];
  await session.addItems(items);
  assert.deepEqual(await session.getItems(), items);
  assert.deepEqual(await session.getItems(2), items.slice(2));
  const held = (await memory.messages("items")).messages.map((m) => [m.role, m.content]);
  assert.deepEqual(held, [["user", "Weather in Porto?"], ["tool", 'weather({"city":"Porto"})'], ["tool", "Sunny"], ["assistant", "Sunny."]]);

  assert.deepEqual(await session.popItem(), items[3]);
  assert.deepEqual(await session.getItems(), items.slice(0, 3));
  await memory.flush("items");
  await assert.rejects(session.popItem(), (e) => e instanceof EpimemError && e.status === 409);
  await session.clearSession();
  assert.deepEqual(await session.getItems(), []);
  await session.clearSession();
});

test("the session is a Session, and its filter a callModelInputFilter, to TypeScript", () => {
  const tsc = join(here, "node_modules/typescript/bin/tsc");
  const options = ["--noEmit", "--strict", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--target", "ES2022", "--skipLibCheck"];
  execFileSync(process.execPath, [tsc, ...options, join(here, "test/openai-agents-types.ts")], { cwd: here, stdio: "inherit" });
});
