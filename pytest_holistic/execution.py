"""Run the model for whole shards of items at once, so every forward pass is a full batch.

When the first item of a shard needs its answer, the executor plans the requests of every item of that
shard this worker has collected, and sends them to the (cached) model in one call per request kind;
the model sorts by length and batches, the cache answers what it already knows. Then the shard's
model-scored metrics (toxicity today) score its answers in one call each. Shards are contiguous runs of
a test function's items, decided from the collection alone, so their batches are the same at -n 0 and -n 8.
A model error is scoped to the requests that caused it: when a shard's call fails, its items are asked
again in halves, down to single items (batches already committed come back from the cache), and only the
items whose own requests fail get the error.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .adaptation import Completion, Plan
from .errors import HolisticError, InternalError, ModelLoadError, ModelOutputError, UserError
from .metrics import ScoredMetric, Scorer, ScorerUnavailable
from .models.base import GenerationResult, LoglikelihoodResult, Model
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


@dataclass(frozen=True)
class Answer:
    """One item's completion, plus what the run's model-scored metrics made of it.

    ``scorers`` names the scoring model behind each score (name and version); ``skipped`` holds the
    one-line reason for each model-scored metric that could not run here.
    """

    completion: Completion
    scores: Mapping[str, float] = field(default_factory=dict)
    scorers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()


class Scorers:
    """The scoring models of model-scored metrics, built once per process on first use.

    ``specs`` maps a metric name to the user's choice of scorer (``--holistic-toxicity-scorer``).
    """

    def __init__(self, specs: Mapping[str, str]) -> None:
        self._specs = dict(specs)
        self._built: dict[str, Scorer | ScorerUnavailable] = {}

    def get(self, metric: ScoredMetric) -> Scorer | ScorerUnavailable:
        """The scorer, or the reason it cannot run (kept, so it is tried once)."""
        if metric.name not in self._built:
            try:
                self._built[metric.name] = metric.make_scorer(self._specs.get(metric.name, metric.default_spec))
            except ScorerUnavailable as reason:
                self._built[metric.name] = reason
        return self._built[metric.name]


def _model_failure(error: Exception, instance: str) -> HolisticError:
    """One item's error outcome: one line that names its instance (our own bugs keep their traceback)."""
    if isinstance(error, InternalError):
        return error
    text = str(error).strip()
    line = text.splitlines()[0] if text else ""
    if isinstance(error, ModelOutputError | UserError):
        return type(error)(f"instance {instance!r}: {line}")
    return ModelOutputError(f"instance {instance!r}: model call failed: {type(error).__name__}: {line}")


def _ask(
    call: Callable[[list[Any]], list[Any]], wanted: Mapping[str, Sequence[Hashable]]
) -> tuple[dict[Hashable, Any], dict[str, Exception]]:
    """The results of every item's requests, and the error of each item whose own requests failed.

    One call for all items first. When it fails, the items are split in halves and each half asked again,
    down to single items, so one bad request costs only its item and the healthy ones are still computed in
    batches (a handful of calls rather than one per item; what was committed before a failure comes back from
    the cache). A load failure is not any one request's fault, so it still stops everything.
    """
    results: dict[Hashable, Any] = {}
    failures: dict[str, Exception] = {}
    pending = [[nodeid for nodeid, own in wanted.items() if own]]
    while pending:
        group = pending.pop()
        todo = list(dict.fromkeys(r for nodeid in group for r in wanted[nodeid] if r not in results))
        try:
            results.update(zip(todo, call(todo)) if todo else ())
        except ModelLoadError:
            raise
        except Exception as error:
            if len(group) == 1:
                failures[group[0]] = error
            else:
                middle = len(group) // 2
                pending += [group[middle:], group[:middle]]
    return results, failures


class Executor:
    """Per-worker planner: which items share a shard, and each item's answer once its shard is computed."""

    def __init__(self, model: Model, shard_size: int, scorers: Scorers) -> None:
        self.model = model
        self.shard_size = max(1, shard_size)
        self.scorers = scorers
        self._shard_of: dict[str, str] = {}
        self._members: dict[str, list[Work]] = {}
        self._results: dict[str, Answer | HolisticError] = {}

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
    def has_work(self) -> bool:
        return bool(self._shard_of)

    def answer_for(self, nodeid: str) -> Answer:
        """The answer of one item, computing its whole shard on first use; a failure raises its error."""
        if nodeid not in self._results:
            shard = self._shard_of.get(nodeid)
            if shard is None:
                raise InternalError(f"item {nodeid} was not registered with the executor; it was added after collection")
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
        names = {work.nodeid: work.instance.id for work in pending}
        generations = {nodeid: (plan.generation,) if plan.generation is not None else () for nodeid, plan in plans.items()}
        generated: dict[Hashable, GenerationResult]
        generated, failures = _ask(self.model.generate, generations)
        scored: dict[Hashable, LoglikelihoodResult]
        scored, more = _ask(self.model.loglikelihood, {n: p.loglikelihood for n, p in plans.items() if n not in failures})
        for nodeid, error in {**failures, **more}.items():
            self._results[nodeid] = _model_failure(error, names[nodeid])
        completions: dict[str, Completion] = {}
        for work in pending:
            plan = plans.get(work.nodeid)
            if plan is None or work.nodeid in self._results:
                continue
            generation = generated[plan.generation] if plan.generation is not None else None
            completions[work.nodeid] = work.run.adapter.interpret(
                work.instance, plan, generation, [scored[r] for r in plan.loglikelihood]
            )
        answered = [work for work in pending if work.nodeid in completions]
        for nodeid, answer in self._score(answered, completions).items():
            self._results[nodeid] = answer

    def _score(self, works: Sequence[Work], completions: Mapping[str, Completion]) -> dict[str, Answer | HolisticError]:
        """Each run's model-scored metrics over the shard's answers, one scorer call per metric.

        A scorer that cannot run here (no key, no classifier, library missing) is a skip reason, at build
        time or at scoring time alike; a scorer that runs and fails is the items' error, never a zero.
        """
        scores: dict[str, dict[str, float]] = {work.nodeid: {} for work in works}
        scorers: dict[str, dict[str, Mapping[str, str]]] = {work.nodeid: {} for work in works}
        skipped: dict[str, list[str]] = {work.nodeid: [] for work in works}
        failed: dict[str, HolisticError] = {}
        wanted: dict[str, tuple[ScoredMetric, list[Work]]] = {}
        for work in works:
            for metric in work.run.scored_metrics:
                wanted.setdefault(metric.name, (metric, []))[1].append(work)
        for name, (metric, members) in wanted.items():
            scorer = self.scorers.get(metric)
            try:
                if isinstance(scorer, ScorerUnavailable):
                    raise scorer
                values = scorer.score([completions[work.nodeid].text for work in members])
                if len(values) != len(members):
                    raise ModelOutputError(
                        f"{name} scorer {scorer.name!r} returned {len(values)} scores for {len(members)} texts"
                    )
            except ScorerUnavailable as reason:
                for work in members:
                    skipped[work.nodeid].append(f"{name} not scored: {reason}")
                continue
            except HolisticError as error:
                failed.update((work.nodeid, error) for work in members)
                continue
            for work, value in zip(members, values):
                scores[work.nodeid][name] = float(value)
                scorers[work.nodeid][name] = {"name": scorer.name, "version": scorer.version}
        return {
            work.nodeid: failed.get(work.nodeid)
            or Answer(completions[work.nodeid], scores[work.nodeid], scorers[work.nodeid], tuple(skipped[work.nodeid]))
            for work in works
        }
