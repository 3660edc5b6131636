"""An OpenAI Agents SDK agent whose session is kept in epimem, with any OpenAI-compatible
model: run it twice (two sessions), and the second is told what the first was.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=qwen python openai_agents_session.py memory.db s1
"""

import asyncio
import os
import sys

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI

import epimem
from epimem.adapters.openai_agents import EpimemSession


async def main(db: str, session_id: str) -> None:
    model = OpenAIChatCompletionsModel(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                                       openai_client=AsyncOpenAI())
    agent = Agent(name="assistant", instructions="You are terse.", model=model)
    with epimem.Memory(db) as memory:
        session = EpimemSession(memory, session_id, user="maya")
        config = RunConfig(call_model_input_filter=session.input_filter)
        for line in sys.stdin:
            result = await Runner.run(agent, line.strip(), session=session, run_config=config)
            print(result.final_output, flush=True)


asyncio.run(main(sys.argv[1], sys.argv[2]))
