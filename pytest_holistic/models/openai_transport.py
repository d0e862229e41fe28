"""One HTTP exchange under one wall-clock deadline, cancellable from any thread.

``urllib``'s timeout bounds each socket operation, so a server that sends a byte every half second holds a
request forever. Here the deadline covers the whole exchange: connecting (non-blocking, in short slices), the
TLS handshake, the headers and the body. A timer shuts the socket down when the deadline passes, which wakes the
thread blocked on it, and :meth:`Exchanges.cancel` does the same to every exchange in flight at once (the
session is ending). The socket is closed by the thread that owns it, never under its feet. The body is read in
chunks up to a byte limit, so an answer larger than the request can justify is refused without being held.
"""

from __future__ import annotations

import errno
import http.client
import os
import selectors
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message

CHUNK = 1 << 16
_SLICE = 0.05  # seconds between checks while a connection is being made


class Ended(Exception):
    """The exchange was cut short: ``why`` is ``timed out`` or ``cancelled``."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class TooLarge(Exception):
    """The answer's body exceeded the byte limit of its request."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


@dataclass(frozen=True)
class Endpoint:
    """Where to connect: scheme, host, port and base path, without user info."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def from_url(cls, url: str) -> Endpoint:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        return cls(scheme, host, parts.port or (443 if scheme == "https" else 80), parts.path.rstrip("/"))


@dataclass(frozen=True)
class Response:
    status: int
    headers: Message
    body: bytes


class _Exchange:
    """One exchange's connection and whether (and why) it was ended from outside."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.connection: http.client.HTTPConnection | None = None
        self.ended: str | None = None

    def end(self, why: str) -> None:
        with self.lock:
            if self.ended is not None:
                return
            self.ended = why
            sock = self.connection.sock if self.connection is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading or writing it
            except OSError:
                pass  # not connected yet (the connect loop sees ``ended``) or already closed

    def check(self) -> None:
        if self.ended is not None:
            raise Ended(self.ended)


class Exchanges:
    """The exchanges of one client; :meth:`cancel` ends all of them, now and from then on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[_Exchange] = set()
        self._cancelled = threading.Event()
        self._tls: ssl.SSLContext | None = None  # the default context, made once: loading the CA store takes milliseconds

    @property
    def cancelled(self) -> threading.Event:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            self._cancelled.set()
            open_now = list(self._open)
        for exchange in open_now:
            exchange.end("cancelled")

    def run(
        self,
        endpoint: Endpoint,
        method: str,
        path: str,
        body: bytes | None,
        headers: Mapping[str, str],
        timeout: float,
        max_bytes: int,
    ) -> Response:
        """Send one request and read its whole answer within ``timeout`` seconds; raises Ended, TooLarge or OSError."""
        exchange = _Exchange()
        with self._lock:
            if self._cancelled.is_set():
                raise Ended("cancelled")
            self._open.add(exchange)
        deadline = time.monotonic() + timeout
        timer = threading.Timer(timeout, exchange.end, ("timed out",))
        timer.daemon = True
        timer.start()
        try:
            return self._exchange(exchange, endpoint, method, path, body, headers, deadline, max_bytes)
        except (OSError, http.client.HTTPException, ValueError):
            exchange.check()  # a socket shut down under the exchange fails in many ways: say why it was
            raise
        finally:
            timer.cancel()
            with self._lock:
                self._open.discard(exchange)
            if exchange.connection is not None:
                exchange.connection.close()

    def _exchange(
        self,
        exchange: _Exchange,
        endpoint: Endpoint,
        method: str,
        path: str,
        body: bytes | None,
        headers: Mapping[str, str],
        deadline: float,
        max_bytes: int,
    ) -> Response:
        remaining = max(deadline - time.monotonic(), 0.001)
        if endpoint.scheme == "https":
            with self._lock:
                self._tls = self._tls or ssl.create_default_context()
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                endpoint.host, endpoint.port, timeout=remaining, context=self._tls
            )
        else:
            connection = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=remaining)
        # http.client opens its socket through this attribute; ours can be given up on while it connects.
        connection._create_connection = lambda address, timeout, source=None: _connect(address, exchange, deadline)  # type: ignore[attr-defined]
        with exchange.lock:
            exchange.connection = connection
        connection.connect()
        exchange.check()  # ended while the socket was being handed over: it was not shut down, so stop here
        connection.request(method, endpoint.path + path, body=body, headers=dict(headers))
        exchange.check()
        answer = connection.getresponse()
        length = answer.getheader("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) > max_bytes:
            raise TooLarge(max_bytes)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = answer.read(CHUNK)
            exchange.check()
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(max_bytes)
            chunks.append(chunk)
        return Response(answer.status, answer.headers, b"".join(chunks))


def _connect(address: tuple[str, int], exchange: _Exchange, deadline: float) -> socket.socket:
    """A connected socket to ``address`` by ``deadline``, given up on as soon as the exchange is ended."""
    host, port = address
    last: OSError | None = None
    for family, kind, proto, _, where in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        sock = socket.socket(family, kind, proto)
        try:
            _connect_one(sock, where, exchange, deadline)
        except BaseException as error:
            sock.close()
            if not isinstance(error, OSError) or isinstance(error, TimeoutError):
                raise
            last = error
            continue
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        return sock
    raise last or OSError(f"no address found for {host}")


def _connect_one(
    sock: socket.socket,
    where: tuple[str, int] | tuple[str, int, int, int] | tuple[int, bytes],
    exchange: _Exchange,
    deadline: float,
) -> None:
    sock.setblocking(False)
    code = sock.connect_ex(where)
    if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY):
        raise OSError(code, os.strerror(code))  # the errno's own subclass: ConnectionRefusedError...
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_WRITE)
        while code != 0:
            exchange.check()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out while connecting")
            if selector.select(min(_SLICE, remaining)):
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    raise OSError(code, os.strerror(code))
                break
    exchange.check()
