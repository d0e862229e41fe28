"""JSON over HTTP to an OpenAI-compatible server: retries with backoff, a deadline per try, a circuit breaker.

Standard library only (``http.client``), so talking to vLLM, SGLang, TGI or llama.cpp adds no dependency. Many
threads share one client. Each try has one wall-clock deadline, ``RetryPolicy.timeout``, covering connect, headers
and body (:mod:`.openai_transport`). A request is tried again after a 429, a 5xx, a timeout or a dropped
connection, ``retries`` times at most: it is sent at most ``retries + 1`` times, so one request costs at most
``(retries + 1) * timeout`` plus the waits between tries, each at most :data:`MAX_RETRY_AFTER` seconds (the
server's ``Retry-After``, capped, or an exponential backoff below that). Once a request has used up its tries
because the server could not be reached, the server is marked down: later requests make one try each and fail at
once, so a dead server costs each remaining item milliseconds, not a full backoff; the first success clears the
mark. :meth:`JsonClient.cancel` ends every try in flight and every later one at once, waits included.

The API key goes into the ``Authorization`` header only. A URL's user info (``http://user:pass@host/v1``) is sent
as HTTP Basic authentication and is never part of the URL shown. Whatever the server says is scrubbed of these
secrets, and of anything shaped like a key (:mod:`.redact`), before it becomes part of a message.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import math
import random
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ModelOutputError, error_line
from .base import Cancelled  # the client's cancellation is the session's: the executor stops on it
from .openai_transport import Ended, Endpoint, Exchanges, TooLarge
from .redact import Redactor

RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0
"""The longest wait between two tries, whatever ``Retry-After`` asks: a server asking for more is tried again after this."""
DEFAULT_MAX_BYTES = 8 << 20
"""The largest answer a request without a bound of its own (``GET /models``) accepts."""
_MESSAGE_CHARS = 300
_CONNECTION_ERRORS = (ConnectionError, http.client.HTTPException, TimeoutError, OSError, ValueError)
_DELTA_SECONDS = re.compile(r"\d{1,12}(\.\d{1,9})?")


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
    """How hard to try: ``retries`` further tries after the first, each ending after ``timeout`` seconds at most."""

    retries: int = 4
    timeout: float = 300.0
    backoff: float = 0.5
    max_backoff: float = 16.0
    max_retry_after: float = MAX_RETRY_AFTER

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before try ``attempt + 1``: the server's ``Retry-After`` (capped) if given, else jittered backoff."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        growth: int = 2**attempt
        return min(min(self.backoff * growth, self.max_backoff) * random.uniform(0.75, 1.25), self.max_retry_after)

    def longest(self) -> float:
        """The most seconds one request can take, every try and every wait included."""
        return (self.retries + 1) * self.timeout + self.retries * self.max_retry_after


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP-date; None when absent or not one of those.

    ``nan``, ``inf``, negative numbers and garbage are None (the backoff applies); a date in the past is 0.
    """
    if value is None:
        return None
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None  # not an HTTP-date (those are always GMT)
    seconds = when.timestamp() - (time.time() if now is None else now)
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _detail(body: bytes) -> str:
    """The server's own error message, one line (OpenAI's ``{"error": {"message": ...}}`` or the raw text)."""
    text = body[: 64 << 10].decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return error_line(text)[:2000]
    error = data.get("error", data) if isinstance(data, dict) else data
    message = (error.get("message") or error.get("detail")) if isinstance(error, dict) else error
    if not isinstance(message, str):
        try:
            message = json.dumps(message)[:2000]
        except (ValueError, RecursionError):
            message = type(message).__name__
    return error_line(message)[:2000]


