"""Run the model for whole shards of items at once, so every forward pass is a full batch.

When the first item of a shard needs its answer, the executor plans the requests of every item of that
shard this worker has collected, and sends them to the (cached) model in one call per request kind;
the model sorts by length and batches, the cache answers what it already knows. Then the shard's
model-scored metrics (toxicity today) score its answers in one call each. Shards are contiguous runs of
a test function's items that keep an instance's variants together (see :mod:`.shards`), decided from the
collection alone, so their batches are the same at -n 0 and -n 8.
A model error is scoped to the requests that caused it. A request the model reports as failed by itself (a
served model's, after its own retries) is the error of the items that asked it, and is not sent again. When a
call fails as a whole (a local model's batch), the items still unanswered are asked again in halves, down to
single items, and only the items whose own requests fail get the error.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import HolisticError, InternalError, ModelLoadError, ModelOutputError, UserError, error_line
from .metrics import Column, ContextScorer, ScoredMetric, Scorer, ScorerError, ScorerUnavailable
from .models.base import (
    AnswersAlone,
    Cancellable,
    Cancelled,
    ConcurrentStreams,
    Failed,
    GenerationResult,
    LoadsLazily,
    LoglikelihoodResult,
    Model,
)
from .plans import Completion, Plan
from .runspec import RunSpec
from .scenarios.instance import Instance
from .shards import assign_shards


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

    ``specs`` maps a metric name to the value of the option it declares (the user's choice of scorer); a metric
    without an option gets ``""``.
    """

    def __init__(self, specs: Mapping[str, str]) -> None:
        self._specs = dict(specs)
        self._built: dict[str, Scorer | ContextScorer | HolisticError] = {}

    def get(self, metric: ScoredMetric) -> Scorer | ContextScorer | HolisticError:
        """The scorer, or why it cannot run (kept, so it is tried once).

        ``ScorerUnavailable`` is a skip reason; anything else a scoring library raises while it starts (a corrupt
        file in its cache, say) becomes a ``ScorerError`` naming the metric, so its items fail with one line.
        """
        if metric.name not in self._built:
            try:
                self._built[metric.name] = metric.make_scorer(self._specs.get(metric.name, ""))
            except HolisticError as reason:
                self._built[metric.name] = reason
            except Exception as error:  # noqa: BLE001  (a third-party library's own failure, reported in one line)
                self._built[metric.name] = ScorerError(f"{metric.name} scorer could not start: {error_line(error, typed=True)}")
        return self._built[metric.name]


def scorer_inputs(metric: ScoredMetric, works: Sequence[Work], completions: Mapping[str, Completion]) -> list[list[Any]]:
    """One list per input column of a model-scored metric: the answer texts, then (summarisation) the correct
    references or the instance inputs, so ``toxicity`` gets ``score(texts)`` and ``summac`` ``score(texts, articles)``."""
    values: dict[Column, Callable[[Work], Any]] = {
        Column.TEXT: lambda work: completions[work.nodeid].text,
        Column.REFERENCES: lambda work: completions[work.nodeid].gold,
        Column.SOURCE_TEXT: lambda work: work.instance.input,
    }
    columns = [column for column in metric.info.inputs if isinstance(column, Column)]
    if any(column not in values for column in columns):
        raise InternalError(f"model-scored metric {metric.name!r} asks for a column the worker cannot give: {columns}")
    return [[values[column](work) for work in works] for column in columns]


def checked_alone(nodeid: str, fraction: float) -> bool:
    """Whether the determinism canary re-scores this item: a seeded draw from its node id, the same in every worker."""
    draw = int.from_bytes(hashlib.sha256(nodeid.encode()).digest()[:8], "big") / 2**64
    return draw < fraction


def _model_failure(error: Exception, instance: str) -> HolisticError:
    """One item's error outcome: one line that names its instance (our own bugs keep their traceback)."""
    if isinstance(error, InternalError):
        return error
    line = error_line(error, "")
    if isinstance(error, ModelOutputError | UserError):
        message = f"instance {instance!r}: {line}"
        try:
            return type(error)(message)
        except TypeError:  # a subclass that takes more than a message (a server's refusal): its family will do
            return (UserError if isinstance(error, UserError) else ModelOutputError)(message)
    return ModelOutputError(f"instance {instance!r}: model call failed: {type(error).__name__}: {line}")


