"""Run the model for whole shards of items at once, so every forward pass is a full batch.

When the first item of a shard needs its completion, the executor plans the requests of every item
of that shard this worker has collected, removes duplicates, and sends them to the model in one call
per request kind; the backend sorts by length and batches. Shards are contiguous runs of a test
function's items, decided from the collection alone, so their batches are the same at -n 0 and -n 8.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .adaptation import Completion, Plan
from .errors import HolisticError, ModelLoadError, ModelOutputError
from .models.base import Model, ModelInfo
from .models.cache import ResponseCache, request_key
from .runspec import RunSpec
from .scenarios.instance import Instance


def shard_base(nodeid: str) -> str | None:
    """The test function a parametrized node id belongs to (``a.py::test_x[id]`` -> ``a.py::test_x``)."""
    last = nodeid.rfind("::")
    bracket = nodeid.find("[", last + 2 if last >= 0 else 0)
    return nodeid[:bracket] if bracket > 0 and nodeid.endswith("]") else None


def assign_shards(nodeids: Sequence[str], shard_size: int) -> dict[str, str]:
    """Shard name of every parametrized node id: the n-th item of a function goes to shard n // size.

    Computed from the ordered collection alone, so the xdist controller (which has only node ids) and
    every worker agree on the shards without talking to each other.
    """
    position: dict[str, int] = {}
    shards = {}
    for nodeid in nodeids:
        base = shard_base(nodeid)
        if base is None:
            continue
        ordinal = position.get(base, 0)
        position[base] = ordinal + 1
        shards[nodeid] = f"{base}#shard{ordinal // shard_size}"
    return shards


def worker_environment(worker_id: str, worker_count: int, environ: Mapping[str, str], gpus: Sequence[str] | None = None) -> dict[str, str]:
    """Environment for xdist worker ``gwN``: its own GPU and its share of the CPU threads.

    Worker *i* gets the *i*-th device of the outer ``CUDA_VISIBLE_DEVICES`` (or of the GPUs
    nvidia-smi lists), round-robin when there are more workers than GPUs. Must be applied before
    CUDA is initialised, which is why it runs in ``pytest_configure``.
    """
    index = int(worker_id.removeprefix("gw")) if worker_id.removeprefix("gw").isdigit() else 0
    updates: dict[str, str] = {}
    if "OMP_NUM_THREADS" not in environ:
        updates["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(1, worker_count)))
    outer = environ.get("CUDA_VISIBLE_DEVICES")
    devices = [d.strip() for d in outer.split(",") if d.strip()] if outer is not None else list(gpus or [])
    if devices:
        updates["CUDA_VISIBLE_DEVICES"] = devices[index % len(devices)]
    return updates


def visible_gpus() -> list[str]:
    """GPU indices nvidia-smi reports, without importing torch; none on a machine without it."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        listed = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listed.stdout.splitlines() if line.strip().isdigit()]


@dataclass(frozen=True)
class Work:
    """One collected item: its node id, the run it belongs to, and its instance."""

    nodeid: str
    run: RunSpec
    instance: Instance


@dataclass
class ExecutorStats:
    """What this worker computed (cache misses) and reused (cache hits); reported per worker."""

    generation_requests: int = 0
    loglikelihood_requests: int = 0
    cache_hits: int = 0
    batches: int = 0
    model_seconds: float = 0.0
    load_seconds: float = 0.0


