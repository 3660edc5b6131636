// An OpenAI Agents SDK agent whose session is kept in epimem, with any OpenAI-compatible
// model: the session holds the conversation, and its filter tells the model what memory holds
// that bears on each line. Run it twice with two sessions: the second knows the first.
//
//   EPIMEM_URL=http://127.0.0.1:7878 OPENAI_BASE_URL=http://127.0.0.1:8080/v1 \
//     node openai-agents.mjs session-1
import { createInterface } from "node:readline";

import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents";
import { Client } from "epimem";
import { EpimemSession } from "epimem/openai-agents";
import OpenAI from "openai";

setTracingDisabled(process.env.OPENAI_AGENTS_DISABLE_TRACING === "1");
const [sessionId = "session-1"] = process.argv.slice(2);
const model = new OpenAIChatCompletionsModel(new OpenAI(), process.env.OPENAI_MODEL ?? "gpt-4o-mini");
const agent = new Agent({ name: "assistant", instructions: "You are terse.", model });

const session = new EpimemSession(new Client(process.env.EPIMEM_URL), sessionId, { user: "maya" });
for await (const line of createInterface({ input: process.stdin })) {
  const result = await run(agent, line, { session, callModelInputFilter: session.inputFilter });
  console.log(result.finalOutput);
}
