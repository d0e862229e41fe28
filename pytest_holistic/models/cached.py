"""The one model every caller uses: any backend behind the response cache, with the same protocol.

The executor's shards, fixtures and property tests all call ``generate``/``loglikelihood`` (or their
``*_batches`` streams) on a ``CachedModel``. Cached answers come back without loading the model, so a
warm rerun never imports torch; the rest go to the backend, and each finished batch is committed at
once, so an interrupted run loses at most the batch in flight. A request the backend reports as
:class:`~.base.Failed` is passed through and never cached, so a rerun asks it again. Models whose revision is
unknown are never cached: a stale answer would be silent. Answers read back are marked ``cached`` (their timings
are replayed), and a warm run reports the model details recorded by the last load instead of loading.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import HolisticError, ModelLoadError, ModelOutputError, error_line
from ..metrics.stats import Stat
from .base import (
    BatchStreaming,
    Cancellable,
    Cancelled,
    ConcurrentStreams,
    Failed,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Model,
    ModelInfo,
    ReportsCapabilities,
)
from .cache import CACHE_ERRORS, ResponseCache, model_key, request_keys
from .registry import Backend

if TYPE_CHECKING:
    from ..progress import ModelProgress


@dataclass
class ModelStats:
    """What this process computed (cache misses) and reused (cache hits)."""

    generation_requests: int = 0
    loglikelihood_requests: int = 0
    cache_hits: int = 0
    batches: int = 0
    model_seconds: float = 0.0
    load_seconds: float = 0.0
    batch_seconds: Stat = field(default_factory=Stat)

    def counted(self, kind: str, requests: int, seconds: float) -> None:
        """One computed batch and how long it took (``model_seconds`` is kept by the stream's :class:`BusyClock`)."""
        if kind == "generate":
            self.generation_requests += requests
        else:
            self.loglikelihood_requests += requests
        self.batches += 1
        self.batch_seconds = self.batch_seconds.add(seconds)


@dataclass
class BusyClock:
    """Seconds during which at least one stream was computing: two shards computed side by side count their
    common time once, so a served run's model time is never more than its wall time."""

    clock: Callable[[], float] = time.perf_counter
    _open: int = 0
    _since: float = 0.0

    def enter(self) -> None:
        if self._open == 0:
            self._since = self.clock()
        self._open += 1

    def leave(self) -> float:
        """Close one stream; the busy seconds to add, which are nonzero only when the last open stream closes."""
        self._open -= 1
        return self.clock() - self._since if self._open == 0 else 0.0


def _work(request: Hashable) -> float:
    """What a request costs the model, for the time left: characters in, plus a token's worth (4) per token out.

    Only relative sizes matter, and they follow the batches' lengths, which the backend sorts by, so the time left
    stays honest when the longer batches come last.
    """
    if isinstance(request, GenerationRequest):
        return len(request.prompt) + 4 * request.max_tokens + 1
    if isinstance(request, LoglikelihoodRequest):
        return len(request.context) + len(request.continuation) + 1
    return 1.0


class CachedModel(BatchStreaming):
    """Looks requests up in the cache, computes the rest with the backend (loaded once), commits per batch."""

    def __init__(self, backend: Callable[[], Backend], cache: ResponseCache | None) -> None:
        self._resolve = backend
        self._backend: Backend | None = None
        self.cache = cache
        self.cache_problem: str | None = None
        self._model: Model | None = None
        self._failure: ModelLoadError | None = None
        self._identity: ModelInfo | None = None
        self._identified = False
        self._replayed: ModelInfo | None = None
        self._replayed_read = False
        self.stats = ModelStats()
        self.progress: ModelProgress | None = None  # lines about loading and long streams (a process with a terminal)
        self._busy = threading.RLock()  # one request stream at a time: the executor may compute a shard ahead in a thread
        self._clock = BusyClock()  # model time: while any stream computes, counted once however many run at once
        self._cancelled = False

    # -- identity and loading ----------------------------------------------------------------------

    def _guarded(self, action: Callable[[], Any]) -> Any:
        """Run a resolve/identify/load step; a failure is remembered so every later call fails the same way."""
        if self._failure is not None:
            raise self._failure
        try:
            return action()
        except ModelLoadError as error:
            self._failure = error
        except HolisticError:
            raise
        except Exception as error:  # a backend's own failure (unreadable weights, broken plugin code)
            self._failure = ModelLoadError(f"model backend failed: {error_line(error, typed=True)}")
        raise self._failure

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = self._guarded(self._resolve)
        return self._backend

    @property
    def identity(self) -> ModelInfo | None:
        """The cache identity (name, revision) without loading the weights; None when only loading can tell."""
        if not self._identified:
            self._identity = self._guarded(lambda: self.backend.identify())
            self._identified = True
        return self._identity

    def missing_capability(self, kind: str) -> str | None:
        """Why the backend cannot answer requests of ``kind`` (a served model that returns no prompt log-probabilities).

        Asked at collection, so a scenario that cannot run fails there in one line. Only backends that can lack
        a capability implement the question; for the others, and when resolving fails (said later, per item), None.
        """
        try:
            backend = self.backend
        except ModelLoadError:
            return None
        return backend.missing_capability(kind) if isinstance(backend, ReportsCapabilities) else None

    @property
    def load_failure(self) -> str | None:
        """Why resolving, identifying or loading the model failed in this process (None if it did not)."""
        return str(self._failure) if self._failure is not None else None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def touched(self) -> bool:
        """Whether anything in this process asked for the model (its identity, its weights or an answer)."""
        return self._backend is not None or self._failure is not None

    @property
    def model(self) -> Model:
        """The backend's model, loaded on first use (never twice)."""
        if self._model is None:
            if self.progress is not None:  # the identity is known by now when a cache asked for it; never resolved here
                self.progress.loading(self._identity.name if self._identity is not None else "")
            started = time.perf_counter()
            try:
                self._model = self._guarded(lambda: self.backend.load())
            finally:
                if self.progress is not None:  # loaded or failed: the heartbeat stops here
                    self.progress.idle()
            self.stats.load_seconds = time.perf_counter() - started
            if self.progress is not None:
                self.progress.loaded(self._model.info.name, self.stats.load_seconds, dict(self._model.info.details))
            self._remember_details(self._model)
        return self._model

    def _remember_details(self, model: Model, measured: Mapping[str, Any] | None = None) -> None:
        """Record the loaded copy's details under its identity, for warm runs that will not load it."""
        if self.cache is None or self._identity is None or self._identity.revision is None or not model.info.details:
            return  # nothing to key it by: a model that only loading can identify is loaded on every run anyway
        try:
            self.cache.put_model(self._keyed(self._identity), {**model.info.details, **(measured or {})})
        except CACHE_ERRORS as error:
            self._disable_cache(error)

    def remember_peak_memory(self, figures: Mapping[str, float | None]) -> None:
        """Add the peak memory of the process that loaded and ran the model to its recorded details.

        A warm run computes nothing, so its own peak measures only the replaying process; it reports these
        figures of the run that computed the answers instead. Nothing is recorded when this process did not load.
        """
        if self._model is not None:
            self._remember_details(self._model, {name: value for name, value in figures.items() if value is not None})

    @property
    def info(self) -> ModelInfo:
        """The loaded model's info (device, dtype...), else the identity; loads when neither is known."""
        if self._model is not None:
            return self._model.info
        return self.identity or self.model.info

    @property
    def known_info(self) -> ModelInfo | None:
        """What is known about the model without loading it or computing its identity.

        The loaded info; else the identity, with the details of its last load from the cache (marked
        ``from_cache``) when there are some, so a warm run reports the same architecture and device as a cold one.
        """
        if self._model is not None:
            return self._model.info
        if self._identity is None:
            return None
        return self._replayed_info(self._identity) or self._identity

    def _replayed_info(self, identity: ModelInfo) -> ModelInfo | None:
        """The identity with the details its last load recorded in the cache (read once), or None."""
        if not self._replayed_read:
            self._replayed_read = True
            details = None
            if self.cache is not None and identity.revision is not None:
                try:
                    details = self.cache.get_model(identity)
                except CACHE_ERRORS as error:
                    self._disable_cache(error)
            if details:
                self._replayed = replace(identity, details={**details, "from_cache": True})
        return self._replayed

    def _keyed(self, identity: ModelInfo) -> ModelInfo:
        """``identity`` with the variant (dtype, device kind) of the loaded copy, once there is one.

        A backend predicts its variant without loading; if loading resolved differently (a GPU that torch
        cannot use), answers must be keyed by what actually computed them.
        """
        loaded = self._model.info.variant if self._model is not None else {}
        if not loaded or all(identity.variant.get(k) == v for k, v in loaded.items()):
            return identity
        return replace(identity, variant={**identity.variant, **loaded})

    def _cache_identity(self) -> ModelInfo | None:
        """The identity results are keyed under, or None when nothing may be cached."""
        if self.cache is None:
            return None
        identity = self._keyed(self.identity or self.model.info)
        return identity if identity.revision is not None else None

    # -- requests ----------------------------------------------------------------------------------

    def generate_batches(self, requests: Sequence[GenerationRequest]) -> Iterator[list[tuple[int, GenerationResult]]]:
        return self._stream("generate", requests, lambda model: model.generate_batches)

    def loglikelihood_batches(self, requests: Sequence[LoglikelihoodRequest]) -> Iterator[list[tuple[int, LoglikelihoodResult]]]:
        return self._stream("loglikelihood", requests, lambda model: model.loglikelihood_batches)

    def cancel(self) -> None:
        """Stop every stream at its next batch (the session is ending): what was committed stays.

        A loaded model that can cancel (a served one: it shuts its in-flight connections) is told too, so a stream
        waiting on a hung server ends now rather than at the request's deadline.
        """
        self._cancelled = True
        if self.progress is not None:  # no heartbeat line for a batch that will be cut off
            self.progress.close()
        if isinstance(self._model, Cancellable):
            self._model.cancel()

    @property
    def concurrent_streams(self) -> bool:
        """Whether several streams may run at once: a served model's independent requests (never a local model's)."""
        try:
            backend = self.backend
            return isinstance(backend, ConcurrentStreams) and bool(backend.concurrent_streams)
        except ModelLoadError:
            return False

    def _stream(self, kind: str, requests: Sequence[Hashable], compute: Callable[[Model], Callable[..., Any]]) -> Iterator[Any]:
        """Cache hits first (one batch), then the model's batches, each committed before it is handed on.

        A local model is held for the whole stream, so a shard computed ahead in a thread and a test's own call
        never interleave their batches. A served model's streams run side by side (its pool bounds the requests in
        flight); only the cache, the counts and the progress lines are taken in turn.
        """
        if self.concurrent_streams:
            yield from self._stream_of(kind, requests, compute)
        else:
            with self._busy:
                yield from self._stream_of(kind, requests, compute)

    def _stream_of(
        self, kind: str, requests: Sequence[Hashable], compute: Callable[[Model], Callable[..., Any]]
    ) -> Iterator[Any]:
        positions: dict[Hashable, list[int]] = defaultdict(list)
        for index, request in enumerate(requests):
            positions[request].append(index)
        distinct = list(positions)

        def expand(pairs: Sequence[tuple[Hashable, Any]]) -> list[tuple[int, Any]]:
            return [(index, result) for request, result in pairs for index in positions[request]]

        with self._busy:
            identity = self._cache_identity() if distinct else None
            keys, found = self._lookup(kind, distinct, identity)
        if found:
            yield expand(list(found.items()))
        missing = [request for request in distinct if request not in found]
        if not missing:
            return
        with self._busy:
            model = self.model
            loaded = self._cache_identity() if identity is not None else None
            if identity is not None and loaded is not None and model_key(loaded) != model_key(identity):
                identity = loaded  # the load resolved dtype or device differently from the prediction: key by what ran
                keys, found = self._lookup(kind, missing, identity)
            else:
                found = {}
        if found:
            yield expand(list(found.items()))
            missing = [request for request in missing if request not in found]
            if not missing:
                return
        batches = compute(model)(missing)
        work = [_work(request) for request in missing] if self.progress is not None else []
        with self._busy:
            self._clock.enter()
            if self.progress is not None:
                self.progress.started("generation" if kind == "generate" else "scoring", len(missing), sum(work))
        answered: set[int] = set()
        try:
            while True:
                if self._cancelled:
                    raise Cancelled("the session is ending; the remaining requests were not computed")
                started = time.perf_counter()
                if self.progress is not None:
                    self.progress.computing()
                try:
                    batch = next(batches)
                except StopIteration:
                    break
                finally:
                    if self.progress is not None:  # the batch is over, however it ended: no heartbeat after it
                        self.progress.idle()
                pairs = [(missing[index], result) for index, result in batch]
                done = [(request, result) for request, result in pairs if not isinstance(result, Failed)]
                with self._busy:
                    if done:
                        self.stats.counted(kind, len(done), time.perf_counter() - started)
                    answered.update(index for index, _ in batch)
                    self._commit(kind, [(keys[request], result) for request, result in done if request in keys], identity)
                    if self.progress is not None:
                        self.progress.advanced(len(batch), sum(work[index] for index, _ in batch if index < len(work)))
                yield expand(pairs)
        finally:
            with self._busy:
                self.stats.model_seconds += self._clock.leave()
                if self.progress is not None:
                    self.progress.finished()
        if len(answered) < len(missing):
            raise ModelOutputError(
                f"the model returned no result for {len(missing) - len(answered)} of {len(missing)} {kind} requests"
            )

    def _lookup(
        self, kind: str, requests: Sequence[Hashable], identity: ModelInfo | None
    ) -> tuple[dict[Hashable, str], dict[Hashable, Any]]:
        """The cache key of each request, and the stored results among them (counted as hits)."""
        if identity is None or self.cache is None:
            return {}, {}
        keys = dict(zip(requests, request_keys(identity, kind, requests)))  # type: ignore[arg-type]
        try:
            stored = self.cache.get_many(list(keys.values()), kind)
        except CACHE_ERRORS as error:
            stored = self._disable_cache(error)
        found = {request: stored[key] for request, key in keys.items() if key in stored}
        self.stats.cache_hits += len(found)
        return keys, found

    def _commit(self, kind: str, rows: list[tuple[str, Any]], identity: ModelInfo | None) -> None:
        if rows and self.cache is not None and identity is not None:
            try:
                self.cache.put_many(rows, kind, identity.name)
            except CACHE_ERRORS as error:  # keep the computed results; only the cache is lost
                self._disable_cache(error)

    def _disable_cache(self, error: Exception) -> dict[str, Any]:
        """A broken cache file (or an unreachable folder) must not cost computed results: stop using it and say so once."""
        if self.cache is not None:
            if isinstance(error, OSError) and error.strerror:
                shown = f"{error.strerror}: {error.filename}" if error.filename else error.strerror
            else:
                shown = error_line(error)
            self.cache_problem = f"response cache {self.cache.path} disabled after an error: {shown}"
            self.cache.close()
        self.cache = None
        return {}

    def answer_alone(self, requests: Sequence[GenerationRequest | LoglikelihoodRequest]) -> list[Any]:
        """Each request computed by itself (a batch of one), neither read from nor written to the cache.

        The determinism canary's reference: what the model says when nothing else shares the forward pass.
        """
        model = self.model
        return [
            (model.generate([request]) if isinstance(request, GenerationRequest) else model.loglikelihood([request]))[0]
            for request in requests
        ]

    def close(self, wait: float = 2.0) -> None:
        """Release the cache's SQLite connection (at pytest_unconfigure).

        A stream still running in another thread (a shard computed ahead, cut off by Ctrl-C) may be committing on
        that connection: it is given ``wait`` seconds to stop, else the connection is left for the process's exit.
        """
        if self.cache is None or not self._busy.acquire(timeout=wait):
            return
        try:
            self.cache.close()
        finally:
            self._busy.release()
