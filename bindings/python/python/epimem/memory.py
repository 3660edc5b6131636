"""``Memory``: the engine in this process, on a SQLite file or a PostgreSQL database."""

from __future__ import annotations

import atexit
import json
import os
from typing import Optional, Union

from . import _native
from ._operations import Call, Operations, T
from ._trace_context import trace_context
from .errors import error_for

# With a collector configured (OTEL_EXPORTER_OTLP_ENDPOINT), the first Memory starts sending
# traces; what is still buffered goes at exit.
atexit.register(_native.flush_traces)

PathLike = Union[str, "os.PathLike[str]"]


class Memory(Operations):
    """The epimem engine, embedded: no server runs.

    ``Memory("memory.db")`` opens (or creates) a SQLite file; ``Memory("postgres://…")`` a
    PostgreSQL database. The embedding models are found as the ``epimem`` command finds them
    (``models``, else ``EPIMEM_MODELS``, else ``~/.cache/epimem/models``); ``embedder="hash"``
    needs none. While the object is open a background thread closes conversations that fell
    silent into episodes and rolls up the timeline; use it in a ``with`` block, or call
    ``close()``.
    """

    def __init__(
        self,
        db: Optional[PathLike] = None,
        *,
        tenant: Optional[str] = None,
        models: Optional[PathLike] = None,
        config: Optional[PathLike] = None,
        embedder: Optional[str] = None,
        background: bool = True,
    ) -> None:
        try:
            self._native = _native.Native(db=db, tenant=tenant, config=config, models=models,
                                          embedder=embedder, background=background)
        except _native.NativeError as e:
            raise error_for(*e.args) from None

    @property
    def tenant(self) -> str:
        """The tenant every call works in."""
        return self._native.tenant

    def _send(self, call: Call[T]) -> T:
        try:
            caller = trace_context()
            answer = self._native.call(call.operation, json.dumps(call.request()),
                                       caller.get("traceparent"), caller.get("tracestate"))
        except _native.NativeError as e:
            raise error_for(*e.args) from None
        return call.answer.model_validate_json(answer)

    def close(self) -> None:
        """Stops the background thread (its current run finishes first). Calls after it fail."""
        self._native.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<epimem.Memory tenant={self.tenant!r}>"
