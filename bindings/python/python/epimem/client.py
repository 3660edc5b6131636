"""``Client`` and ``AsyncClient``: a running ``epimem serve``, over HTTP (httpx)."""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import random
import time
from typing import Any, Dict, Optional, Tuple

import httpx

from ._operations import Call, Operations, T
from ._trace_context import trace_context
from .errors import error_for

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
# Failures that reached no server, or lost it: tried again like a busy answer.
UNREACHED = (httpx.ConnectError, httpx.RemoteProtocolError)
_STATUS_CODES = {400: "bad_input", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 408: "timeout", 409: "conflict", 413: "payload_too_large", 503: "unavailable"}


class _Http:
    """What both clients share: the request a call makes, retries and how an answer is read."""

    def __init__(self, base_url: str, api_key: Optional[str], retries: int):
        self.base_url = base_url.rstrip("/")
        self.headers = {"user-agent": "epimem-python"}
        if api_key:
            self.headers["authorization"] = f"Bearer {api_key}"
        self.retries = retries

    @staticmethod
    def request(call: Call[Any]) -> Dict[str, Any]:
        query = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in call.query.items()}
        out: Dict[str, Any] = {"method": call.method, "url": call.url(), "params": query}
        if call.body is not None:
            out["json"] = call.body
        # The server's trace of the call joins the caller's.
        caller = trace_context()
        if caller:
            out["headers"] = caller
        return out

    def wait(self, attempt: int, response: Optional[httpx.Response]) -> Optional[float]:
        """Seconds to wait before attempt ``attempt + 1``, or ``None`` not to retry."""
        if attempt >= self.retries:
            return None
        if response is not None:
            if response.status_code not in RETRIED_STATUSES:
                return None
            after = _retry_after(response.headers.get("retry-after"))
            if after is not None:
                return min(after, 60.0)
        return min(8.0, 0.25 * 2**attempt) * (0.5 + random.random() / 2)

    def settle(self, call: Call[T], attempt: int, response: Optional[httpx.Response],
               error: Optional[httpx.HTTPError]) -> Tuple[Optional[float], Optional[T]]:
        """After attempt ``attempt``: the seconds to wait before the next, or the answer (an
        error raised) when there is none."""
        pause = self.wait(attempt, response)
        if pause is not None:
            return pause, None
        if response is None:
            raise error_for("unavailable", f"{self.base_url}: {error}") from error
        return None, self.answer(call, response)

    @staticmethod
    def answer(call: Call[T], response: httpx.Response) -> T:
        if response.is_success:
            return call.answer.model_validate_json(response.content)
        code, message = _STATUS_CODES.get(response.status_code, "internal"), response.text
        try:
            error = response.json()["error"]
            code, message = error["code"], error["message"]
        except (ValueError, KeyError, TypeError):
            pass
        raise error_for(code, message, response.status_code)


def _retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` as seconds: a number, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class Client(Operations):
    """A running ``epimem serve`` at ``base_url`` (``http://127.0.0.1:7878``).

    ``api_key`` is sent as a bearer token once the server has keys. A call that meets 429 or
    a 5xx status, or no connection, is tried again up to ``retries`` times, waiting as
    ``Retry-After`` says (else a short, growing pause). Use it in a ``with`` block, or call
    ``close()``."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:7878",
        *,
        api_key: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 3,
    ) -> None:
        self._http = _Http(base_url, api_key, retries)
        self._client = httpx.Client(base_url=self._http.base_url, headers=self._http.headers,
                                    timeout=timeout)

    def _send(self, call: Call[T]) -> T:
        request = self._http.request(call)
        for attempt in itertools.count():
            try:
                response, error = self._client.request(**request), None
            except UNREACHED as e:
                response, error = None, e
            pause, answer = self._http.settle(call, attempt, response, error)
            if pause is None:
                return answer  # type: ignore[return-value]
            time.sleep(pause)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<epimem.Client {self._http.base_url}>"


class AsyncClient(Operations):
    """``Client`` for asyncio: every method is a coroutine (``await client.recall(…)``), with
    the same arguments and answers."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:7878",
        *,
        api_key: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 3,
    ) -> None:
        self._http = _Http(base_url, api_key, retries)
        self._client = httpx.AsyncClient(base_url=self._http.base_url,
                                         headers=self._http.headers, timeout=timeout)

    def _send(self, call: Call[T]) -> T:
        return self._sent(call)  # type: ignore[return-value]

    async def _sent(self, call: Call[T]) -> T:
        request = self._http.request(call)
        for attempt in itertools.count():
            try:
                response, error = await self._client.request(**request), None
            except UNREACHED as e:
                response, error = None, e
            pause, answer = self._http.settle(call, attempt, response, error)
            if pause is None:
                return answer  # type: ignore[return-value]
            await asyncio.sleep(pause)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<epimem.AsyncClient {self._http.base_url}>"