def _ask(
    stream: Callable[[list[Any]], Iterator[list[tuple[int, Any]]]],
    wanted: Mapping[str, Sequence[Hashable]],
    batch_done: Callable[[], None] = lambda: None,
) -> tuple[dict[Hashable, Any], dict[str, Exception]]:
    """The results of every item's requests, and the error of each item whose own requests failed.

    One call for all items first; every result it hands on is kept, whatever happens later in the stream. A
    request reported as :class:`Failed` is the error of exactly the items that asked it: it failed by itself (a
    served request has its own retries), so it is neither sent again nor a reason to split the batch. When the
    call fails as a whole, the items still unanswered are split in halves and each half asked again, down to
    single items, so a local model's bad batch costs only the items whose requests fail and the healthy ones are
    still computed in batches. A load failure or the session ending is no request's fault: it stops everything.
    ``batch_done`` is told after each batch arrives (the cached model has committed and counted it by then).
    """
    results: dict[Hashable, Any] = {}
    failed: dict[Hashable, Exception] = {}
    failures: dict[str, Exception] = {}
    pending = [[nodeid for nodeid, own in wanted.items() if own]]
    while pending:
        group = pending.pop()
        todo = list(dict.fromkeys(r for nodeid in group for r in wanted[nodeid] if r not in results and r not in failed))
        try:
            for batch in stream(todo) if todo else ():
                for index, outcome in batch:
                    if isinstance(outcome, Failed):
                        failed[todo[index]] = outcome.error
                    else:
                        results[todo[index]] = outcome
                batch_done()
        except (ModelLoadError, Cancelled):
            raise
        except Exception as error:
            unanswered = [n for n in group if any(r not in results and r not in failed for r in wanted[n])]
            if len(group) == 1:
                failures[group[0]] = error
            elif unanswered:
                middle = len(unanswered) // 2
                pending += [half for half in (unanswered[middle:], unanswered[:middle]) if half]
    for nodeid, own in wanted.items():
        own_error = next((failed[r] for r in own if r in failed), None)
        if own_error is not None and nodeid not in failures:
            failures[nodeid] = own_error
    return results, failures


class Pipeline:
    """A served model's shards computed side by side, in collection order, ``width`` at a time.

    A served model's requests are independent, and its pool bounds the requests in flight over all streams. So
    the shard pytest waits for is computed in a thread of its own while the next ones are computed beside it; as
    each finishes, the next in order starts, to the end of the collection. A request that stalls (a hung server,
    a long Retry-After) then holds its own shard only: the shards after it are computed and waiting when pytest
    reaches them. ``compute`` fills the executor's results; errors are left to the main thread, which computes
    what is missing itself and meets them there.
    """

    def __init__(self, compute: Callable[[Sequence[Work]], None], width: int = 4) -> None:
        self._compute = compute
        self.width = width
        self._order: list[Sequence[Work]] = []
        self._next = 0  # the first shard of ``_order`` not started yet
        self._started: set[int] = set()
        self._threads: dict[int, threading.Thread] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def running(self) -> bool:
        return bool(self._threads)

    def plan(self, shards: Sequence[Sequence[Work]]) -> None:
        with self._lock:
            self._order = list(shards)
            self._next = 0
            self._started.clear()

    def wait_for(self, works: Sequence[Work]) -> None:
        """Start this shard (first, if it was not yet), fill the pipeline behind it, and wait for it."""
        with self._lock:
            index = next((k for k, shard in enumerate(self._order) if shard is works), None)
            if index is None:
                return
            self._start(index)
            self._fill()
            thread = self._threads.get(index)
        if thread is not None:
            thread.join()

    def close(self, wait: float) -> None:
        """Start nothing more; give the shards in flight ``wait`` seconds (their threads are daemons)."""
        with self._lock:
            self._closed = True
            threads = list(self._threads.values())
        deadline = time.monotonic() + wait
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _start(self, index: int) -> None:
        if index in self._started or self._closed:
            return
        self._started.add(index)
        thread = threading.Thread(target=self._run, args=(index,), name=f"holistic-shard-{index}", daemon=True)
        self._threads[index] = thread
        thread.start()

    def _fill(self) -> None:
        while len(self._threads) < self.width and self._next < len(self._order) and not self._closed:
            self._start(self._next)
            self._next += 1

    def _run(self, index: int) -> None:
        try:
            self._compute(self._order[index])
        except BaseException:  # noqa: BLE001 - the main thread computes what is missing and reports the error
            pass
        finally:
            with self._lock:
                self._threads.pop(index, None)
                self._fill()


