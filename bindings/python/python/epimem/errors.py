"""Errors: every failed call raises an :class:`EpimemError` whose ``code`` is the API's stable
code, as a subclass per code (``epimem.NotFound``, ``epimem.BadInput``, …)."""

from __future__ import annotations

from typing import Dict, Optional, Type


class EpimemError(Exception):
    """A call that failed. ``code`` is stable and machine-readable; ``message`` names what was
    wrong; ``status`` is the HTTP status when the call went over HTTP."""

    code = "internal"

    def __init__(self, message: str, *, code: Optional[str] = None, status: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class BadInput(EpimemError):
    """The request is wrong (a field, a value); sending it again fails again."""

    code = "bad_input"


class Unauthorized(EpimemError):
    """No API key, or one the server does not know."""

    code = "unauthorized"


class Forbidden(EpimemError):
    """The key may not do this (another tenant's records, an admin call)."""

    code = "forbidden"


class NotFound(EpimemError):
    """No such episode, conversation, node or route."""

    code = "not_found"


class Conflict(EpimemError):
    """The request contradicts the state it works on; retry later."""

    code = "conflict"


class PayloadTooLarge(EpimemError):
    """The request is larger than the server takes."""

    code = "payload_too_large"


class Timeout(EpimemError):
    """The server or the engine took longer than allowed."""

    code = "timeout"


class Unavailable(EpimemError):
    """Busy or unreachable (a search index being built, a database away); retrying may work."""

    code = "unavailable"


class Internal(EpimemError):
    """A defect or corruption on the other side."""

    code = "internal"


_BY_CODE: Dict[str, Type[EpimemError]] = {
    cls.code: cls
    for cls in (BadInput, Unauthorized, Forbidden, NotFound, Conflict, PayloadTooLarge, Timeout,
                Unavailable, Internal)
}


def error_for(code: str, message: str, status: Optional[int] = None) -> EpimemError:
    """The exception for ``code``; a code this version does not know is an ``EpimemError``
    carrying it."""
    cls = _BY_CODE.get(code, EpimemError)
    return cls(message, code=code, status=status)
