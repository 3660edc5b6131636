"""An AutoGen agent that remembers, with any OpenAI-compatible model: run it twice (two
sessions), and the second is told what the first was.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=qwen python autogen_agent.py memory.db s1
"""

import asyncio
import os
import sys

from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient

import epimem
from epimem.adapters.autogen import EpimemMemory

# What AutoGen needs told of a model it does not know by name.
MODEL_INFO = {"vision": False, "function_calling": True, "json_output": False,
              "family": "unknown", "structured_output": False, "multiple_system_messages": True}


async def main(db: str, session: str) -> None:
    client = OpenAIChatCompletionClient(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                                        base_url=os.environ.get("OPENAI_BASE_URL"),
                                        model_info=MODEL_INFO)
    with epimem.Memory(db) as memory:
        remembered = EpimemMemory(memory, conversation=session, user="maya")
        agent = AssistantAgent("assistant", client, memory=[remembered])
        for line in sys.stdin:
            answer = await agent.run(task=line.strip())
            print(answer.messages[-1].content, flush=True)
        await remembered.close()


asyncio.run(main(sys.argv[1], sys.argv[2]))