class Executor:
    """Per-worker owner of the model (loaded lazily, once) and of the results of the current shards."""

    def __init__(
        self,
        load: Callable[[], Model],
        shard_size: int,
        cache: ResponseCache | None = None,
        identify: Callable[[], ModelInfo | None] = lambda: None,
        toxicity_scorer: Callable[[], Any] = lambda: None,
    ) -> None:
        self._toxicity_scorer = toxicity_scorer
        self._scorer: Any = None
        self._scorer_problem: str | None = None
        self.extra_scores: dict[str, dict[str, float]] = {}
        self.cache_problem: str | None = None
        self.skipped: dict[str, str] = {}
        self._load = load
        self._identify = identify
        self._identity: ModelInfo | None = None
        self._identified = False
        self.cache = cache
        self._model: Model | None = None
        self._load_error: ModelLoadError | None = None
        self.shard_size = max(1, shard_size)
        self._shard_of: dict[str, str] = {}
        self._members: dict[str, list[Work]] = {}
        self._results: dict[str, Completion | HolisticError] = {}
        self.stats = ExecutorStats()

    def register(self, collected: Sequence[str], works: Sequence[Work]) -> None:
        """Group this worker's items into the shards of the whole (ordered) collection."""
        shards = assign_shards(collected, self.shard_size)
        self._shard_of.clear()
        self._members.clear()
        for work in works:
            shard = shards.get(work.nodeid, work.nodeid)
            self._shard_of[work.nodeid] = shard
            self._members.setdefault(shard, []).append(work)

    @property
    def model(self) -> Model:
        if self._load_error is not None:
            raise self._load_error
        if self._model is None:
            started = time.perf_counter()
            try:
                self._model = self._load()
            except ModelLoadError as error:
                self._load_error = error
                raise
            self.stats.load_seconds = time.perf_counter() - started
        return self._model

    @property
    def identity(self) -> ModelInfo | None:
        """Cache identity (name, revision): from the loaded model, else computed without loading it."""
        if self._model is not None:
            return self._identity or self._model.info
        if not self._identified:
            self._identified = True
            self._identity = self._identify()
        return self._identity

    @property
    def model_info(self) -> ModelInfo | None:
        """For reports: the loaded model's full info, or the identity when the cache answered everything."""
        return self._model.info if self._model is not None else self._identity

    def completion_for(self, nodeid: str) -> Completion:
        """The completion of one item, computing its whole shard on first use."""
        if nodeid not in self._results:
            shard = self._shard_of.get(nodeid)
            if shard is None:
                raise HolisticError(f"item {nodeid} was not registered with the executor; it was added after collection")
            self._compute(self._members[shard])
        result = self._results.pop(nodeid)
        if isinstance(result, HolisticError):
            raise result
        return result

    def _compute(self, works: Sequence[Work]) -> None:
        pending = [work for work in works if work.nodeid not in self._results]
        plans: dict[str, Plan] = {}
        for work in pending:
            try:
                plans[work.nodeid] = work.run.adapter.plan(work.instance)
            except HolisticError as error:
                self._results[work.nodeid] = error
        if not plans:
            return
        generations = list(dict.fromkeys(p.generation for p in plans.values() if p.generation is not None))
        scorings = list(dict.fromkeys(r for p in plans.values() for r in p.loglikelihood))
        try:
            generated = self._run("generate", generations)
            scored = self._run("loglikelihood", scorings)
        except ModelLoadError:
            raise
        except Exception as error:  # any model failure becomes every planned item's error outcome
            failure = error if isinstance(error, HolisticError) else ModelOutputError(
                f"model call failed: {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
            )
            for nodeid in plans:
                self._results[nodeid] = failure
            return
        for work in pending:
            plan = plans.get(work.nodeid)
            if plan is None:
                continue
            generation = generated.get(plan.generation) if plan.generation is not None else None
            scores = [scored[request] for request in plan.loglikelihood]
            self._results[work.nodeid] = work.run.adapter.interpret(work.instance, plan, generation, scores)
        self._score_toxicity([work for work in pending if work.run.wants_toxicity and isinstance(self._results.get(work.nodeid), Completion)])

    def _disable_cache(self, error: Exception) -> None:
        """A broken cache file must not cost computed results: stop using it and say so once."""
        if self.cache is not None:
            self.cache_problem = f"response cache {self.cache.path} disabled after an error: {error}"
        self.cache = None
        return None

    def _score_toxicity(self, works: Sequence[Work]) -> None:
        """Score the shard's texts in one call; a scorer that cannot run is a skip reason, not a zero."""
        if not works:
            return
        if self._scorer is None and self._scorer_problem is None:
            try:
                self._scorer = self._toxicity_scorer()
            except HolisticError as error:
                self._scorer_problem = str(error)
        if self._scorer is None:
            for work in works:
                self.skipped[work.run.key] = f"toxicity not scored: {self._scorer_problem}"
            return
        texts = [self._results[work.nodeid].text for work in works]  # type: ignore[union-attr]
        try:
            values = self._scorer.score(texts)
        except HolisticError as error:  # a failed scoring call is the items' error, never a score of 0
            for work in works:
                self._results[work.nodeid] = error
            return
        for work, value in zip(works, values):
            self.extra_scores[work.nodeid] = {"toxicity": float(value)}

    @property
    def scorer_info(self) -> dict[str, str] | None:
        return {"name": self._scorer.name, "version": self._scorer.version} if self._scorer is not None else None

    def _run(self, kind: str, requests: list[Any]) -> dict[Any, Any]:
        """Results for ``requests``: cache hits first, the rest from the model batch by batch.

        Each finished batch goes into the cache at once, so an interrupted run loses at most the batch
        in flight. Models with an unknown revision are never cached (a stale answer would be silent).
        """
        if not requests:
            return {}
        results: dict[Any, Any] = {}
        identity = self.identity if self.cache is not None else None
        if identity is None and self.cache is not None:
            identity = self.model.info
        cache = self.cache if identity is not None and identity.revision is not None else None
        keys: dict[Any, str] = {}
        if cache is not None and identity is not None:
            keys = {request: request_key(identity, kind, request) for request in requests}
            try:
                stored = cache.get_many(list(keys.values()), kind)
            except sqlite3.Error as error:
                stored, cache = {}, self._disable_cache(error)
            results = {request: stored[key] for request, key in keys.items() if key in stored}
            self.stats.cache_hits += len(results)
        missing = [request for request in requests if request not in results]
        if not missing:
            return results
        model = self.model
        started = time.perf_counter()
        batched = getattr(model, f"{kind}_batches", None)
        stream = batched(missing) if batched is not None else [list(enumerate(getattr(model, kind)(missing)))]
        for batch in stream:
            self.stats.batches += 1
            for index, result in batch:
                results[missing[index]] = result
            if cache is not None:
                try:
                    cache.put_many([(keys[missing[index]], result) for index, result in batch], kind, identity.name)  # type: ignore[union-attr]
                except sqlite3.Error as error:  # keep the computed results; only the cache is lost
                    cache = self._disable_cache(error)
        self.stats.model_seconds += time.perf_counter() - started
        if kind == "generate":
            self.stats.generation_requests += len(missing)
        else:
            self.stats.loglikelihood_requests += len(missing)
        absent = [request for request in missing if request not in results]
        if absent:
            raise ModelOutputError(f"the model returned no result for {len(absent)} of {len(missing)} {kind} requests")
        return results
