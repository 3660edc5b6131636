"""The AutoGen memory in a real ``AssistantAgent`` (pinned in autogen.txt), its OpenAI client
calling a scripted model on loopback: two sessions of one user, the second told what the
first said, a new task told nothing, and each method of AutoGen's ``Memory`` protocol."""

from __future__ import annotations

import asyncio
import pathlib

from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import UserMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient

import epimem
from epimem.adapters.autogen import EpimemMemory

from .conftest import ASKED, NEW_TASK, TOLD, held_in, second_session_is_told

MODEL_INFO = {"vision": False, "function_calling": True, "json_output": False,
              "family": "unknown", "structured_output": False,
              "multiple_system_messages": True}


def client_of(model) -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(model="scripted", base_url=model.url, api_key="none",
                                      model_info=MODEL_INFO)


async def session(model, memory, conversation: str, user: str, *tasks: str) -> None:
    """An agent's session: each task run in turn, and the memory closed at its end."""
    remembered = EpimemMemory(memory, conversation=conversation, user=user)
    agent = AssistantAgent("assistant", client_of(model), memory=[remembered])
    for task in tasks:
        answer = await agent.run(task=task)
        assert answer.messages[-1].content == "Noted."
    await remembered.close()


def test_a_second_session_is_told_what_the_first_said(memory, model):
    asyncio.run(session(model, memory, "s1", "maya", TOLD))
    assert model.system_of_last().count("earlier talks") == 0, "nothing is told while memory is empty"

    asyncio.run(session(model, memory, "s2", "maya", ASKED))
    assert "Ana moved to Porto" in model.system_of_last()

    asyncio.run(session(model, memory, "s3", "maya", NEW_TASK))
    assert "earlier talks" not in model.system_of_last(), "a new task is told nothing"

    # The session was remembered, its last answer too, once.
    assert held_in(memory, "s1") == [("user", TOLD), ("assistant", "Noted.")]
    asyncio.run(session(model, memory, "o1", "leo", ASKED))
    assert "earlier talks" not in model.system_of_last(), "another person's memory is not read"


def test_a_message_read_again_is_stored_once(memory, model):
    asyncio.run(session(model, memory, "s1", "maya", TOLD, "And my brother lives in Oslo."))
    assert held_in(memory, "s1") == [
        ("user", TOLD), ("assistant", "Noted."),
        ("user", "And my brother lives in Oslo."), ("assistant", "Noted."),
    ]


def test_each_method_of_the_protocol(serve, tmp_path: pathlib.Path):
    server = serve(tmp_path / "served.db")

    async def run() -> None:
        async with epimem.AsyncClient(server.url) as memory:
            remembered = EpimemMemory(memory, conversation="notes", user="maya")
            await remembered.add(MemoryContent(content="The offsite is in Lisbon in June.",
                                               mime_type=MemoryMimeType.TEXT))
            await remembered.add(MemoryContent(content={"diet": "vegetarian"},
                                               mime_type=MemoryMimeType.JSON,
                                               metadata={"role": "assistant"}))
            found = await remembered.query("Where is the offsite?")
            assert len(found.results) == 1 and "Lisbon" in found.results[0].content
            assert found.results[0].metadata["turns"], found.results[0].metadata
            assert (await remembered.query("kubernetes autoscaling")).results == []

            # Another conversation of the same person is told; this one holds it already.
            talk = EpimemMemory(memory, conversation="talk", user="maya")
            for which, told in ((remembered, False), (talk, True)):
                context = UnboundedChatCompletionContext()
                await context.add_message(UserMessage(content="When is the offsite?", source="user"))
                updated = await which.update_context(context)
                assert bool(updated.memories.results) == told
                said = (await context.get_messages())[-1].content
                assert ("Lisbon" in said) == told, said

            await remembered.close()
            assert (await memory.conversation("notes")).pending == 0
            await remembered.clear()
            assert "Lisbon" not in str((await remembered.query("Where is the offsite?")).results)
            await talk.clear()
            assert (await remembered.query("Where is the offsite?")).results == []

    asyncio.run(run())


def test_the_docs_example_runs(model, tmp_path):
    second_session_is_told("autogen_agent.py", model, tmp_path)
