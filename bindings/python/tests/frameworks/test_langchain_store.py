"""The LangGraph store (pinned in langchain.txt): LangGraph's own ``BaseStore`` calls (put,
get, search with and without a query, filters, namespaces) on the embedded engine and through
a server, and an agent whose tool reads the store, driven by a scripted model on loopback."""

from __future__ import annotations

import asyncio
import pathlib

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_openai import ChatOpenAI

import epimem
from epimem.adapters.langgraph import EpimemStore

from .conftest import run_example

MAYA = ("memories", "maya")


def fill(store: EpimemStore) -> None:
    store.put(MAYA, "home", {"text": "Maya lives in Porto.", "kind": "place", "year": 2024})
    store.put(MAYA, "food", {"text": "Maya is vegetarian.", "kind": "diet", "year": 2021})
    store.put(("memories", "leo"), "home", {"text": "Leo lives in Oslo.", "kind": "place"})


def check(store: EpimemStore, memory) -> None:
    fill(store)
    home = store.get(MAYA, "home")
    assert home.value == {"text": "Maya lives in Porto.", "kind": "place", "year": 2024}
    assert (home.key, home.namespace) == ("home", MAYA)
    assert store.get(MAYA, "nothing") is None
    assert store.get(("nowhere",), "home") is None

    # A new value under a key is a new version: the newest is answered.
    store.put(MAYA, "home", {"text": "Maya moved to Lisbon.", "kind": "place", "year": 2026})
    moved = store.get(MAYA, "home")
    assert moved.value["text"] == "Maya moved to Lisbon." and moved.created_at <= moved.updated_at
    store.put(MAYA, "home", {"text": "Maya moved to Lisbon.", "kind": "place", "year": 2026})
    assert memory.conversation("memories.maya").last_seq == 3, "the same value is stored once"

    found = store.search(MAYA, query="Where does Maya live?")
    assert [i.key for i in found][:1] == ["home"] and found[0].value["text"] == "Maya moved to Lisbon."
    assert found[0].score == 1.0
    assert store.search(MAYA, query="kubernetes autoscaling") == []
    newest = store.search(MAYA)
    assert [i.key for i in newest] == ["home", "food"]
    assert [i.key for i in store.search(MAYA, filter={"kind": "diet"})] == ["food"]
    assert [i.key for i in store.search(MAYA, filter={"year": {"$gte": 2025}})] == ["home"]
    # Under a prefix, every namespace below it.
    assert sorted(i.namespace for i in store.search(("memories",))) == [
        ("memories", "leo"), MAYA, MAYA]
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "leo"), MAYA]
    assert store.list_namespaces(suffix=("maya",)) == [MAYA]
    assert store.list_namespaces(max_depth=1) == [("memories",)]

    # The person a namespace belongs to is its user: another person's recall never reads it.
    assert "Lisbon" in (memory.recall("Where does Maya live?", budget=200, user="maya").context or "")
    assert "Lisbon" not in (memory.recall("Where does Maya live?", budget=200, user="leo").context or "")

    with pytest.raises(NotImplementedError, match="memories.maya"):
        store.delete(MAYA, "food")


def test_the_store_on_the_embedded_engine(memory):
    check(EpimemStore(memory, user=lambda namespace: namespace[-1]), memory)


def test_the_store_through_a_server_asynchronously(serve, tmp_path: pathlib.Path):
    server = serve(tmp_path / "served.db")

    async def run() -> None:
        async with epimem.AsyncClient(server.url) as memory:
            store = EpimemStore(memory, user="maya")
            await store.aput(MAYA, "home", {"text": "Maya lives in Porto."})
            assert (await store.aget(MAYA, "home")).value == {"text": "Maya lives in Porto."}
            found = await store.asearch(MAYA, query="Where does Maya live?")
            assert [i.key for i in found] == ["home"]
            assert await store.alist_namespaces() == [MAYA]

    asyncio.run(run())


def test_an_agents_tool_reads_the_store(memory, model):
    store = EpimemStore(memory, user=lambda namespace: namespace[-1])
    fill(store)
    read = []

    @tool
    def where_they_live(person: str, runtime: ToolRuntime) -> str:
        """Where a person lives, as remembered."""
        found = runtime.store.search(("memories", person), query=f"Where does {person} live?")
        read.append([i.value["text"] for i in found])
        return found[0].value["text"] if found else "unknown"

    chat = ChatOpenAI(model="scripted", base_url=model.url, api_key="none", max_retries=0)
    agent = create_agent(chat, tools=[where_they_live], store=store)
    model.tool_call("where_they_live", {"person": "maya"})
    answer = agent.invoke({"messages": [{"role": "user", "content": "Where does Maya live?"}]})
    assert answer["messages"][-1].text == "Noted."
    assert read and read[0][0] == "Maya lives in Porto.", read
    # The tool's answer went back to the model.
    assert any(m.get("role") == "tool" and "Porto" in str(m.get("content"))
               for m in model.last()["messages"])


def test_the_docs_example_runs(tmp_path):
    printed = run_example("langgraph_store.py", None, str(tmp_path / "store.db"))
    assert printed == "home Maya lives in Porto.\n"
