// A chat that remembers, on the Vercel AI SDK: the model is wrapped with epimem's middleware,
// which tells it what memory holds that bears on each line and remembers each exchange. Run it
// twice with one user: the second session knows the first.
//
//   EPIMEM_URL=http://127.0.0.1:7878 OPENAI_BASE_URL=http://127.0.0.1:8080/v1 \
//     node ai-sdk.mjs session-1 maya
import { createInterface } from "node:readline";

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, wrapLanguageModel } from "ai";
import { Client } from "epimem";
import { memoryMiddleware } from "epimem/ai-sdk";

const [conversation = "session-1", user = "me"] = process.argv.slice(2);
const memory = new Client(process.env.EPIMEM_URL ?? "http://127.0.0.1:7878");
const provider = createOpenAICompatible({
  name: "chat",
  baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
  apiKey: process.env.OPENAI_API_KEY,
});
const model = wrapLanguageModel({
  model: provider(process.env.OPENAI_MODEL ?? "gpt-4o-mini"),
  middleware: memoryMiddleware(memory, { conversation, user }),
});

for await (const line of createInterface({ input: process.stdin })) {
  const { text } = await generateText({ model, prompt: line.trim() });
  console.log(text);
}
