"""A response cache shared by every worker on the machine, safe against crashes and concurrent writers.

SQLite in WAL mode: each finished batch is committed in its own transaction, so a run killed with
SIGKILL loses at most the batch in flight, and concurrent xdist workers never corrupt the file. Keys
hash the model's identity (name, backend, revision and variant: dtype, device kind...), the request kind
and every request field, so a result is reused only for the same weights, numerics, prompt and decoding
parameters (seed included); batch size and worker count are not part of the key because results do not
depend on them. The ``models`` table keeps the details of the last load of each identity, so a warm run
that never loads the model can still report its architecture, parameters and device.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .base import GenerationRequest, GenerationResult, LoglikelihoodRequest, LoglikelihoodResult, ModelInfo

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL, value TEXT NOT NULL)"
)
MODELS_SCHEMA = "CREATE TABLE IF NOT EXISTS models (key TEXT PRIMARY KEY, details TEXT NOT NULL)"
FILE_NAME = "responses.sqlite"
APPLICATION_ID = int.from_bytes(b"phrc", "big")
"""SQLite's application_id of a response cache (``PRAGMA application_id``): the file says whose it is."""
_COLUMNS = {"responses": ("key", "kind", "model", "value"), "models": ("key", "details")}
_SQLITE_MAGIC = b"SQLite format 3\x00"
CACHE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, OSError, ValueError)
"""What an unusable cache raises: a broken or foreign file, an unreachable folder, a row that is not our JSON."""
_RESULT_TYPES: dict[str, type[GenerationResult | LoglikelihoodResult]] = {
    "generate": GenerationResult,
    "loglikelihood": LoglikelihoodResult,
}
_RESULT_FIELDS = {kind: frozenset(f.name for f in dataclasses.fields(kind_type)) for kind, kind_type in _RESULT_TYPES.items()}


