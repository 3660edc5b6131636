// epimem: records this project's opencode sessions and hands their memory back.
// Written by `epimem hooks install --agent opencode`; `epimem hooks uninstall --agent opencode`
// removes it. opencode has no command hooks, so this plugin sends each event to epimem's hook
// as JSON on its standard input, the way Claude Code runs it, and adds what the hook answers
// to the system prompt. It never fails a turn: whatever goes wrong is left to the hook's log.
import { spawn } from "node:child_process";

const HOOK = __EPIMEM_HOOK__;
const TIMEOUT_MS = 10000;

// Runs the hook on one event; resolves to the context it hands back ("" for none).
function hook(event) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(HOOK[0], HOOK.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return resolve("");
    }
    const timer = setTimeout(() => child.kill(), TIMEOUT_MS);
    child.on("error", () => resolve(""));
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out).hookSpecificOutput.additionalContext || "");
      } catch {
        resolve("");
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

export const Epimem = async ({ directory }) => {
  // Per session: the context it started with, its current prompt's, the reply so far.
  const sessions = new Map();
  const session = (id) => {
    if (!sessions.has(id)) {
      const start = hook({ session_id: id, cwd: directory, hook_event_name: "SessionStart" });
      sessions.set(id, { start, prompt: Promise.resolve(""), reply: new Map(), turn: "" });
    }
    return sessions.get(id);
  };
  const send = (id, name, fields) =>
    hook({ session_id: id, cwd: directory, hook_event_name: name, ...fields });

  return {
    event: async ({ event }) => {
      const props = event.properties || {};
      if (event.type === "session.created") {
        session(props.sessionID || props.info?.id);
      } else if (event.type === "message.part.updated") {
        const part = props.part || {};
        if (part.type === "text" && part.time?.end && !part.synthetic) {
          const s = session(part.sessionID);
          s.reply.set(part.id, { message: part.messageID, text: part.text || "" });
        }
      } else if (event.type === "session.idle") {
        const s = session(props.sessionID);
        const parts = [...s.reply.values()];
        const last = parts.length ? parts[parts.length - 1].message : "";
        const text = parts.filter((p) => p.message === last).map((p) => p.text).join("\n\n");
        s.reply.clear();
        if (text.trim()) {
          await send(props.sessionID, "Stop", { turn_id: last, last_assistant_message: text });
        }
      }
    },
    "chat.message": async (input, output) => {
      const text = (output.parts || [])
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\n");
      const s = session(input.sessionID);
      await s.start;
      s.turn = output.message?.id || "";
      s.prompt = send(input.sessionID, "UserPromptSubmit", { prompt: text, turn_id: s.turn });
      await s.prompt;
    },
    "tool.execute.after": async (input, output) => {
      const exit = output?.metadata?.exit;
      await send(input.sessionID, "PostToolUse", {
        tool_name: input.tool,
        tool_input: input.args,
        tool_use_id: input.callID,
        tool_response: { output: output?.output ?? "", is_error: typeof exit === "number" && exit !== 0 },
      });
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID || !Array.isArray(output.system)) return;
      const s = session(input.sessionID);
      for (const context of [await s.start, await s.prompt]) {
        if (context) output.system.push(context);
      }
    },
  };
};
