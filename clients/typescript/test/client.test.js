// The client against a real `epimem serve` on loopback (EPIMEM_BIN, else the debug build).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";

import { Client, EpimemError } from "../dist/index.js";
import { bin, here, serve } from "./server.js";

let server;
before(async () => {
  server = await serve();
});
after(() => server.child.kill());

test("remembers, recalls at once, and after a flush lists, corrects and forgets", async () => {
  const memory = new Client(server.url);
  const added = await memory.remember([
    { conversation: "trip", role: "user", content: "We are moving the team offsite to Lisbon in June.", id: "m0" },
    { conversation: "trip", role: "user", content: "Remember Ana is vegetarian.", id: "m1" },
  ]);
  assert.equal(added.inserted, 2);
  assert.equal((await memory.remember({ conversation: "trip", role: "user", content: "Remember Ana is vegetarian.", id: "m1" })).duplicates, 1);
  const block = await memory.recall("Who is vegetarian?", { budget: 300 });
  assert.match(block.context ?? "", /Ana is vegetarian/);
  await memory.flush("trip");
  const [first] = (await memory.episodes()).episodes;
  assert.ok(first, "an episode after the flush");
  const corrected = await memory.correct(first.id, { title: "Lisbon offsite" });
  assert.equal(corrected.title, "Lisbon offsite");
  assert.equal((await memory.episode(first.id)).title, "Lisbon offsite");
  assert.deepEqual((await memory.versions(first.id)).versions.map((v) => v.title), [first.title]);
  assert.equal((await memory.stats()).messages, 2);
  const nothing = await memory.recall("kubernetes autoscaling", { budget: 300 });
  assert.equal(nothing.nothing_relevant, true);
  assert.ok((await memory.forget({ episode: first.id })).episodes >= 1);
  await assert.rejects(memory.episode(first.id), (e) => e instanceof EpimemError && e.code === "not_found" && e.status === 404);
});

test("a conversation's messages read back, and its newest taken back until closed", async () => {
  const memory = new Client(server.url);
  await memory.remember([
    { conversation: "undo", role: "user", content: "Hi there", id: "u1", metadata: { item: { n: 1 } } },
    { conversation: "undo", role: "user", content: "Oops, wrong window", id: "u2" },
  ]);
  const read = await memory.messages("undo");
  assert.deepEqual(read.messages.map((m) => [m.seq, m.id, m.content]), [[1, "u1", "Hi there"], [2, "u2", "Oops, wrong window"]]);
  assert.deepEqual(read.messages[0].metadata, { item: { n: 1 } });
  assert.deepEqual((await memory.messages("undo", { limit: 1 })).next_before, 2);
  assert.equal((await memory.takeBack("undo")).content, "Oops, wrong window");
  assert.equal((await memory.conversation("undo")).last_seq, 1);
  await memory.flush("undo");
  await assert.rejects(memory.takeBack("undo"), (e) => e instanceof EpimemError && e.code === "conflict" && e.status === 409);
});

test("a bad request is an error carrying the API's code", async () => {
  const memory = new Client(server.url);
  await assert.rejects(memory.recall("  "), (e) => e instanceof EpimemError && e.code === "bad_input" && /query/.test(e.message));
  const nobody = new Client("http://127.0.0.1:9", { retries: 1 });
  await assert.rejects(nobody.stats(), (e) => e instanceof EpimemError && e.code === "unavailable");
});

test("busy answers are tried again as Retry-After says", async () => {
  const plan = [503, 429];
  let seen = 0;
  const flaky = createServer((request, response) => {
    seen++;
    const status = plan.shift() ?? 200;
    response.writeHead(status, { "content-type": "application/json", "retry-after": "0" });
    response.end(
      JSON.stringify(
        status === 200
          ? { conversations: 0, messages: 7, pending_messages: 0, episodes: 0, queued_jobs: 0, failed_jobs: 0, llm: {} }
          : { error: { code: "unavailable", message: "busy" } },
      ),
    );
  });
  await new Promise((resolve) => flaky.listen(0, "127.0.0.1", resolve));
  try {
    const client = new Client(`http://127.0.0.1:${flaky.address().port}`, { retries: 3 });
    assert.equal((await client.stats()).messages, 7);
    assert.equal(seen, 3);
  } finally {
    flaky.close();
  }
});

test("the types are what the server's OpenAPI document gives", () => {
  execFileSync(process.execPath, [join(here, "scripts/generate.mjs"), "--check"], {
    env: { ...process.env, EPIMEM_BIN: bin },
    stdio: "inherit",
  });
});

test("a caller's trace context goes with each call, and the server's trace joins it", async (t) => {
  const python = process.env.EPIMEM_TEST_OTLP;
  if (!python) {
    assert.ok(!process.env.EPIMEM_REQUIRE_OTLP, "EPIMEM_REQUIRE_OTLP is set but EPIMEM_TEST_OTLP is not");
    t.skip("no OTLP receiver (EPIMEM_TEST_OTLP; scripts/otel-receiver.sh)");
    return;
  }
  // oteltest's receiver (PyPI), as the Rust and Python tests use it.
  const receiver = spawn(python, [join(here, "../../crates/cli/tests/otel/receive.py")], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  t.after(() => receiver.kill());
  const spans = [];
  const port = await new Promise((resolve) => {
    createInterface({ input: receiver.stdout }).on("line", (line) => {
      const said = JSON.parse(line);
      if (said.port) resolve(said.port);
      else spans.push(said);
    });
  });
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
  let served;
  try {
    served = await serve();
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  }
  const trace = "0af7651916cd43dd8448eb211c80319c";
  const caller = "b7ad6b7169203331";
  const client = new Client(served.url, { headers: () => ({ traceparent: `00-${trace}-${caller}-01` }) });
  await client.recall("what did Biscuit chew");
  const exited = new Promise((resolve) => served.child.once("exit", resolve));
  served.child.kill("SIGTERM");
  await exited;
  const deadline = Date.now() + 30_000;
  let request;
  while (!(request = spans.find((s) => s.name === "POST /v1/recall")) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(request, `no request span in ${spans.map((s) => s.name)}`);
  assert.deepEqual([request.trace_id, request.parent_span_id], [trace, caller]);
});
