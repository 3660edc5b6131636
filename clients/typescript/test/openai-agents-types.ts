// Compiled (not run) by openai-agents.test.js against the real `@openai/agents` types: the
// session is a `Session`, and its filter a `callModelInputFilter`, as a TypeScript user
// writes them.
import { Agent, run, type Session } from "@openai/agents";
import { Client } from "epimem";
import { EpimemSession } from "epimem/openai-agents";

const session = new EpimemSession(new Client(), "session-1", { user: "maya" });
export const asSession: Session = session;
export const answer = () =>
  run(new Agent({ name: "assistant" }), "Hello", { session, callModelInputFilter: session.inputFilter });
