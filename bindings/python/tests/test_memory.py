"""The embedded engine: what an agent builder does with it, in this process, with no server."""

from __future__ import annotations

import pathlib
import threading
import time

import pytest

import epimem

TALK = [
    ("user", "We are moving the team offsite to Lisbon in June."),
    ("assistant", "Noted: a Lisbon offsite in June."),
    ("user", "Book the venue near the river, and remember Ana is vegetarian."),
]


def told(memory: epimem.Memory, conversation: str = "trip") -> epimem.AddedOut:
    return memory.remember([
        {"conversation": conversation, "role": role, "content": text, "id": f"m{i}"}
        for i, (role, text) in enumerate(TALK)
    ])


def test_a_message_is_recalled_at_once_and_its_episode_after_a_flush(memory: epimem.Memory) -> None:
    added = told(memory)
    assert added.inserted == 3 and added.duplicates == 0
    # Before the conversation closes into an episode: the open tail is searched.
    block = memory.recall("Who is vegetarian?", budget=300)
    assert "Ana is vegetarian" in (block.context or ""), block
    # The line quoted is still in the open tail: no episode holds it yet.
    assert block.turns and block.turns[0].episode == "tail:trip"
    memory.flush("trip")
    page = memory.episodes()
    assert len(page.episodes) >= 1
    episode = memory.episode(page.episodes[0].id)
    assert any("Lisbon" in m.content for m in episode.messages or [])
    hits = memory.recall("Lisbon offsite").hits
    assert hits and hits[0].id == episode.id


def test_remembering_again_by_id_stores_nothing_twice(memory: epimem.Memory) -> None:
    told(memory)
    again = told(memory)
    assert again.inserted == 0 and again.duplicates == 3
    one = memory.remember(conversation="trip", role="user", content="And a boat tour.")
    assert one.inserted == 1
    assert memory.stats().messages == 4


def test_a_correction_keeps_the_version_before(memory: epimem.Memory) -> None:
    told(memory)
    memory.flush("trip")
    first = memory.episodes().episodes[0]
    corrected = memory.correct(first.id, title="Lisbon offsite in June")
    assert corrected.title == "Lisbon offsite in June"
    assert memory.episode(first.id).title == "Lisbon offsite in June"
    versions = memory.versions(first.id).versions
    assert [(v.version, v.title) for v in versions] == [(1, first.title)]


def test_forgetting_a_user_leaves_the_other_whole(memory: epimem.Memory) -> None:
    memory.remember(conversation="a", role="user", content="My dog Rex loves the beach.", user="ann")
    memory.remember(conversation="b", role="user", content="My cat Tom sleeps all day.", user="bob")
    memory.flush("a")
    memory.flush("b")
    assert all("Tom" not in (h.title + (h.summary or "")) for h in memory.recall("pets", user="ann").hits)
    assert memory.forget(user="ann").episodes >= 1
    assert memory.recall("dog Rex beach", budget=200).nothing_relevant
    assert memory.recall("cat Tom", user="bob").hits


def test_errors_are_exceptions_with_the_apis_codes(memory: epimem.Memory) -> None:
    with pytest.raises(epimem.BadInput) as bad:
        memory.recall("  ")
    assert bad.value.code == "bad_input" and "query" in bad.value.message
    with pytest.raises(epimem.NotFound):
        memory.episode("no-such-episode")
    with pytest.raises(epimem.BadInput) as bad:
        memory.remember([{"conversation": "c", "role": "wizard", "content": "hi"}])
    assert "[0].role" in bad.value.message
    with pytest.raises(TypeError):
        memory.forget(episode="x", user="y")


