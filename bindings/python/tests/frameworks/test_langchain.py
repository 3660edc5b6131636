"""The LangChain middleware in a real ``create_agent`` (pinned in langchain.txt), its
``ChatOpenAI`` calling a scripted model on loopback: two sessions of one user, the second
told what the first said, a new task told nothing, another user told nothing, in the embedded
engine and through a server, synchronously and not."""

from __future__ import annotations

import asyncio
import pathlib

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

import epimem
from epimem.adapters.langchain import EpimemMiddleware

from .conftest import ASKED, NEW_TASK, TOLD, held_in, second_session_is_told


def agent_on(model, memory, **options):
    chat = ChatOpenAI(model="scripted", base_url=model.url, api_key="none", max_retries=0)
    return create_agent(chat, tools=[], checkpointer=InMemorySaver(),
                        middleware=[EpimemMiddleware(memory, **options)])


def say(agent, thread: str, text: str) -> str:
    answer = agent.invoke({"messages": [{"role": "user", "content": text}]},
                          {"configurable": {"thread_id": thread}})
    return answer["messages"][-1].text


def test_a_second_session_is_told_what_the_first_said(memory, model):
    agent = agent_on(model, memory, user="maya")
    assert say(agent, "s1", TOLD) == "Noted."
    assert model.system_of_last() == "", "nothing is told while memory is empty"

    assert say(agent, "s2", ASKED) == "Noted."
    assert "Ana moved to Porto" in model.system_of_last()
    assert model.system_of_last().startswith("What you remember of earlier talks:")

    say(agent, "s2", NEW_TASK)
    assert model.system_of_last() == "", "a new task is told nothing"

    # Each run's exchange was remembered in its thread, by its user, once.
    assert held_in(memory, "s1") == [("user", TOLD), ("assistant", "Noted.")]
    assert held_in(memory, "s2") == [("user", ASKED), ("assistant", "Noted."),
                                     ("user", NEW_TASK), ("assistant", "Noted.")]
    # Another person's memory is not read.
    say(agent_on(model, memory, user="leo"), "o1", ASKED)
    assert model.system_of_last() == ""


def test_the_block_joins_the_agents_own_system_prompt(memory, model):
    chat = ChatOpenAI(model="scripted", base_url=model.url, api_key="none", max_retries=0)
    agent = create_agent(chat, tools=[], system_prompt="You are terse.",
                         middleware=[EpimemMiddleware(memory, user="maya", conversation="fixed")])
    agent.invoke({"messages": [{"role": "user", "content": TOLD}]})
    agent.invoke({"messages": [{"role": "user", "content": ASKED}]})
    system = model.system_of_last()
    assert system.startswith("You are terse.\n\nWhat you remember of earlier talks:"), system
    # Without a thread, the given conversation holds both runs.
    assert [m for m, _ in held_in(memory, "fixed")] == ["user", "assistant"] * 2


def test_through_a_server_asynchronously(serve, tmp_path: pathlib.Path, model):
    server = serve(tmp_path / "served.db")

    async def run() -> str:
        async with epimem.AsyncClient(server.url) as memory:
            agent = agent_on(model, memory, user=lambda runtime: runtime.context["user"])
            for thread, text in (("a1", TOLD), ("a2", ASKED)):
                await agent.ainvoke({"messages": [{"role": "user", "content": text}]},
                                    {"configurable": {"thread_id": thread}},
                                    context={"user": "maya"})
            return model.system_of_last()

    assert "Ana moved to Porto" in asyncio.run(run())
    with epimem.Client(server.url) as memory:
        assert held_in(memory, "a1") == [("user", TOLD), ("assistant", "Noted.")]


def test_an_async_client_in_a_synchronous_run_is_refused_by_name(serve, tmp_path, model):
    server = serve(tmp_path / "served.db")
    agent = agent_on(model, epimem.AsyncClient(server.url), user="maya")
    try:
        say(agent, "s1", TOLD)
    except TypeError as e:
        assert "AsyncClient answers only asynchronous code" in str(e)
    else:
        raise AssertionError("a synchronous run with an AsyncClient went through")


def test_a_run_without_a_thread_or_conversation_is_refused_by_name(memory, model):
    chat = ChatOpenAI(model="scripted", base_url=model.url, api_key="none", max_retries=0)
    agent = create_agent(chat, tools=[], middleware=[EpimemMiddleware(memory)])
    try:
        agent.invoke({"messages": [{"role": "user", "content": TOLD}]})
    except ValueError as e:
        assert "needs a conversation" in str(e)
    else:
        raise AssertionError("a run with no conversation was remembered somewhere")


def test_the_docs_example_runs(model, tmp_path):
    second_session_is_told("langchain_agent.py", model, tmp_path)


def test_tenants_never_meet(tmp_path, config, model):
    db = tmp_path / "tenants.db"
    with epimem.Memory(db, tenant="acme", config=config) as acme, \
            epimem.Memory(db, tenant="globex", config=config) as globex:
        say(agent_on(model, acme, user="maya"), "s1", TOLD)
        say(agent_on(model, globex, user="maya"), "s2", ASKED)
        assert model.system_of_last() == "", "another tenant's memory is not read"
        say(agent_on(model, acme, user="maya"), "s3", ASKED)
        assert "Ana moved to Porto" in model.system_of_last()
