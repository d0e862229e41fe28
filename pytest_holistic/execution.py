"""Run the model for whole shards of items at once, so every forward pass is a full batch.

When the first item of a shard needs its completion, the executor plans the requests of every item
of that shard this worker has collected, removes duplicates, and sends them to the model in one call
per request kind; the backend sorts by length and batches. Shards are contiguous runs of a test
function's items, decided from the collection alone, so their batches are the same at -n 0 and -n 8.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .adaptation import Completion, Plan
from .errors import HolisticError, ModelLoadError, ModelOutputError
from .models.base import GenerationRequest, LoglikelihoodRequest, Model
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


@dataclass(frozen=True)
class Work:
    """One collected item: its node id, the run it belongs to, and its instance."""

    nodeid: str
    run: RunSpec
    instance: Instance


@dataclass
class ExecutorStats:
    """What this worker computed; reported per worker."""

    generation_requests: int = 0
    loglikelihood_requests: int = 0
    model_calls: int = 0
    model_seconds: float = 0.0
    load_seconds: float = 0.0


class Executor:
    """Per-worker owner of the model (loaded lazily, once) and of the results of the current shards."""

    def __init__(self, load: Callable[[], Model], shard_size: int) -> None:
        self._load = load
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
    def model_if_loaded(self) -> Model | None:
        return self._model

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
        model = self.model
        generations = list(dict.fromkeys(p.generation for p in plans.values() if p.generation is not None))
        scorings = list(dict.fromkeys(r for p in plans.values() for r in p.loglikelihood))
        try:
            generated = dict(zip(generations, self._call(model.generate, generations)))
            scored = dict(zip(scorings, self._call(model.loglikelihood, scorings)))
        except Exception as error:  # any model failure becomes every planned item's error outcome
            failure = error if isinstance(error, HolisticError) else ModelOutputError(
                f"model call failed: {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
            )
            for nodeid in plans:
                self._results[nodeid] = failure
            return
        self.stats.generation_requests += len(generations)
        self.stats.loglikelihood_requests += len(scorings)
        for work in pending:
            plan = plans.get(work.nodeid)
            if plan is None:
                continue
            generation = generated.get(plan.generation) if plan.generation is not None else None
            scores = [scored[request] for request in plan.loglikelihood]
            self._results[work.nodeid] = work.run.adapter.interpret(work.instance, plan, generation, scores)

    def _call(
        self, method: Callable[[list], list], requests: list[GenerationRequest] | list[LoglikelihoodRequest]
    ) -> list:
        if not requests:
            return []
        started = time.perf_counter()
        results = method(requests)
        self.stats.model_seconds += time.perf_counter() - started
        self.stats.model_calls += 1
        if len(results) != len(requests):
            raise HolisticError(f"the model returned {len(results)} results for {len(requests)} requests")
        return results
