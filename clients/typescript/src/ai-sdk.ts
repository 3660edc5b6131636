// epimem for the Vercel AI SDK (`ai`): a language-model middleware for `wrapLanguageModel`.
// Before each call the model is told what memory holds that bears on the user's last message
// (nothing is added when nothing does, and nothing of this conversation, which the prompt holds
// already); after it, the exchange is remembered. The SDK's types are not imported: the
// middleware is written to the shape `wrapLanguageModel` takes, so the client keeps no runtime
// or type dependency on `ai`.

import type { Client } from "./index.js";

/** A part of a message of the SDK's prompt (`LanguageModelV4Prompt`); text is what we read. */
type Part = { type: string; text?: string };
/** A message of the SDK's prompt. */
type PromptMessage =
  | { role: "system"; content: string }
  | { role: "user" | "assistant" | "tool"; content: Part[] };
/** The call options the middleware reads and changes (`LanguageModelV4CallOptions`). */
type CallOptions = { prompt: PromptMessage[] };
/** What a generate call answers, as far as the middleware reads it. */
type GenerateResult = { content: Part[] };
/** A stream call's answer: its parts, of which text deltas are read. */
type StreamResult = { stream: ReadableStream<{ type: string; delta?: string }> };

export interface MemoryMiddlewareOptions {
  /** The conversation the exchanges are remembered in (a session, a thread). */
  conversation: string;
  /** The person: recall reads every conversation of theirs, and no one else's. */
  user?: string;
  /** Tokens the recalled block may take (default 500). */
  budget?: number;
  /** How the block is put to the model (default: "What you remember of earlier talks:"). */
  heading?: string;
}

/** The text of a message of the prompt. */
function textOf(message: PromptMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

/** The user's last message in `prompt`, if any. */
function lastSaid(prompt: PromptMessage[]): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i].role === "user") return textOf(prompt[i]).trim();
  }
  return "";
}

/**
 * A middleware for `wrapLanguageModel({ model, middleware })` that recalls before the model
 * is called and remembers the exchange after it.
 */
export function memoryMiddleware(memory: Client, options: MemoryMiddlewareOptions) {
  const budget = options.budget ?? 500;
  const heading = options.heading ?? "What you remember of earlier talks:";
  const remember = async (said: string, reply: string) => {
    const messages = [];
    if (said) messages.push({ conversation: options.conversation, user: options.user, role: "user" as const, content: said });
    if (reply) messages.push({ conversation: options.conversation, user: options.user, role: "assistant" as const, content: reply });
    if (messages.length) await memory.remember(messages);
  };
  return {
    specificationVersion: "v4" as const,
    async transformParams<P extends CallOptions>({ params }: { params: P }): Promise<P> {
      const said = lastSaid(params.prompt);
      if (!said) return params;
      const recalled = await memory.recall(said, { budget, user: options.user, asked_in: options.conversation });
      const block = recalled.context?.trim();
      if (!block) return params;
      const told: PromptMessage = { role: "system", content: `${heading}\n${block}` };
      return { ...params, prompt: [told, ...params.prompt] };
    },
    async wrapGenerate<R extends GenerateResult>({
      doGenerate,
      params,
    }: {
      doGenerate: () => PromiseLike<R>;
      params: CallOptions;
    }): Promise<R> {
      const result = await doGenerate();
      const reply = result.content.filter((p) => p.type === "text").map((p) => p.text ?? "").join("");
      await remember(lastSaid(params.prompt), reply);
      return result;
    },
    async wrapStream<S extends StreamResult>({
      doStream,
      params,
    }: {
      doStream: () => PromiseLike<S>;
      params: CallOptions;
    }): Promise<S> {
      const result = await doStream();
      let reply = "";
      const said = lastSaid(params.prompt);
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (part.type === "text-delta" && typeof part.delta === "string") reply += part.delta;
            controller.enqueue(part);
          },
          async flush() {
            await remember(said, reply);
          },
        }),
      );
      return { ...result, stream: stream as S["stream"] };
    },
  };
}
