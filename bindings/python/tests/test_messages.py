"""A conversation's messages read back, and its newest one taken back, in the embedded engine
and through a real server alike."""

from __future__ import annotations

import pathlib

import pytest

import epimem


def check(memory) -> None:
    memory.remember([
        {"conversation": "c", "role": "user", "content": "Hi there", "id": "m1",
         "metadata": {"item": {"type": "message", "n": 1}}},
        {"conversation": "c", "role": "assistant", "content": "Hello", "id": "m2"},
        {"conversation": "c", "role": "user", "content": "Oops, wrong window", "id": "m3"},
    ])
    read = memory.messages("c")
    assert [(m.seq, m.id, m.role, m.content) for m in read.messages] == [
        (1, "m1", "user", "Hi there"), (2, "m2", "assistant", "Hello"),
        (3, "m3", "user", "Oops, wrong window")]
    assert read.messages[0].metadata == {"item": {"type": "message", "n": 1}}
    assert read.messages[1].metadata is None and read.messages[0].episode is None
    assert read.next_before is None
    newest = memory.messages("c", limit=2)
    assert [m.seq for m in newest.messages] == [2, 3] and newest.next_before == 2
    assert [m.seq for m in memory.messages("c", limit=2, before=2).messages] == [1]

    taken = memory.take_back("c")
    assert (taken.seq, taken.id, taken.content) == (3, "m3", "Oops, wrong window")
    assert [m.seq for m in memory.messages("c").messages] == [1, 2]
    assert memory.conversation("c").last_seq == 2
    # Taken back, it is not recalled.
    assert "wrong window" not in (memory.recall("wrong window", budget=200).context or "")

    memory.flush("c")
    closed = memory.messages("c").messages
    assert closed[0].episode and closed[0].episode == closed[1].episode
    with pytest.raises(epimem.Conflict, match="is in episode"):
        memory.take_back("c")
    with pytest.raises(epimem.NotFound):
        memory.messages("nowhere")
    with pytest.raises(epimem.NotFound):
        memory.take_back("nowhere")
    with pytest.raises(epimem.BadInput):
        memory.messages("c", limit=0)

    memory.remember([{"conversation": name, "role": "user", "content": "x"}
                     for name in ("notes.ana", "notes.leo", "other")])
    assert memory.conversations().conversations == ["c", "notes.ana", "notes.leo", "other"]
    page = memory.conversations(prefix="notes.", limit=1)
    assert (page.conversations, page.next_after) == (["notes.ana"], "notes.ana")
    rest = memory.conversations(prefix="notes.", after=page.next_after)
    assert (rest.conversations, rest.next_after) == (["notes.leo"], None)


def test_in_the_embedded_engine(memory):
    check(memory)


def test_through_a_server(serve, tmp_path: pathlib.Path):
    server = serve(tmp_path / "served.db")
    with epimem.Client(server.url) as memory:
        check(memory)