class Executor:
    """Per-worker planner: which items share a shard, and each item's answer once its shard is computed."""

    def __init__(
        self,
        model: Model,
        shard_size: int,
        scorers: Scorers,
        determinism_check: float = 0.0,
        overlap: str = "off",
        batch_done: Callable[[], None] = lambda: None,
        past_stop: Callable[[Work], str | None] = lambda work: None,
    ) -> None:
        """``batch_done``: told after each batch of answers arrives, so its owner can note the counts (a worker's ledger);
        ``past_stop``: why an item is not to be computed (its run stopped early before it), asked before every shard,
        here, ahead or side by side, so no shard is started past a stop."""
        self.model = model
        self.shard_size = max(1, shard_size)
        self.scorers = scorers
        self.determinism_check = determinism_check
        self.overlap = overlap  # on, off, or auto (on once the model turns out to run on a GPU)
        self.batch_done = batch_done
        self.past_stop = past_stop
        self.computed_ahead = 0  # shards computed in the background while pytest ran the items of another
        self._shard_of: dict[str, str] = {}
        self._members: dict[str, list[Work]] = {}
        self._following: dict[str, str | None] = {}  # each shard's successor in collection order
        self._results: dict[str, Answer | HolisticError] = {}
        self._ahead: threading.Thread | None = None
        self._looked_ahead: set[str] = set()  # shards whose successor was considered for computing ahead
        self._pipeline = Pipeline(self._compute)
        self._scoring = threading.Lock()  # a model-scored metric's scorer is used by one shard at a time

    def register(self, collected: Sequence[str], works: Sequence[Work]) -> None:
        """Group this worker's items into the shards of the whole (ordered) collection."""
        shards = assign_shards(collected, self.shard_size)
        self._shard_of.clear()
        self._members.clear()
        self._looked_ahead.clear()
        for work in works:
            shard = shards.get(work.nodeid, work.nodeid)
            self._shard_of[work.nodeid] = shard
            self._members.setdefault(shard, []).append(work)
        order = list(self._members)
        self._following = dict(zip(order, [*order[1:], None]))
        self._pipeline.plan([self._members[shard] for shard in order])

    @property
    def has_work(self) -> bool:
        return bool(self._shard_of)

    def answer_for(self, nodeid: str) -> Answer:
        """The answer of one item, computing its whole shard on first use; a failure raises its error."""
        if nodeid not in self._results:
            shard = self._shard_of.get(nodeid)
            if shard is None:
                raise InternalError(f"item {nodeid} was not registered with the executor; it was added after collection")
            if self._pipelined():
                self._pipeline.wait_for(self._members[shard])
            else:
                self._settle()
            if nodeid not in self._results:
                self._compute(self._members[shard], needed=nodeid)
        shard = self._shard_of[nodeid]
        if shard not in self._looked_ahead and not self._pipelined():  # once per shard, computed here or ahead
            self._looked_ahead.add(shard)
            self._compute_ahead(shard)
        result = self._results.pop(nodeid)
        if isinstance(result, HolisticError):
            raise result
        return result

    # -- overlap: the next shard on the device while pytest runs this one ---------------------------------

    def _pipelined(self) -> bool:
        """A served model in a single process: its shards are computed side by side (see :class:`Pipeline`)."""
        return self.overlap != "off" and isinstance(self.model, ConcurrentStreams) and bool(self.model.concurrent_streams)

    def _overlapping(self) -> bool:
        if self.overlap == "auto":
            details = self.model.info.details if isinstance(self.model, LoadsLazily) and self.model.loaded else {}
            return str(details.get("device", "")).startswith("cuda")
        return self.overlap == "on"

    def _compute_ahead(self, shard: str) -> None:
        """Start computing the shard after ``shard`` in a background thread, so the model never waits for pytest.

        Only one thread uses the model at a time: the main thread waits for this one (``_settle``) before it
        computes anything itself. Errors are left to the main thread, which meets them again when it asks.
        """
        if self._ahead is not None:
            if self._ahead.is_alive():
                return
            self._settle()
        if not self._overlapping():
            return
        following = self._following.get(shard)
        while following is not None and all(work.nodeid in self._results for work in self._members[following]):
            following = self._following.get(following)
        if following is None:
            return
        works = self._members[following]

        def compute() -> None:
            try:
                self._compute(works)
                self.computed_ahead += 1
            except BaseException:  # noqa: BLE001 - the main thread computes what is missing and reports the error
                pass

        self._ahead = threading.Thread(target=compute, name="holistic-compute-ahead", daemon=True)
        self._ahead.start()

    def _settle(self, wait: float | None = None) -> None:
        """Wait for the background shard, if one is being computed (at most ``wait`` seconds, when given)."""
        if self._ahead is not None:
            self._ahead.join(wait)
            if not self._ahead.is_alive():
                self._ahead = None

    def close(self, wait: float = 2.0) -> None:
        """Stop computing ahead: the batch in flight is finished and committed, the rest of that shard is dropped.

        The background thread is waited for ``wait`` seconds at most: a request hung on a server that cannot be
        cancelled must not hold the end of the session; the thread is a daemon and ends with the process.
        """
        if self._ahead is not None or self._pipeline.running:
            if isinstance(self.model, Cancellable):
                self.model.cancel()
            self._settle(wait)
            self._pipeline.close(wait)

    def _compute(self, works: Sequence[Work], needed: str | None = None) -> None:
        """Answer the shard's items not answered yet, leaving out those past a stop (but never ``needed``, the item
        pytest asks for now, which was checked before it asked)."""
        pending = [
            work for work in works if work.nodeid not in self._results and (work.nodeid == needed or self.past_stop(work) is None)
        ]
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
        generated, failures = _ask(self.model.generate_batches, generations, self.batch_done)
        scored: dict[Hashable, LoglikelihoodResult]
        wanted = {n: p.loglikelihood for n, p in plans.items() if n not in failures}
        scored, more = _ask(self.model.loglikelihood_batches, wanted, self.batch_done)
        for nodeid, failure in {**failures, **more}.items():
            self._results[nodeid] = _model_failure(failure, names[nodeid])
        completions: dict[str, Completion] = {}
        for work in pending:
            plan = plans.get(work.nodeid)
            if plan is None or work.nodeid in self._results:
                continue
            generation = generated[plan.generation] if plan.generation is not None else None
            completions[work.nodeid] = work.run.adapter.interpret(
                work.instance, plan, generation, [scored[r] for r in plan.loglikelihood]
            )
        if self.determinism_check:
            for work in pending:
                if work.nodeid in completions and checked_alone(work.nodeid, self.determinism_check):
                    drift = self._drift(work, plans[work.nodeid], completions[work.nodeid])
                    if drift is not None:
                        self._results[work.nodeid] = drift
                        del completions[work.nodeid]
        answered = [work for work in pending if work.nodeid in completions]
        with self._scoring:
            scored_answers = self._score(answered, completions)
        for nodeid, answer in scored_answers.items():
            self._results[nodeid] = answer

    def _drift(self, work: Work, plan: Plan, batched: Completion) -> HolisticError | None:
        """The determinism canary: this item's requests computed one at a time, outside any batch and the cache.

        A different answer (chosen option or generated text) is the item's failure; log-probabilities that move
        without changing the answer are reported with it but do not fail on their own.
        """
        if not isinstance(self.model, AnswersAlone):
            return None
        alone_model = self.model.answer_alone
        try:
            alone = work.run.adapter.answer_one(work.instance, alone_model, alone_model, plan)
        except HolisticError as error:
            return _model_failure(error, work.instance.id)
        gaps = [abs(a - b) for a, b in zip(batched.choice_logprobs, alone.choice_logprobs)]
        if batched.logprob is not None and alone.logprob is not None:
            gaps.append(abs(batched.logprob - alone.logprob))
        if (batched.text, batched.predicted_index) == (alone.text, alone.predicted_index):
            return None
        gap = f" (log-probabilities differ by up to {max(gaps):.3g})" if gaps else ""
        return ModelOutputError(
            f"instance {work.instance.id!r}: determinism check: the answer is {batched.text!r} in its batch but "
            f"{alone.text!r} when scored alone{gap}; scores depend on batch composition here, "
            "run with --holistic-deterministic (float32) to make them stable"
        )

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
                if isinstance(scorer, HolisticError):
                    raise scorer
                try:
                    values = scorer.score(*scorer_inputs(metric, members, completions))
                except HolisticError:
                    raise
                except Exception as error:  # noqa: BLE001  (the scoring library's own failure, in one line)
                    raise ScorerError(f"{name} scorer {scorer.name!r} failed: {error_line(error, typed=True)}") from None
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
