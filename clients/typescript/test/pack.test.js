// The client installed as a user installs it: `npm pack` of this folder (which builds it, by
// `prepare`), installed into a fresh project, imported by its name and asked of a real server.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { here, serve } from "./server.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

test("the packed tarball installs into a fresh project and answers a real server", async () => {
  const work = mkdtempSync(join(tmpdir(), "epimem-pack-"));
  execFileSync(npm, ["pack", "--silent", "--pack-destination", work], { cwd: here, stdio: ["ignore", "ignore", "inherit"] });
  const [tarball] = readdirSync(work).filter((name) => name.endsWith(".tgz"));
  assert.ok(tarball, "npm pack wrote a tarball");
  const project = join(work, "project");
  execFileSync("mkdir", [project]);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fresh", private: true, type: "module" }));
  // The client has no runtime dependency: nothing but the tarball is installed.
  execFileSync(npm, ["install", "--offline", "--no-audit", "--no-fund", "--silent", join(work, tarball)], {
    cwd: project,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const server = await serve();
  try {
    const script = `
      import { Client } from "epimem";
      import { memoryMiddleware } from "epimem/ai-sdk";
      import { EpimemSession } from "epimem/openai-agents";
      const memory = new Client(process.argv[1]);
      await memory.remember({ conversation: "c", role: "user", content: "Ana is vegetarian." });
      const block = await memory.recall("Who is vegetarian?", { budget: 200 });
      const adapters = [typeof memoryMiddleware, typeof EpimemSession];
      console.log(JSON.stringify({ context: block.context, messages: (await memory.stats()).messages, adapters }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script, server.url], {
      cwd: project,
      encoding: "utf8",
    });
    const answer = JSON.parse(out);
    assert.equal(answer.messages, 1);
    assert.match(answer.context ?? "", /Ana is vegetarian/);
    assert.deepEqual(answer.adapters, ["function", "function"], "the adapters' subpaths import");
  } finally {
    server.child.kill();
  }
});
