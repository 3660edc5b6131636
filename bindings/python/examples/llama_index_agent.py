"""A LlamaIndex agent that remembers, with any OpenAI-compatible model: run it twice (two
sessions), and the second is told what the first was.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=qwen python llama_index_agent.py memory.db s1
"""

import asyncio
import os
import sys

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import Memory
from llama_index.llms.openai_like import OpenAILike

import epimem
from epimem.adapters.llama_index import EpimemBlock


async def main(db: str, session: str) -> None:
    llm = OpenAILike(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                     api_base=os.environ.get("OPENAI_BASE_URL"), is_chat_model=True,
                     is_function_calling_model=True)
    with epimem.Memory(db) as memory:
        kept = Memory.from_defaults(session_id=session,
                                    memory_blocks=[EpimemBlock(memory=memory, user="maya")])
        agent = FunctionAgent(llm=llm, tools=[])
        for line in sys.stdin:
            print(await agent.run(line.strip(), memory=kept), flush=True)
        await kept.aget()  # the last answer reaches epimem when the memory is read


asyncio.run(main(sys.argv[1], sys.argv[2]))