def test_the_background_worker_closes_a_silent_conversation(tmp_path: pathlib.Path,
                                                           config: pathlib.Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # The wall clock: the conversation was last spoken in long ago, so it is silent now.
    monkeypatch.delenv("EPIMEM_CLOCK")
    with epimem.Memory(tmp_path / "bg.db", config=config) as memory:
        memory.remember(conversation="old", role="user", content="The boiler was serviced.",
                        timestamp="2020-01-01T10:00:00Z")
        deadline = time.monotonic() + 30
        while not memory.episodes(conversation="old").episodes:
            assert time.monotonic() < deadline, "the worker did not close the conversation"
            time.sleep(0.1)
    with pytest.raises(epimem.Unavailable):
        memory.stats()


def test_the_interpreter_runs_other_threads_during_a_call(memory: epimem.Memory) -> None:
    import json

    messages = [{"conversation": f"c{i % 20}", "role": "user", "content": f"note {i} about item {i * 7}"}
                for i in range(3000)]
    request = json.dumps({"path": {}, "query": {}, "body": messages})
    seen = []
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            seen.append(time.monotonic())
            time.sleep(0)

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    start = time.monotonic()
    memory._native.call("add_messages", request)  # the engine alone, no Python around it
    end = time.monotonic()
    done.set()
    counter.join()
    # Had the call held the interpreter's lock, the other thread would not have run in the
    # middle of it (at its edges it may: the lock changes hands there).
    middle = [t for t in seen if start + (end - start) / 4 < t < end - (end - start) / 4]
    assert end - start > 0.05, "the call was too short to tell"
    assert len(middle) > 10, (len(middle), end - start)


def test_a_missing_model_says_how_to_fetch_it(tmp_path: pathlib.Path) -> None:
    with pytest.raises(epimem.EpimemError) as missing:
        epimem.Memory(tmp_path / "m.db", embedder="potion", models=tmp_path / "no-models")
    assert "fetch" in str(missing.value), missing.value


def files_holding(folder: pathlib.Path, word: str) -> list:
    """The files under ``folder`` whose bytes hold ``word`` (any case)."""
    needle = word.lower().encode()
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes().lower()]


def test_a_forgotten_person_is_in_no_file(tmp_path: pathlib.Path, config: pathlib.Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with epimem.Memory(data / "m.db", config=config, background=False) as memory:
        memory.remember(conversation="a", role="user", content="Alice keeps a quoxtulip garden.",
                        user="alice")
        memory.remember(conversation="b", role="user", content="Bob sails the zephyrsail boat.",
                        user="bob")
        memory.flush("a")
        memory.flush("b")
        assert memory.recall("quoxtulip", user="alice").hits
        memory.forget(user="alice")
    assert files_holding(data, "quoxtulip") == []
    assert files_holding(data, "zephyrsail")


BAD = [
    ("remember", [[{"conversation": "c", "role": "wizard", "content": "hi"}]], {}, "[0].role"),
    ("remember", [[{"conversation": "", "role": "user", "content": "hi"}]], {}, "conversation"),
    ("remember", [[{"conversation": "c", "role": "user", "content": "hi", "timestamp": "yesterday"}]],
     {}, "timestamp"),
    ("remember", [[{"conversation": "c", "role": "user", "content": "hi", "colour": "red"}]], {}, "colour"),
    ("remember", [[]], {}, "no message"),
    ("recall", ["  "], {}, "query"),
    ("recall", ["tea"], {"limit": 0}, "limit"),
    ("recall", ["tea"], {"limit": 5000}, "limit"),
    ("recall", ["tea"], {"budget": -3}, "budget"),
    ("recall", ["tea"], {"since": "last week"}, "since"),
    ("recall", ["tea"], {"within": "someday"}, "within"),
    ("recall", ["tea"], {"user": " "}, "user"),
    ("episodes", [], {"cursor": "not-a-cursor"}, "cursor"),
    ("episodes", [], {"until": "2026-13-45"}, "until"),
    ("correct", ["no-such-episode"], {"title": ""}, ""),
    ("timeline_node", ["not-a-period"], {}, ""),
    ("next_turn", ["c"], {"budget": 0}, "budget"),
    ("project_memory", [" "], {}, "project"),
]


@pytest.mark.parametrize("method,args,kwargs,field", BAD)
def test_what_the_api_refuses_is_an_exception(memory: epimem.Memory, method: str, args: list,
                                              kwargs: dict, field: str) -> None:
    memory.remember(conversation="c", role="user", content="tea with lemon")
    with pytest.raises((epimem.BadInput, epimem.NotFound)) as refused:
        getattr(memory, method)(*args, **kwargs)
    assert field in refused.value.message, refused.value
    # Nothing stored was lost.
    assert memory.stats().messages == 1


def test_a_flush_without_a_conversation_closes_them_all(
    tmp_path: pathlib.Path, config: pathlib.Path
) -> None:
    # No background worker: it would close some of them first, and the flush only counts what
    # it closes itself.
    with epimem.Memory(tmp_path / "memory.db", config=config, background=False) as memory:
        for conversation in ("a", "b", "c"):
            memory.remember(conversation=conversation, role="user", content=f"note for {conversation}")
        closed = memory.flush()
        assert closed.messages_closed == 3, closed
        assert memory.stats().pending_messages == 0
        assert {e.conversation for e in memory.episodes().episodes} == {"a", "b", "c"}
