from typing import Optional

class NativeError(Exception):
    """args: (code, message)."""

class Native:
    def __init__(
        self,
        db: Optional[str] = None,
        tenant: Optional[str] = None,
        config: Optional[str] = None,
        models: Optional[str] = None,
        embedder: Optional[str] = None,
        background: bool = True,
    ) -> None: ...
    def call(self, operation: str, params: str) -> str: ...
    def timed_call(self, operation: str, params: str) -> tuple[str, float]: ...
    def close(self) -> None: ...
    @property
    def tenant(self) -> str: ...
