import os
from typing import Optional, Union

_Path = Union[str, os.PathLike[str]]

class NativeError(Exception):
    """args: (code, message)."""

class Native:
    def __init__(
        self,
        db: Optional[_Path] = None,
        tenant: Optional[str] = None,
        config: Optional[_Path] = None,
        models: Optional[_Path] = None,
        embedder: Optional[str] = None,
        background: bool = True,
    ) -> None: ...
    def call(
        self,
        operation: str,
        params: str,
        traceparent: Optional[str] = None,
        tracestate: Optional[str] = None,
    ) -> str: ...
    def timed_call(self, operation: str, params: str) -> tuple[str, float]: ...
    def close(self) -> None: ...
    @property
    def tenant(self) -> str: ...

def flush_traces() -> None: ...
