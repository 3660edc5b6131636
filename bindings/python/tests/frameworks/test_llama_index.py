"""The LlamaIndex memory block in a real ``FunctionAgent`` and ``Memory`` (pinned in
llama_index.txt), its ``OpenAILike`` model calling a scripted model on loopback: two sessions
of one user, the second told what the first said, a new task told nothing, and the block's
``aget`` and ``aput`` each exercised."""

from __future__ import annotations

import asyncio
import pathlib

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory
from llama_index.llms.openai_like import OpenAILike

import epimem
from epimem.adapters.llama_index import EpimemBlock

from .conftest import ASKED, NEW_TASK, TOLD, held_in, second_session_is_told


def agent_on(model) -> FunctionAgent:
    llm = OpenAILike(model="scripted", api_base=model.url, api_key="none", is_chat_model=True,
                     is_function_calling_model=True, context_window=8000, max_retries=0)
    return FunctionAgent(llm=llm, tools=[], system_prompt="You are terse.")


async def session(model, memory, session_id: str, user: str, *tasks: str) -> None:
    """A session: each task run with the session's LlamaIndex memory, which is read once more
    at the end so that the last answer is remembered too."""
    kept = Memory.from_defaults(session_id=session_id, memory_blocks=[EpimemBlock(memory=memory, user=user)])
    agent = agent_on(model)
    for task in tasks:
        answer = await agent.run(task, memory=kept)
        assert str(answer) == "Noted."
    await kept.aget()


def test_a_second_session_is_told_what_the_first_said(memory, model):
    asyncio.run(session(model, memory, "s1", "maya", TOLD))
    assert "earlier talks" not in model.system_of_last(), "nothing is told while memory is empty"

    asyncio.run(session(model, memory, "s2", "maya", ASKED))
    system = model.system_of_last()
    assert "Ana moved to Porto" in system and "You are terse." in system, system

    asyncio.run(session(model, memory, "s2", "maya", NEW_TASK))
    assert "earlier talks" not in model.system_of_last(), "a new task is told nothing"

    assert held_in(memory, "s1") == [("user", TOLD), ("assistant", "Noted.")]
    asyncio.run(session(model, memory, "o1", "leo", ASKED))
    assert "earlier talks" not in model.system_of_last(), "another person's memory is not read"


def test_the_blocks_own_calls_through_a_server(serve, tmp_path: pathlib.Path):
    server = serve(tmp_path / "served.db")

    async def run() -> None:
        async with epimem.AsyncClient(server.url) as memory:
            block = EpimemBlock(memory=memory, user="maya", conversation="notes")
            # What LlamaIndex flushes from its short-term memory is remembered.
            await block.aput([ChatMessage(role="user", content="The offsite is in Lisbon in June."),
                              ChatMessage(role="assistant", content="Noted.")])
            told = await block.aget([ChatMessage(role="user", content="Where is the offsite?")])
            assert told.startswith("What you remember of earlier talks:") and "Lisbon" in told
            assert await block.aget([ChatMessage(role="user", content=NEW_TASK)]) == ""
            # Reading the same history again stores nothing twice.
            await block.aput([ChatMessage(role="user", content="The offsite is in Lisbon in June.")])
            assert (await memory.conversation("notes")).last_seq == 4

    asyncio.run(run())


def test_a_block_without_a_conversation_is_refused_by_name(memory):
    block = EpimemBlock(memory=memory)
    try:
        asyncio.run(block.aput([ChatMessage(role="user", content=TOLD)]))
    except ValueError as e:
        assert "needs a conversation" in str(e)
    else:
        raise AssertionError("a message with no conversation was remembered somewhere")


def test_the_docs_example_runs(model, tmp_path):
    second_session_is_told("llama_index_agent.py", model, tmp_path)