def _credentials(url: str) -> tuple[str, str | None, str | None]:
    """The URL without user info, and the user and password it carried (percent-decoded), if any."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    user_info, _, host = parts.netloc.rpartition("@")
    user, _, password = user_info.partition(":")
    clean = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return clean, urllib.parse.unquote(user), urllib.parse.unquote(password)


class JsonClient:
    """POST/GET JSON to ``base_url`` (``http://host:port/v1``) with the policy above; safe to share between threads.

    ``sleep`` replaces the wait between tries (tests record the delays); by default the wait ends early on a cancel.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        policy: RetryPolicy,
        shown_url: str,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        url, user, password = _credentials(base_url.rstrip("/"))
        self.base_url = url
        self.shown_url = shown_url  # the URL as reports may show it (no user info)
        self._authorization: str | None = None
        if user is not None:
            pair = f"{user}:{password or ''}".encode()
            self._authorization = f"Basic {base64.b64encode(pair).decode()}"
        elif api_key:
            self._authorization = f"Bearer {api_key}"
        secrets = [api_key, password] if password else [api_key, user]  # ``http://TOKEN@host``: the user is the secret
        self.redact = Redactor([*secrets, *(urllib.parse.quote(secret, safe="") for secret in secrets if secret)])
        self.policy = policy
        self._sleep = sleep
        self._exchanges = Exchanges()
        self._down: str | None = None  # why the server was last found unreachable; cleared by a success

    @property
    def down(self) -> str | None:
        return self._down

    @property
    def cancelled(self) -> bool:
        return self._exchanges.cancelled.is_set()

    def cancel(self) -> None:
        """End every request in flight now, and make every later one fail at once with :class:`Cancelled`."""
        self._exchanges.cancel()

    def _mark(self, down: str | None) -> None:
        self._down = down  # one reference assignment: atomic, the last writer wins

    def get(self, path: str, tries: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
        return self._call("GET", path, None, tries, max_bytes)

    def post(self, path: str, payload: Mapping[str, Any], tries: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
        return self._call("POST", path, dict(payload), tries, max_bytes)

    def _cancelled(self, method: str, path: str) -> Cancelled:
        return Cancelled(f"server {self.shown_url}: {method} {path} not completed: the session is ending")

    def _wait(self, seconds: float, method: str, path: str) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._exchanges.cancelled.wait(seconds)
        if self.cancelled:
            raise self._cancelled(method, path)

    def _headers(self, payload: bytes | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "Connection": "close"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self._authorization is not None:
            headers["Authorization"] = self._authorization
        return headers

    def _call(self, method: str, path: str, payload: dict[str, Any] | None, tries: int | None, max_bytes: int) -> Any:
        """One request, tried again on what trying again can fix; raises ServerUnavailable, RequestRejected or Cancelled."""
        allowed = (self.policy.retries + 1) if tries is None else tries
        if self._down is not None:
            allowed = 1  # the server was unreachable a moment ago: one try, no backoff
        data = json.dumps(payload).encode() if payload is not None else None
        endpoint = Endpoint.from_url(self.base_url)
        last = ""
        unreachable = False
        retry_after: float | None = None
        for attempt in range(allowed):
            if attempt:
                self._wait(self.policy.delay(attempt - 1, retry_after), method, path)
            retry_after = None
            try:
                response = self._exchanges.run(endpoint, method, path, data, self._headers(data), self.policy.timeout, max_bytes)
            except Ended as ended:
                if ended.why == "cancelled":
                    raise self._cancelled(method, path) from None
                last = f"timed out: no complete answer within {self.policy.timeout:g} s"
                unreachable = False  # a slow or busy server, not a dead one: it does not mark the server down
                continue
            except TooLarge as error:
                self._mark(None)
                raise ModelOutputError(
                    f"server {self.shown_url} answered {method} {path} with more than {error.limit} bytes, far more than "
                    "the request asked for; the answer was refused unread"
                ) from None
            except _CONNECTION_ERRORS as error:
                if self.cancelled:
                    raise self._cancelled(method, path) from None
                last = self.redact(error_line(error, typed=True))[:_MESSAGE_CHARS]
                unreachable = not isinstance(error, TimeoutError)
                continue
            self._mark(None)  # it answered: it is up
            if not 200 <= response.status < 300:
                detail = self.redact(_detail(response.body))[:_MESSAGE_CHARS]
                if response.status not in RETRIED_STATUSES:
                    raise RequestRejected(
                        f"server {self.shown_url} refused {method} {path} with HTTP {response.status}: {detail}",
                        response.status,
                        detail,
                    )
                retry_after = retry_after_seconds(response.headers.get("Retry-After"))
                last = f"HTTP {response.status}: {detail}"
                unreachable = False
                continue
            return self._decode(response.body, method, path)
        tried = f"{allowed} {'try' if allowed == 1 else 'tries'}"
        if unreachable:
            self._mark(last)
            raise ServerUnavailable(f"server {self.shown_url} unreachable ({method} {path}, {tried}): {last}")
        raise ServerUnavailable(f"server {self.shown_url} kept failing ({method} {path}, {tried}): {last}")

    def _decode(self, body: bytes, method: str, path: str) -> Any:
        try:
            return json.loads(body)
        except RecursionError:
            problem = "JSON nested too deeply to read"
        except ValueError:
            problem = f"something that is not JSON: {self.redact(repr(body[:80]))}"
        raise ModelOutputError(f"server {self.shown_url} answered {method} {path} with {problem}")
