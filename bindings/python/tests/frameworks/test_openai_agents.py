"""The OpenAI Agents SDK session and input filter with a real ``Runner`` (pinned in
openai_agents.txt), its chat-completions model calling a scripted model on loopback: two
sessions of one user, the second told what the first said, a new task told nothing, a session
read back whole by the SDK, and each method of its ``Session`` protocol."""

from __future__ import annotations

import asyncio
import pathlib

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, set_tracing_disabled
from openai import AsyncOpenAI

import epimem
from epimem.adapters.openai_agents import EpimemSession

from .conftest import ASKED, NEW_TASK, TOLD, held_in, second_session_is_told

# Traces would be sent to OpenAI: nothing leaves loopback.
set_tracing_disabled(True)


def agent_on(model) -> Agent:
    client = AsyncOpenAI(base_url=model.url, api_key="none", max_retries=0)
    return Agent(name="assistant", instructions="You are terse.",
                 model=OpenAIChatCompletionsModel(model="scripted", openai_client=client))


def say(model, session: EpimemSession, text: str) -> str:
    config = RunConfig(call_model_input_filter=session.input_filter)
    result = asyncio.run(Runner.run(agent_on(model), text, session=session, run_config=config))
    return result.final_output


def test_a_second_session_is_told_what_the_first_said(memory, model):
    assert say(model, EpimemSession(memory, "s1", user="maya"), TOLD) == "Noted."
    assert model.system_of_last() == "You are terse.", "nothing is told while memory is empty"

    second = EpimemSession(memory, "s2", user="maya")
    say(model, second, ASKED)
    system = model.system_of_last()
    assert system.startswith("You are terse.\n\nWhat you remember of earlier talks:"), system
    assert "Ana moved to Porto" in system

    say(model, second, NEW_TASK)
    assert model.system_of_last() == "You are terse.", "a new task is told nothing"
    # The SDK read the session back: the second turn was sent the first.
    sent = [m.get("content") for m in model.last()["messages"] if m["role"] != "system"]
    assert sent == [ASKED, "Noted.", NEW_TASK], sent

    assert held_in(memory, "s1") == [("user", TOLD), ("assistant", "Noted.")]
    say(model, EpimemSession(memory, "o1", user="leo"), ASKED)
    assert model.system_of_last() == "You are terse.", "another person's memory is not read"


def test_each_method_of_the_session_through_a_server(serve, tmp_path: pathlib.Path, model):
    server = serve(tmp_path / "served.db")

    async def run() -> None:
        async with epimem.AsyncClient(server.url) as memory:
            session = EpimemSession(memory, "items", user="maya")
            assert await session.get_items() == []
            assert await session.pop_item() is None
            call = {"type": "function_call", "call_id": "c1", "name": "weather",
                    "arguments": '{"city": "Porto"}'}
            output = {"type": "function_call_output", "call_id": "c1", "output": "Sunny"}
            items = [{"role": "user", "content": "Weather in Porto?"}, call, output,
                     {"role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]}]
            await session.add_items(items)
            assert await session.get_items() == items
            assert await session.get_items(limit=2) == items[2:]
            held = (await memory.messages("items")).messages
            assert [(m.role, m.content) for m in held] == [
                ("user", "Weather in Porto?"), ("tool", 'weather({"city": "Porto"})'),
                ("tool", "Sunny"), ("assistant", "Sunny.")]

            assert await session.pop_item() == items[3]
            assert await session.get_items() == items[:3]
            # Closed into an episode, an item stays.
            await memory.flush("items")
            with pytest.raises(epimem.Conflict):
                await session.pop_item()
            await session.clear_session()
            assert await session.get_items() == []
            await session.clear_session()

    asyncio.run(run())


def test_messages_of_other_doors_are_read_as_plain_items(memory):
    memory.remember([{"conversation": "mixed", "role": "user", "content": "From a hook"},
                     {"conversation": "mixed", "role": "tool", "content": "ls output"}])
    session = EpimemSession(memory, "mixed")
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "From a hook"}]


def test_the_docs_example_runs(model, tmp_path):
    second_session_is_told("openai_agents_session.py", model, tmp_path)
