"""`Client` and `AsyncClient` against a real `epimem serve`, and against the embedded engine:
the same calls give the same answers."""

from __future__ import annotations

import asyncio
import http.server
import json
import pathlib
import threading
from typing import Any, Callable, Dict, List

import pytest

import epimem

from .test_memory import TALK


def script(memory: Any) -> Dict[str, Any]:
    """Reads that change nothing, each answer as JSON."""
    first = memory.episodes().episodes[0].id
    return {
        "episodes": memory.episodes().model_dump(),
        "episode": memory.episode(first).model_dump(),
        "hits": memory.recall("Lisbon offsite").model_dump(),
        "block": memory.recall("Who is vegetarian?", budget=300).model_dump(),
        "nothing": memory.recall("kubernetes autoscaling", budget=300).model_dump(),
        "timeline": memory.timeline().model_dump(),
        "versions": memory.versions(first).model_dump(),
        "conversation": memory.conversation("trip").model_dump(),
        "stats": memory.stats().model_dump(),
    }


def fill(memory: Any) -> None:
    memory.remember([{"conversation": "trip", "role": role, "content": text, "id": f"m{i}"}
                     for i, (role, text) in enumerate(TALK)])
    memory.flush("trip")


def test_memory_and_client_answer_alike(tmp_path: pathlib.Path, config: pathlib.Path,
                                        serve: Callable) -> None:
    db = tmp_path / "same.db"
    with epimem.Memory(db, config=config, background=False) as memory:
        fill(memory)
        embedded = script(memory)
    server = serve(db)
    with epimem.Client(server.url) as client:
        served = script(client)
    assert served == embedded
    assert embedded["block"]["context"] and embedded["nothing"]["nothing_relevant"] is True


def test_the_async_client_answers_as_the_client(tmp_path: pathlib.Path, serve: Callable) -> None:
    server = serve(tmp_path / "async.db")
    with epimem.Client(server.url) as client:
        fill(client)
        synchronous = script(client)

    async def run() -> Dict[str, Any]:
        async with epimem.AsyncClient(server.url) as client:
            first = (await client.episodes()).episodes[0].id
            return {
                "episodes": (await client.episodes()).model_dump(),
                "episode": (await client.episode(first)).model_dump(),
                "hits": (await client.recall("Lisbon offsite")).model_dump(),
                "block": (await client.recall("Who is vegetarian?", budget=300)).model_dump(),
                "nothing": (await client.recall("kubernetes autoscaling", budget=300)).model_dump(),
                "timeline": (await client.timeline()).model_dump(),
                "versions": (await client.versions(first)).model_dump(),
                "conversation": (await client.conversation("trip")).model_dump(),
                "stats": (await client.stats()).model_dump(),
            }

    assert asyncio.run(run()) == synchronous


def test_the_client_raises_the_apis_errors(tmp_path: pathlib.Path, serve: Callable) -> None:
    server = serve(tmp_path / "errors.db")
    with epimem.Client(server.url) as client:
        with pytest.raises(epimem.BadInput) as bad:
            client.recall("  ")
        assert bad.value.status == 400 and "query" in bad.value.message
        with pytest.raises(epimem.NotFound) as missing:
            client.episode("no-such-episode")
        assert missing.value.code == "not_found"
    with epimem.Client("http://127.0.0.1:9", retries=1) as nobody:
        with pytest.raises(epimem.Unavailable):
            nobody.stats()


def test_an_api_key_is_sent_and_a_wrong_one_refused(tmp_path: pathlib.Path, serve: Callable) -> None:
    import subprocess

    from .conftest import binary

    db = tmp_path / "keys.db"
    made = subprocess.run([binary(), "--db", str(db), "keys", "create", "--name", "test", "--json"],
                          capture_output=True, text=True, check=True)
    key = json.loads(made.stdout)["key"]
    server = serve(db)
    with epimem.Client(server.url, api_key=key) as client:
        assert client.stats().messages == 0
    with epimem.Client(server.url, api_key="epm_wrong") as client:
        with pytest.raises(epimem.Unauthorized):
            client.stats()


class Flaky(http.server.BaseHTTPRequestHandler):
    """Answers with the statuses of `plan` in turn, then with stats."""

    plan: List[int] = []
    seen: List[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        Flaky.seen.append(self.path)
        status = Flaky.plan.pop(0) if Flaky.plan else 200
        if status == 200:
            body = json.dumps({"conversations": 0, "messages": 7, "pending_messages": 0,
                               "episodes": 0, "queued_jobs": 0, "failed_jobs": 0, "llm": {}})
        else:
            body = json.dumps({"error": {"code": "unavailable", "message": "busy"}})
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("retry-after", "0")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def flaky() -> Any:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Flaky.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_busy_answers_are_tried_again_as_retry_after_says(flaky: str) -> None:
    Flaky.plan = [503, 429]
    with epimem.Client(flaky, retries=3) as client:
        assert client.stats().messages == 7
    assert Flaky.seen == ["/v1/stats"] * 3
    Flaky.plan, Flaky.seen = [503, 503, 503], []
    with epimem.Client(flaky, retries=2) as client:
        with pytest.raises(epimem.Unavailable) as busy:
            client.stats()
    assert busy.value.status == 503 and len(Flaky.seen) == 3