def model_key(info: ModelInfo) -> str:
    """Everything about the model that changes an answer; ``details`` of one loaded copy are not part of it."""
    payload = json.dumps([info.name, info.backend, info.revision, sorted(info.variant.items())], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def request_key(info: ModelInfo, kind: str, request: GenerationRequest | LoglikelihoodRequest) -> str:
    return request_keys(info, kind, [request])[0]


def request_keys(info: ModelInfo, kind: str, requests: Sequence[GenerationRequest | LoglikelihoodRequest]) -> list[str]:
    """The cache key of each request: the model's key is hashed once for the lot, not once per request.

    Requests hold only strings, numbers and tuples of strings, so their field values serialise exactly as
    ``dataclasses.astuple`` did (keys stay those of earlier versions) without its recursive copy.
    """
    model = model_key(info)
    names: dict[type, tuple[tuple[str, ...], dict[str, Any]]] = {}  # per request type: field names, fields keyed off default
    keys = []
    for request in requests:
        known = names.get(type(request))
        if known is None:
            later: frozenset[str] = getattr(request, "KEYED_ONLY_OFF_DEFAULT", frozenset())
            known = names[type(request)] = (
                tuple(f.name for f in dataclasses.fields(request)),
                {f.name: f.default for f in dataclasses.fields(request) if f.name in later},
            )
        own, defaults = known
        values = [getattr(request, name) for name in own if name not in defaults or getattr(request, name) != defaults[name]]
        payload = json.dumps([model, kind, values], ensure_ascii=False)
        keys.append(hashlib.sha256(payload.encode()).hexdigest())
    return keys


def _encode(result: GenerationResult | LoglikelihoodResult) -> str:
    fields = dataclasses.asdict(result)
    del fields["cached"]  # provenance of one answer, set when it is read back
    return json.dumps(fields)


def _decode(kind: str, value: str) -> GenerationResult | LoglikelihoodResult:
    """A stored result, marked as replayed; fields added since the row was written take their defaults."""
    fields = json.loads(value)
    if "token_logprobs" in fields:
        fields["token_logprobs"] = tuple(fields["token_logprobs"])
    known = _RESULT_FIELDS[kind]
    return _RESULT_TYPES[kind](**{name: value for name, value in fields.items() if name in known}, cached=True)


class ForeignCacheError(ValueError):
    """The cache path holds a file that is not a response cache; nothing was written to it."""


def _tables(path: Path) -> dict[str, tuple[str, ...]]:
    """Each table's column names, read without writing anything: no lock, no journal, no WAL file created."""
    connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        names = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = "SELECT name FROM pragma_table_info(?)"
        return {name: tuple(row[0] for row in connection.execute(columns, (name,))) for name in names}
    finally:
        connection.close()


def check_identity(path: Path) -> None:
    """Refuse, before anything opens it for writing, a file at the cache path that is not a response cache.

    Opening for writing would switch the file to WAL mode and add tables, so a foreign database given as the
    cache would be altered before a query failed. Caches carry :data:`APPLICATION_ID`; those written before it
    existed are recognised by holding only the cache's own tables. An empty file is a new cache.
    """
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except FileNotFoundError:
        return
    if not header:
        return
    fix = "point --holistic-cache-dir at another folder, or move the file away"
    if not header.startswith(_SQLITE_MAGIC) or len(header) < 100:
        raise ForeignCacheError(f"{path} is not an SQLite file, so not a response cache; it was left as it is: {fix}")
    application_id = int.from_bytes(header[68:72], "big")
    if application_id == APPLICATION_ID:
        return
    tables = _tables(path) if application_id == 0 else {}
    if application_id != 0 or any(_COLUMNS.get(name) != columns for name, columns in tables.items()):
        what = f"application id {application_id:#x}" if application_id else f"tables {', '.join(sorted(tables))}"
        raise ForeignCacheError(f"{path} is another program's SQLite database ({what}); it was left as it is: {fix}")


class ResponseCache:
    """Maps requests to stored results; opened lazily by each process that needs it."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE_NAME
        self._connection: sqlite3.Connection | None = None

    @property
    def connection(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            check_identity(self.path)
            # Used by one thread at a time, but not always the one that opened it (a shard computed ahead).
            connection = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            try:
                # Switching to WAL and creating the table take locks that SQLite may refuse at once, without
                # waiting, when several workers open a new cache together: retry for a while. The application
                # id is set first, while a new file is still in rollback mode, so it lands in the file's header.
                if connection.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                    _retry(lambda: connection.execute(f"PRAGMA application_id = {APPLICATION_ID}"))
                _retry(lambda: connection.execute("PRAGMA journal_mode=WAL"))
                connection.execute("PRAGMA synchronous=NORMAL")
                _retry(lambda: connection.execute(SCHEMA))
                _retry(lambda: connection.execute(MODELS_SCHEMA))
            except sqlite3.Error:
                connection.close()  # e.g. not an SQLite file: leave no half-open connection behind
                raise
            self._connection = connection
        return self._connection

    def get_many(self, keys: Sequence[str], kind: str) -> dict[str, GenerationResult | LoglikelihoodResult]:
        found: dict[str, GenerationResult | LoglikelihoodResult] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for key, value in self.connection.execute(f"SELECT key, value FROM responses WHERE key IN ({marks})", chunk):
                found[key] = _decode(kind, value)
        return found

    def put_many(self, rows: Iterable[tuple[str, GenerationResult | LoglikelihoodResult]], kind: str, model: str) -> None:
        """Store one finished batch in a single transaction."""
        values = [(key, kind, model, _encode(result)) for key, result in rows]

        def write() -> None:
            with self.connection:
                self.connection.execute("BEGIN IMMEDIATE")  # take the write lock now (waits), not mid-transaction
                self.connection.executemany(
                    "INSERT OR REPLACE INTO responses (key, kind, model, value) VALUES (?, ?, ?, ?)", values
                )

        _retry(write)

    def get_model(self, info: ModelInfo) -> dict[str, Any] | None:
        """The details of the last load of this identity, if any was recorded."""
        row = self.connection.execute("SELECT details FROM models WHERE key = ?", (model_key(info),)).fetchone()
        return dict(json.loads(row[0])) if row is not None else None

    def put_model(self, info: ModelInfo, details: dict[str, Any]) -> None:
        """Record a loaded copy's details under its identity (the last load wins)."""

        def write() -> None:
            with self.connection:
                self.connection.execute("BEGIN IMMEDIATE")
                row = (model_key(info), json.dumps(details, default=str))
                self.connection.execute("INSERT OR REPLACE INTO models (key, details) VALUES (?, ?)", row)

        _retry(write)

    def count(self) -> int:
        return int(self.connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the connection; one that fails to close is dropped all the same (there is nothing left to save)."""
        if self._connection is not None:
            connection, self._connection = self._connection, None
            try:
                connection.close()
            except sqlite3.Error:
                pass


def _retry(action: Any, attempts: int = 100, pause: float = 0.1) -> Any:
    for attempt in range(attempts):
        try:
            return action()
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error) or attempt == attempts - 1:
                raise
            time.sleep(pause)
    return None


def clear(folder: Path) -> str | None:
    """Delete the cache file and its WAL side files (``--cache-clear``); why that failed, instead of raising.

    A file that cannot be deleted (a folder in its place, no permission) is left for the run to find: opening
    it then fails too, and the cache is disabled with its one-line problem.
    """
    for suffix in ("", "-wal", "-shm"):
        try:
            (folder / f"{FILE_NAME}{suffix}").unlink(missing_ok=True)
        except OSError as error:
            return f"--cache-clear could not delete {folder / f'{FILE_NAME}{suffix}'}: {error.strerror or error}"
    return None
