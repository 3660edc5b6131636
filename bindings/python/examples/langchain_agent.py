"""A LangChain agent that remembers, with any OpenAI-compatible model: run it twice (two
sessions), and the second is told what the first was.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_MODEL=qwen python langchain_agent.py memory.db s1
"""

import os
import sys

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

import epimem
from epimem.adapters.langchain import EpimemMiddleware

db, session = sys.argv[1], sys.argv[2]
with epimem.Memory(db) as memory:
    agent = create_agent(ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini")), tools=[],
                         checkpointer=InMemorySaver(),
                         middleware=[EpimemMiddleware(memory, user="maya")])
    for line in sys.stdin:
        answer = agent.invoke({"messages": [{"role": "user", "content": line.strip()}]},
                              {"configurable": {"thread_id": session}})
        print(answer["messages"][-1].text, flush=True)
