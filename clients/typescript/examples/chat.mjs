// A chat loop that remembers, with any OpenAI-compatible model and a running `epimem serve`.
//
// Each line typed is answered by the model, told first what the memory holds that bears on it;
// both sides are then remembered. Run it twice: the second session knows the first.
//
//   EPIMEM_URL=http://127.0.0.1:7878 OPENAI_BASE_URL=http://127.0.0.1:8080/v1 node chat.mjs session-1
import { createInterface } from "node:readline";

import { Client } from "epimem";

const session = process.argv[2] ?? "session-1";
const memory = new Client(process.env.EPIMEM_URL ?? "http://127.0.0.1:7878");
const base = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
const model = process.env.OPENAI_MODEL ?? "gpt-4o-mini";

for await (const line of createInterface({ input: process.stdin })) {
  const said = line.trim();
  const remembered = (await memory.recall(said, { budget: 500 })).context || "nothing yet";
  const response = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
    body: JSON.stringify({
      model,
      messages: [
        { role: "system", content: `What you remember of earlier talks:\n${remembered}` },
        { role: "user", content: said },
      ],
    }),
  });
  if (!response.ok) throw new Error(`the model answered ${response.status}`);
  const reply = (await response.json()).choices[0].message.content;
  console.log(reply);
  await memory.remember([
    { conversation: session, role: "user", content: said },
    { conversation: session, role: "assistant", content: reply },
  ]);
}
