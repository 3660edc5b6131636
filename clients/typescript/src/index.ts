// A client for `epimem serve`. The request and answer types are the API's own, generated from
// its OpenAPI document (src/schema.d.ts); the methods are those of the Python package, in
// camelCase. No runtime dependency: the platform's fetch.

import type { components, operations } from "./schema.js";

type Schemas = components["schemas"];
/** The query parameters of an operation, as the OpenAPI document gives them. */
type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
export type MessageIn = Schemas["MessageIn"];
export type AddedOut = Schemas["AddedOut"];
export type RecallIn = Schemas["RecallIn"];
export type RecallOut = Schemas["RecallOut"];
export type TurnOut = Schemas["TurnOut"];
export type NextTurnIn = Schemas["NextTurnIn"];
export type NextTurnOut = Schemas["NextTurnOut"];
export type ProjectMemoryIn = Schemas["ProjectMemoryIn"];
export type ProjectMemoryOut = Schemas["ProjectMemoryOut"];
export type EpisodeOut = Schemas["EpisodeOut"];
export type EpisodesOut = Schemas["EpisodesOut"];
export type EpisodeEditIn = Schemas["EpisodeEditIn"];
export type EpisodeVersionsOut = Schemas["EpisodeVersionsOut"];
export type DeletedOut = Schemas["DeletedOut"];
export type FlushedOut = Schemas["FlushedOut"];
export type ConversationOut = Schemas["ConversationOut"];
export type ConversationsOut = Schemas["ConversationsOut"];
export type MessagesOut = Schemas["MessagesOut"];
export type StoredMessageOut = Schemas["StoredMessageOut"];
export type TimelineOut = Schemas["TimelineOut"];
export type TimelineNodeOut = Schemas["TimelineNodeOut"];
export type FactsOut = Schemas["FactsOut"];
export type JobsOut = Schemas["JobsOut"];
export type StatsOut = Schemas["StatsOut"];

/** A call that failed: `code` is the API's stable code (`bad_input`, `not_found`, …). */
export class EpimemError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(`${code}: ${message}`);
    this.name = "EpimemError";
  }
}

const STATUS_CODES: Record<number, string> = {
  400: "bad_input",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  408: "timeout",
  409: "conflict",
  413: "payload_too_large",
  503: "unavailable",
};
const RETRIED = new Set([429, 500, 502, 503, 504]);

export interface ClientOptions {
  /** Sent as a bearer token once the server has keys. */
  apiKey?: string;
  /** Per attempt, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** Attempts after the first on 429, a 5xx status or no connection (default 3). */
  retries?: number;
  /**
   * Headers to add to each request, asked for at each call: the caller's trace context, for
   * one, which the server's trace of the call then joins (with `@opentelemetry/api`:
   * `() => { const c = {}; propagation.inject(context.active(), c); return c; }`).
   */
  headers?: () => Record<string, string>;
}

type Query = Record<string, string | number | boolean | undefined>;

/** A running `epimem serve`. */
export class Client {
  readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly extraHeaders?: () => Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;

  constructor(baseUrl = "http://127.0.0.1:7878", options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.headers = { "content-type": "application/json" };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.extraHeaders = options.headers;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retries = options.retries ?? 3;
  }

  /** Stores one message or many; one sent again with the same `id` is stored once. */
  remember(messages: MessageIn | MessageIn[]): Promise<AddedOut> {
    return this.send("POST", "/v1/messages", {}, messages);
  }

  /** Closes what is pending into episodes now: in one conversation, or in every one of the tenant. */
  flush(conversation?: string): Promise<FlushedOut> {
    if (conversation === undefined) return this.send("POST", "/v1/flush");
    return this.send("POST", `/v1/conversations/${part(conversation)}/flush`);
  }

  /** A conversation's state: messages, what is pending, its episodes and jobs. */
  conversation(conversation: string): Promise<ConversationOut> {
    return this.send("GET", `/v1/conversations/${part(conversation)}`);
  }

  /** The tenant's conversations by name, in name order; pass `next_after` back as `after`. */
  conversations(options: QueryOf<"list_conversations"> = {}): Promise<ConversationsOut> {
    return this.send("GET", "/v1/conversations", options);
  }

  /**
   * A conversation's messages as it holds them, oldest first: the newest `limit` (default 100)
   * of those before `before`, each with its metadata and the episode it closed into.
   */
  messages(conversation: string, options: QueryOf<"list_messages"> = {}): Promise<MessagesOut> {
    return this.send("GET", `/v1/conversations/${part(conversation)}/messages`, options);
  }

  /**
   * Takes back the conversation's newest message while it is in no episode (an agent undoing
   * its last turn); a 409 `EpimemError` once an episode holds it.
   */
  takeBack(conversation: string): Promise<StoredMessageOut> {
    return this.send("DELETE", `/v1/conversations/${part(conversation)}/messages/newest`);
  }

