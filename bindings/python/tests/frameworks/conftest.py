"""What the framework tests share: a scripted model on loopback, what the sessions say, and\nthe docs' examples run as a user runs them."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import Any, Iterator, List, Tuple

import pytest

from .scripted_model import ScriptedModel


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    server = ScriptedModel()
    yield server
    server.stop()


def held_in(memory: Any, conversation: str) -> List[Tuple[str, str]]:
    """What ``conversation`` holds, oldest first, once closed into episodes: (role, content)."""
    memory.flush(conversation)
    held = []
    for episode in reversed(memory.episodes(conversation=conversation).episodes):
        for message in memory.episode(episode.id).messages or []:
            if not message.context:
                held.append((message.role, message.content))
    return held


# What the tests tell a first session, ask a second, and set as a new task.
TOLD = "My sister Ana moved to Porto last spring."
ASKED = "Where does my sister live now?"
NEW_TASK = "Write a haiku about autumn leaves."


EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, model: Any, *args: str, said: str = "") -> str:
    """Runs ``examples/<name>`` as a user runs it (against the scripted model, if given); what
    it printed."""
    env = dict(os.environ, OPENAI_MODEL="scripted", OPENAI_API_KEY="none",
               OPENAI_AGENTS_DISABLE_TRACING="1")
    if model is not None:
        env["OPENAI_BASE_URL"] = model.url
    run = subprocess.run([sys.executable, str(EXAMPLES / name), *args], input=said, env=env,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    return run.stdout


def second_session_is_told(name: str, model: Any, tmp_path: pathlib.Path) -> None:
    """Runs a chat example twice, one session each: the first request of the second carries
    what the first was told, and the first was told nothing."""
    db = str(tmp_path / "example.db")
    assert run_example(name, model, db, "s1", said=TOLD + "\n").strip() == "Noted."
    first = [model.system_of(r["body"]) for r in model.requests]
    assert not any("Ana moved to Porto" in told for told in first), first
    asked_from = len(model.requests)
    assert run_example(name, model, db, "s2", said=ASKED + "\n").strip() == "Noted."
    told = model.system_of(model.requests[asked_from]["body"])
    assert "Ana moved to Porto" in told, told
