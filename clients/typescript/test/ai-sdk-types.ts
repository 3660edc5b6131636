// Compiled (not run) by ai-sdk.test.js against the real `ai` types: the middleware is what
// `wrapLanguageModel` takes, as a TypeScript user writes it.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { wrapLanguageModel } from "ai";
import { Client } from "epimem";
import { memoryMiddleware } from "epimem/ai-sdk";

const provider = createOpenAICompatible({ name: "local", baseURL: "http://127.0.0.1:8080/v1" });
export const model = wrapLanguageModel({
  model: provider("any"),
  middleware: memoryMiddleware(new Client(), { conversation: "session-1", user: "maya" }),
});
