"""A chat loop that remembers, with any OpenAI-compatible model.

Each line you type is answered by the model, told first what the memory holds that bears on
it; both sides are then remembered. Run it twice: the second session knows the first.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=qwen python chat.py memory.db session-1

Swap ``epimem.Memory(db)`` for ``epimem.Client("http://127.0.0.1:7878")`` to use a server.
"""

import os
import sys

import httpx

import epimem


def main() -> None:
    db, session = sys.argv[1], sys.argv[2]
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    model = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    headers = {"authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"}
    with epimem.Memory(db) as memory:
        for line in sys.stdin:
            said = line.strip()
            remembered = memory.recall(said, budget=500).context or "nothing yet"
            messages = [
                {"role": "system", "content": f"What you remember of earlier talks:\n{remembered}"},
                {"role": "user", "content": said},
            ]
            answer = httpx.post(f"{base}/chat/completions", headers=headers, timeout=60,
                                json={"model": model, "messages": messages})
            reply = answer.raise_for_status().json()["choices"][0]["message"]["content"]
            print(reply, flush=True)
            memory.remember([{"conversation": session, "role": "user", "content": said},
                             {"conversation": session, "role": "assistant", "content": reply}])


if __name__ == "__main__":
    main()
