"""What the framework tests share: a scripted model on loopback."""

from __future__ import annotations

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
