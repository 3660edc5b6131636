"""epimem: episodic memory for LLM agents.

``Memory`` runs the engine in this process (a SQLite file or a PostgreSQL database);
``Client`` and ``AsyncClient`` reach a running ``epimem serve``. All three answer the same
calls (remember, recall, episodes, correct, forget, flush, timeline, facts, stats, …) with the
same types, read from the API's OpenAPI document, and raise the same errors.
"""

from . import models
from .client import AsyncClient, Client
from .errors import (
    BadInput,
    Conflict,
    EpimemError,
    Forbidden,
    Internal,
    NotFound,
    PayloadTooLarge,
    Timeout,
    Unauthorized,
    Unavailable,
)
from .memory import Memory
from .models import (
    AddedOut,
    DeletedOut,
    EpisodeOut,
    EpisodesOut,
    FactsOut,
    MessageIn,
    NextTurnOut,
    RecallOut,
    StatsOut,
    TimelineNodeOut,
    TimelineOut,
    TurnOut,
)

__all__ = [
    "AddedOut", "AsyncClient", "BadInput", "Client", "Conflict", "DeletedOut", "EpimemError",
    "EpisodeOut", "EpisodesOut", "FactsOut", "Forbidden", "Internal", "Memory", "MessageIn",
    "NextTurnOut", "NotFound", "PayloadTooLarge", "RecallOut", "StatsOut", "TimelineNodeOut",
    "TimelineOut", "Timeout", "TurnOut", "Unauthorized", "Unavailable", "models",
]
