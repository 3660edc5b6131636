// epimem for the OpenAI Agents SDK (`@openai/agents`): a `Session` kept in epimem, and a
// model-input filter that tells the agent what memory holds. The SDK's types are not imported:
// both are written to the shapes the SDK takes, so the client keeps no dependency on it.
//
// Each item the SDK adds is remembered as a message of the session's conversation: its text
// as the content (a tool call as `name(arguments)`, its result as text) and the item itself
// in the message's metadata, so `getItems` hands back exactly what was added, in order.
// Messages remembered there by other doors come back as plain `{ role, content }` items (tool
// messages, which carry no call id, are left out). `popItem` takes back the newest item while
// no episode holds it, and rejects with a 409 `EpimemError` once one does.

import { type Client, EpimemError, type StoredMessageOut } from "./index.js";

/** An item of the SDK's history (`AgentInputItem`), as far as the session reads it. */
type Fields = { [field: string]: unknown };
/** What the SDK hands `callModelInputFilter` and takes back from it. */
type ModelInputData = { input: object[]; instructions?: string };

/** The metadata field that holds the SDK's item whole. */
const ITEM = "openai_agents_item";
/** The most messages one read asks for. */
const PAGE = 1000;

export interface EpimemSessionOptions {
  /** The person: recall reads every conversation of theirs, and no one else's. */
  user?: string;
  /** Tokens the recalled block may take (default 500). */
  budget?: number;
  /** How the block is put to the model (default: "What you remember of earlier talks:"). */
  heading?: string;
}

/**
 * The SDK's `Session`, kept in one epimem conversation (its session id). `Item` is the SDK's
 * `AgentInputItem`; items pass through untouched, so it is left to the caller (`any` unless
 * given, which the SDK's `Session` takes).
 */
export class EpimemSession<Item extends object = any> {
  readonly sessionId: string;
  private readonly budget: number;
  private readonly heading: string;

  constructor(
    private readonly memory: Client,
    sessionId: string,
    private readonly options: EpimemSessionOptions = {},
  ) {
    if (!sessionId) throw new TypeError("EpimemSession needs a session id (its conversation)");
    this.sessionId = sessionId;
    this.budget = options.budget ?? 500;
    this.heading = options.heading ?? "What you remember of earlier talks:";
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  async getItems(limit?: number): Promise<Item[]> {
    let messages: StoredMessageOut[] = [];
    let before: number | undefined;
    while (limit === undefined || messages.length < limit) {
      const want = limit === undefined ? PAGE : Math.min(PAGE, limit - messages.length);
      const page = await absentAsNull(this.memory.messages(this.sessionId, { limit: want, before }));
      if (page === null) return [];
      messages = [...page.messages, ...messages];
      if (page.next_before === undefined || page.next_before === null) break;
      before = page.next_before;
    }
    const items = messages.map((m) => itemOf(m) as Item | null).filter((item): item is Item => item !== null);
    return limit === undefined ? items : items.slice(-limit);
  }

  async addItems(items: Item[]): Promise<void> {
    if (!items.length) return;
    await this.memory.remember(
      items.map((item) => ({
        conversation: this.sessionId,
        user: this.options.user,
        role: roleOf(item as Fields),
        content: textOf(item as Fields) || `[${String((item as Fields).type ?? "item")}]`,
        id: `agents-${crypto.randomUUID()}`,
        metadata: { [ITEM]: JSON.parse(JSON.stringify(item)) },
      })),
    );
  }

  async popItem(): Promise<Item | undefined> {
    const taken = await absentAsNull(this.memory.takeBack(this.sessionId));
    return taken === null ? undefined : ((itemOf(taken) as Item | null) ?? undefined);
  }

  async clearSession(): Promise<void> {
    await absentAsNull(this.memory.forget({ conversation: this.sessionId }));
  }

  /**
   * For `run(agent, input, { session, callModelInputFilter: session.inputFilter })`: the
   * model's instructions gain what memory holds that bears on the user's last message
   * (nothing when nothing does, and nothing of this session, which the model is sent already).
   */
  inputFilter = async <Data extends ModelInputData>({ modelData }: { modelData: Data }): Promise<Data> => {
    const said = ([...modelData.input] as Fields[]).reverse().find((item) => roleOf(item) === "user");
    const query = said ? textOf(said).trim() : "";
    if (!query) return modelData;
    const recalled = await this.memory.recall(query, {
      budget: this.budget,
      user: this.options.user,
      asked_in: this.sessionId,
    });
    const block = recalled.context?.trim();
    if (!block) return modelData;
    const told = `${this.heading}\n${block}`;
    return { ...modelData, instructions: modelData.instructions ? `${modelData.instructions}\n\n${told}` : told };
  };
}

/** A call's answer, or null when what it asks for does not exist. */
async function absentAsNull<T>(answer: Promise<T>): Promise<T | null> {
  try {
    return await answer;
  } catch (e) {
    if (e instanceof EpimemError && e.status === 404) return null;
    throw e;
  }
}

/** The epimem role of an item: its own for a message, `tool` for anything else. */
function roleOf(item: Fields): "user" | "assistant" | "system" | "tool" {
  const role = item.role;
  if (role === "user" || role === "assistant" || role === "system") return role;
  if (role === "developer") return "system";
  return "tool";
}

/** What an item says: a message's text, a tool call as `name(arguments)`, a tool's output. */
function textOf(item: Fields): string {
  const content = item.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" ? String(part.text ?? part.refusal ?? "") : ""))
      .join("\n")
      .trim();
  }
  if (item.type === "function_call") return `${String(item.name ?? "")}(${String(item.arguments ?? "")})`;
  if (item.type === "function_call_result") {
    const output = item.output as { text?: string } | string | undefined;
    if (typeof output === "string") return output;
    return typeof output?.text === "string" ? output.text : JSON.stringify(output ?? "");
  }
  return "";
}

/** The item a message was remembered from, or a plain message item for one that was not. */
function itemOf(message: StoredMessageOut): Fields | null {
  const item = (message.metadata as Record<string, unknown> | null | undefined)?.[ITEM];
  if (item && typeof item === "object") return item as Fields;
  if (message.role === "user" || message.role === "assistant" || message.role === "system") {
    return { role: message.role, content: message.content };
  }
  return null;
}
