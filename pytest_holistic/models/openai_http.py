"""JSON over HTTP to an OpenAI-compatible server: retries with backoff, per-request timeouts, a circuit breaker.

Standard library only (``urllib``), so talking to vLLM, SGLang, TGI or llama.cpp adds no dependency. Many
threads share one client. A request is tried again after a 429, a 5xx or a dropped connection, waiting
``Retry-After`` when the server says so and an exponential backoff otherwise. Once a request has used up its
tries because the server could not be reached, the server is marked down: later requests make one try each and
fail at once, so a dead server costs each remaining item milliseconds, not a full backoff; the first success
clears the mark. The API key goes into the ``Authorization`` header only, never into an error message.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ModelOutputError

RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
_CONNECTION_ERRORS = (urllib.error.URLError, ConnectionError, http.client.HTTPException, socket.timeout, TimeoutError, OSError)


class ServerUnavailable(ModelOutputError):
    """The server could not be reached or kept failing (a 5xx, a 429, a timeout): no request's own fault."""


class RequestRejected(ModelOutputError):
    """The server answered with an error that trying again will not change (a 4xx other than 408/409/429)."""

    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``retries`` further tries after the first, each request bounded by ``timeout`` seconds."""

    retries: int = 4
    timeout: float = 300.0
    backoff: float = 0.5
    max_backoff: float = 16.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before try ``attempt + 1``: the server's ``Retry-After`` if given, else jittered exponential backoff."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_backoff * 4)
        return min(self.backoff * 2**attempt, self.max_backoff) * random.uniform(0.75, 1.25)


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    value = (headers or {}).get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _detail(body: bytes) -> str:
    """The server's own error message, one line (OpenAI's ``{"error": {"message": ...}}`` or the raw text)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return (text.splitlines() or [""])[0][:300]
    error = data.get("error", data) if isinstance(data, dict) else data
    message = error.get("message") or error.get("detail") if isinstance(error, dict) else error
    if not isinstance(message, str):
        message = json.dumps(message)[:300]
    return (message.strip().splitlines() or [""])[0][:300]


def _reason(error: BaseException) -> str:
    inner = getattr(error, "reason", None)
    shown = inner if isinstance(inner, BaseException) else error
    text = str(shown).strip()
    return f"{type(shown).__name__}: {text}" if text else type(shown).__name__


def _timed_out(error: BaseException) -> bool:
    inner = getattr(error, "reason", None)
    return isinstance(error, TimeoutError | socket.timeout) or isinstance(inner, TimeoutError | socket.timeout)


class JsonClient:
    """POST/GET JSON to ``base_url`` (``http://host:port/v1``) with the policy above; safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        policy: RetryPolicy,
        shown_url: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.shown_url = shown_url  # the URL as reports may show it (no user info)
        self._api_key = api_key
        self.policy = policy
        self._sleep = sleep
        self._lock = threading.Lock()
        self._down: str | None = None  # why the server was last found unreachable; cleared by a success

    @property
    def down(self) -> str | None:
        return self._down

    def _mark(self, down: str | None) -> None:
        with self._lock:
            self._down = down

    def get(self, path: str, tries: int | None = None) -> Any:
        return self._call("GET", path, None, tries)

    def post(self, path: str, payload: Mapping[str, Any], tries: int | None = None) -> Any:
        return self._call("POST", path, dict(payload), tries)

    def _request(self, method: str, path: str, payload: dict[str, Any] | None) -> urllib.request.Request:
        headers = {"Accept": "application/json"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return urllib.request.Request(f"{self.base_url}{path}", data=data, headers=headers, method=method)

    def _call(self, method: str, path: str, payload: dict[str, Any] | None, tries: int | None) -> Any:
        """One request, tried again on what trying again can fix; raises ServerUnavailable or RequestRejected."""
        allowed = (self.policy.retries + 1) if tries is None else tries
        if self._down is not None:
            allowed = 1  # the server was unreachable a moment ago: one try, no backoff
        last = ""
        unreachable = False
        retry_after: float | None = None
        for attempt in range(allowed):
            if attempt:
                self._sleep(self.policy.delay(attempt - 1, retry_after))
            retry_after = None
            try:
                with urllib.request.urlopen(self._request(method, path, payload), timeout=self.policy.timeout) as response:
                    body = response.read()
                self._mark(None)
                try:
                    return json.loads(body)
                except ValueError:
                    raise ModelOutputError(
                        f"server {self.shown_url} answered {method} {path} with something that is not JSON: {body[:80]!r}"
                    ) from None
            except urllib.error.HTTPError as error:
                body = error.read() if error.fp is not None else b""
                detail = _detail(body)
                self._mark(None)  # it answered: it is up
                if error.code not in RETRIED_STATUSES:
                    raise RequestRejected(
                        f"server {self.shown_url} refused {method} {path} with HTTP {error.code}: {detail}", error.code, detail
                    ) from None
                retry_after = _retry_after(error.headers)
                last = f"HTTP {error.code}: {detail}"
                unreachable = False
            except _CONNECTION_ERRORS as error:
                last = _reason(error)
                # A timeout is a slow or busy server, not a dead one: retried, but it does not mark the server down.
                unreachable = not _timed_out(error)
        tried = f"{allowed} {'try' if allowed == 1 else 'tries'}"
        if unreachable:
            self._mark(last)
            raise ServerUnavailable(f"server {self.shown_url} unreachable ({method} {path}, {tried}): {last}")
        raise ServerUnavailable(f"server {self.shown_url} kept failing ({method} {path}, {tried}): {last}")