  /** The best episodes for `query`; with `budget`, a context block of at most that many tokens. */
  recall(query: string, options: Omit<RecallIn, "query"> = {}): Promise<RecallOut> {
    return this.send("POST", "/v1/recall", {}, { ...options, query });
  }

  /** One block for a model's next turn in `conversation`. */
  nextTurn(conversation: string, options: NextTurnIn = {}): Promise<NextTurnOut> {
    return this.send("POST", `/v1/conversations/${part(conversation)}/next-turn`, {}, options);
  }

  /** What a coding agent starting work in `project` is told of earlier sessions. */
  projectMemory(project: string, options: Omit<ProjectMemoryIn, "project"> = {}): Promise<ProjectMemoryOut> {
    return this.send("POST", "/v1/project-memory", {}, { ...options, project });
  }

  /** A page of episodes, newest first; pass `next_cursor` back as `cursor`. */
  episodes(options: QueryOf<"list_episodes"> = {}): Promise<EpisodesOut> {
    return this.send("GET", "/v1/episodes", options);
  }

  /** One episode with its messages, memory strength and versions. */
  episode(id: string): Promise<EpisodeOut> {
    return this.send("GET", `/v1/episodes/${part(id)}`);
  }

  /** Corrects an episode's title or summary; the version before is kept. */
  correct(id: string, edit: EpisodeEditIn): Promise<EpisodeOut> {
    return this.send("PATCH", `/v1/episodes/${part(id)}`, {}, edit);
  }

  /** Every version of an episode's title and summary, oldest first. */
  versions(id: string): Promise<EpisodeVersionsOut> {
    return this.send("GET", `/v1/episodes/${part(id)}/versions`);
  }

  /** Forgets one thing from every file and index: an episode, a conversation, a user, or the tenant. */
  forget(
    what: { episode: string } | { conversation: string } | { user: string } | { tenant: true },
  ): Promise<DeletedOut> {
    if ("episode" in what) return this.send("DELETE", `/v1/episodes/${part(what.episode)}`);
    if ("conversation" in what) return this.send("DELETE", `/v1/conversations/${part(what.conversation)}`);
    if ("user" in what) return this.send("DELETE", `/v1/users/${part(what.user)}`);
    return this.send("DELETE", "/v1/tenant");
  }

  /** The top of the timeline: the periods rolled up, oldest first. */
  timeline(options: QueryOf<"timeline_top"> = {}): Promise<TimelineOut> {
    return this.send("GET", "/v1/timeline", options);
  }

  /** One period of the timeline (`2024`, `2024-05`, `2024-W18`, `2024-05-02`). */
  timelineNode(node: string, options: QueryOf<"timeline_node"> = {}): Promise<TimelineNodeOut> {
    return this.send("GET", `/v1/timeline/${part(node)}`, options);
  }

  /** Lasting facts distilled from episodes. */
  facts(options: QueryOf<"list_facts"> = {}): Promise<FactsOut> {
    return this.send("GET", "/v1/facts", options);
  }

  /** The background jobs of the tenant (or of one conversation), newest first. */
  jobs(options: QueryOf<"list_jobs"> = {}): Promise<JobsOut> {
    return this.send("GET", "/v1/jobs", options);
  }

  /** Counts of what the tenant holds, and what its language model calls cost. */
  stats(): Promise<StatsOut> {
    return this.send("GET", "/v1/stats");
  }

  private async send<T>(method: string, path: string, query: Query = {}, body?: unknown): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers = { ...this.extraHeaders?.(), ...this.headers };
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await fetch(url, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (error) {
        failure = error;
      }
      const pause = this.pause(attempt, response);
      if (pause === undefined) {
        if (!response) throw new EpimemError("unavailable", `${this.baseUrl}: ${String(failure)}`);
        return answer<T>(response);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /** Milliseconds to wait before trying again, or undefined not to. */
  private pause(attempt: number, response: Response | undefined): number | undefined {
    if (attempt >= this.retries) return undefined;
    if (response) {
      if (!RETRIED.has(response.status)) return undefined;
      const after = retryAfter(response.headers.get("retry-after"));
      if (after !== undefined) return Math.min(after, 60_000);
    }
    return Math.min(8_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
  }
}

function part(value: string): string {
  return encodeURIComponent(value);
}

/** `Retry-After` in milliseconds: seconds, or an HTTP date. */
function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (!Number.isNaN(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

async function answer<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (response.ok) return JSON.parse(text) as T;
  let code = STATUS_CODES[response.status] ?? "internal";
  let message = text;
  try {
    const error = JSON.parse(text).error;
    if (error?.code) [code, message] = [error.code, error.message];
  } catch {
    // Not the API's error body: the status says what it can.
  }
  throw new EpimemError(code, message, response.status);
}
