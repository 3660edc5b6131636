"""What the tests share: the `epimem` binary cargo built, a real `epimem serve` on loopback,
and an embedded Memory on a fresh SQLite file."""

from __future__ import annotations

import os
import pathlib
import subprocess
from typing import Iterator

import pytest

import epimem

ROOT = pathlib.Path(__file__).resolve().parents[3]
# A fixed clock, so that two processes answer with the same times.
CLOCK = "2026-05-04T12:00:00Z"
# The worker ticks often, so a test waits little for it.
FAST = "[server]\ntick_seconds = 0.1\n"


def binary() -> str:
    path = pathlib.Path(os.environ.get("EPIMEM_BIN", ROOT / "target" / "debug" / "epimem"))
    if not path.exists():
        pytest.fail(f"{path} does not exist: build it with `cargo build -p epimem`")
    return str(path)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EPIMEM_TENANT", "EPIMEM_CONFIG", "EPIMEM_LLM_URL", "EPIMEM_LLM_MODEL", "EPIMEM_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EPIMEM_EMBEDDER", "hash")
    monkeypatch.setenv("EPIMEM_CLOCK", CLOCK)


@pytest.fixture
def config(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "epimem.toml"
    path.write_text(FAST)
    return path


class Server:
    """`epimem serve` on a free loopback port, stopped when the test ends."""

    def __init__(self, db: pathlib.Path, config: pathlib.Path, tenant: str = "default"):
        env = dict(os.environ)
        self.process = subprocess.Popen(
            [binary(), "--db", str(db), "--config", str(config), "--tenant", tenant,
             "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if "http://127.0.0.1:" not in line:
            self.stop()
            raise RuntimeError(f"epimem serve did not start: {line!r}")
        self.url = line.strip().rsplit(" ", 1)[-1]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture
def serve(config: pathlib.Path) -> Iterator:
    servers = []

    def start(db: pathlib.Path, tenant: str = "default") -> Server:
        server = Server(db, config, tenant)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def memory(tmp_path: pathlib.Path, config: pathlib.Path) -> Iterator[epimem.Memory]:
    with epimem.Memory(tmp_path / "memory.db", config=config) as m:
        yield m
