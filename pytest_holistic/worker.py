"""The half of a run that every process does (the only process at -n 0, each xdist worker otherwise).

It turns marked test functions into items, pins the process to its device, holds the cached model and
the executor, hands each item its answer, and turns each finished item into one ``ItemRecord`` that
goes out through the process's outbox (``channels``, chosen at configure). The first record of each run carries
the run's description and the model's identity; the process's summary goes out once at the end. Nothing here
writes a report, and nothing here asks which role this process plays.

Per item, a warm run does only what the item needs: its answer comes from its shard (one cache query per
shard), its record is built once as plain data, and the outbox is told of new counts only when they changed.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from . import _devices
from .answers import AnswerProbe, counterexample_text
from .channels import Outbox
from .errors import HolisticError, InternalError, ModelLoadError, UserError, error_line
from .execution import Answer, Executor, Scorers, Work
from .gates import check_metric_name
from .methods import KINDS
from .metrics import known_names
from .metrics.base import EFFICIENCY, Score
from .models.base import ManagesEngine
from .models.cache import ResponseCache
from .models.cached import CachedModel
from .models.engine import EngineSession
from .models.registry import Backend
from .printable import printable
from .progress import ModelProgress
from .records import CollectedRun, ItemRecord, Outcome, RunHeader, WorkerSummary, number_text
from .runspec import RunSpec, build_run, item_id
from .scrubbing import scrub_text
from .settings import Settings
from .stops import RunOrder, StopTable

ITEM_WORK = pytest.StashKey[Work]()  # on a holistic item: its run and instance
ITEM_ANSWER = pytest.StashKey[Answer]()  # its answer, once its shard is computed
ITEM_SCORES = pytest.StashKey[dict[str, float]]()  # what the test recorded
ITEM_PROBE = pytest.StashKey[AnswerProbe]()  # the answer() fixture's probe, for property tests
PROPERTY_PREFIX = "holistic."  # the names this plugin gives an item's user_properties


def worker_environment(
    worker_id: str, worker_count: int, environ: Mapping[str, str], gpus: Sequence[str] | None = None
) -> dict[str, str]:
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
        sharers = sum(1 for worker in range(max(1, worker_count)) if worker % len(devices) == index % len(devices))
        updates[_devices.SHARERS] = str(sharers)
    return updates


def peak_memory() -> dict[str, float | None]:
    """Peak resident memory of this process and, when CUDA was used, peak GPU memory (MiB)."""
    rss = _peak_rss_mib()
    gpu = None
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        gpu = torch.cuda.max_memory_allocated() / 2**20
    return {"peak_rss_mib": round(rss, 1), "peak_gpu_mib": None if gpu is None else round(gpu, 1)}


def _peak_rss_mib() -> float:
    """This process's own peak RSS: Linux's ``VmHWM``, else ``ru_maxrss``.

    ``ru_maxrss`` survives ``exec`` on Linux, so a pytest started from a bigger process (an IDE, an xdist worker
    running pytester) would report its parent's peak; ``VmHWM`` belongs to this process's memory alone.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def gate_metric_names(scored: Iterable[str] = ()) -> list[str]:
    """Every metric name a gate can check without the test recording it: the registries, the model-scored metrics
    plugins registered (``scored``) and the efficiency figures."""
    return [*known_names(), *scored, *EFFICIENCY]


def _one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _error_line(report: pytest.TestReport) -> str:
    """What went wrong, in one line: the exception's own message (``RuntimeError: ...``, ``assert 1 == 2``) where pytest has
    one, else the last line of the report (a ``pytest.fail(..., pytrace=False)`` message is all of it)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = error_line(str(crash.message), "") if crash is not None else ""
    return message or _one_line(report.longreprtext)


def _short(value: object) -> str:
    if isinstance(value, int) and value.bit_length() > 192:  # repr() of a huge int is long, and refused past 4300 digits
        return f"an int of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        shown = repr(value)
    except Exception:  # a user object whose __repr__ is broken must not replace the message with its traceback
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= 60 else shown[:57] + "..."


def score_properties(scenario: str, record: ItemRecord) -> list[tuple[str, str]]:
    """The item's identity and scores as ``user_properties``, so pytest's ``--junitxml`` (and report-log) carry them."""
    properties = [(f"{PROPERTY_PREFIX}scenario", scenario), (f"{PROPERTY_PREFIX}instance", record.instance_id)]
    if record.perturbation is not None:
        properties.append((f"{PROPERTY_PREFIX}perturbation", record.perturbation))
    scores = ((name, number_text(record.scores[name])) for name in sorted(record.scores))
    properties += [(f"{PROPERTY_PREFIX}{name}", text) for name, text in scores if text is not None]  # undefined: left out
    return properties


class Recorder:
    """``record(score, ...)`` or ``record(name=value)``: per-instance scores that the run aggregates."""

    def __init__(self, scores: dict[str, float]) -> None:
        self._scores = scores

    def __call__(self, *scores: Score | Mapping[str, float], **named: float) -> None:
        for score in scores:
            if isinstance(score, Score):
                self._put(score.metric, score)
            elif isinstance(score, Mapping):
                for name, value in score.items():
                    self._put(str(name), value)
            else:
                pytest.fail(
                    f"record() takes Score objects (from pytest_holistic.metrics) or name=value, got {_short(score)}",
                    pytrace=False,
                )
        for name, value in named.items():
            self._put(name, value)

    def _put(self, name: str, value: Any) -> None:
        """A misuse fails this item with one line (the test's own mistake, not a traceback into the plugin).

        inf and nan are refused too: inf would make the mean and its interval meaningless (and a gate pass on
        them), and nan would be dropped from the aggregate without a word.
        """
        if not isinstance(value, numbers.Real):  # bool, int, float and numpy's scalars are
            pytest.fail(f"record(): metric {name!r} must be a number, got {_short(value)}", pytrace=False)
        try:
            number = float(value)
        except OverflowError:  # an int (or Fraction) beyond the float range
            number = math.inf
        if not math.isfinite(number):
            pytest.fail(
                f"record(): metric {name!r} must be a finite number, got {_short(value)}; "
                "record nothing for an instance where the score is undefined",
                pytrace=False,
            )
        self._scores[name] = number


class WorkerSide:
    """Per-process state of one pytest run: runs, the cached model, the executor, and records going out."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        outbox: Outbox,
        overlap: str = "off",
        progress: ModelProgress | None = None,
        stops: StopTable | None = None,
        engine: EngineSession | None = None,
    ) -> None:
        """``outbox``, ``overlap`` (computing shards ahead) and ``progress`` (lines about what the model does, where
        this process owns the terminal) come with the process's role, decided at configure; ``stops`` is the session's
        early-stop table (None: no run of this session can stop early); ``engine``: the session's engine, which a
        worker's controller started (the controller starts its own with ``start_engine``)."""
        self.config = config
        self.settings = settings
        self.outbox = outbox
        self.name = outbox.name
        self.runs: dict[str, RunSpec] = {}
        self.selected: dict[str, int] = {}
        self.order = RunOrder(stops)  # each stop-early run's seeded order (arranged at registration), and its stop
        self.registered = False  # collection finished and the items were handed to the executor
        cache = ResponseCache(settings.cache_dir) if settings.cache_dir is not None else None
        self.model = CachedModel(self._backend, cache)
        self.executor = Executor(
            self.model,
            settings.shard_size,
            Scorers(settings.scorer_specs),
            settings.determinism_check,
            overlap,
            batch_done=self._checkpoint,
            past_stop=self.order.past_stop,
        )
        self._announced: set[str] = set()
        self.engine = engine  # the session's engine (--model vllm:MODEL), when the model runs in one
        self._counts_key: tuple[Any, ...] | None = None  # what the counts were at the last item's checkpoint
        self.model.progress = progress

    def _backend(self) -> Backend:
        """The backend of ``--model``: a plugin's answer first, then the registry (asked once, on first use); one
        that runs in the session's engine is handed it."""
        provided = self.config.hook.pytest_holistic_make_model(config=self.config, name=self.settings.model)
        backend = self.settings.backends.resolve(self.settings.model, self.settings.backend_options, provided)
        if self.engine is not None and isinstance(backend, ManagesEngine):
            backend.join_engine(self.engine)
        return backend

    # -- collection ---------------------------------------------------------------------------------

    def parametrize(self, metafunc: pytest.Metafunc) -> None:
        """One item per instance of the marked function's scenario, with the instance id as the param id."""
        marker = metafunc.definition.get_closest_marker("holistic")
        if marker is None:
            return
        settings = self.settings
        try:
            run = build_run(
                metafunc.definition.nodeid,
                marker.args,
                marker.kwargs,
                settings.source,
                settings.max_instances,
                Path(metafunc.definition.path).parent,
                settings.perturb,
                settings.data_dir,
                settings.word_lists,
                settings.scored,
                settings.stop_early,
                helm_shots=settings.helm_shots,
            )
        except UserError as error:
            raise pytest.Collector.CollectError(printable(f"pytest-holistic: {error}")) from None
        try:
            for gate in run.gates:
                check_metric_name(gate, gate_metric_names(settings.scored), f"marker of {run.key}")
                if gate.scenario not in (None, run.scenario.name):
                    raise UserError(
                        f"gate {gate.expression!r} in the marker of {run.key} names scenario {gate.scenario!r}, but the "
                        f"marker's scenario is {run.scenario.name!r}; drop the 'scenario:' prefix (a marker gate is about its own "
                        "scenario) or give the gate with --holistic-gate"
                    )
        except UserError as error:
            raise pytest.Collector.CollectError(printable(f"pytest-holistic: {error}")) from None
        self.runs[run.key] = run
        if KINDS[run.spec.method].loglikelihood:
            self._collecting()  # asking the server may hang: a Ctrl-C now must still find this run in the report
            missing = self.model.missing_capability("loglikelihood")
            if missing is not None:
                del self.runs[run.key]
                raise pytest.Collector.CollectError(
                    printable(
                        f"pytest-holistic: {run.key}: adapter {run.spec.method!r} scores log-likelihoods, which model "
                        f"{scrub_text(self.settings.model)} cannot give: {missing}; use a generation adapter or another server"
                    )
                )
        if "instance" not in metafunc.fixturenames:
            metafunc.fixturenames.append("instance")
        metafunc.parametrize("instance", run.items, ids=[item_id(instance) for instance in run.items])

    def register(self, items: Sequence[pytest.Item]) -> None:
        """Tell the executor which collected items are holistic, so it can compute them a shard at a time."""
        works = []
        self.selected = dict.fromkeys(self.runs, 0)
        self.registered = True
        for item in items:
            callspec = getattr(item, "callspec", None)
            if callspec is None or "instance" not in callspec.params:
                continue
            # Keyed by the marked function's node id, which only ``parametrize`` registers: no marker lookup per item.
            run = self.runs.get(item.nodeid[: -len(callspec.id) - 2])
            if run is not None:
                item.stash[ITEM_WORK] = work = Work(item.nodeid, run, callspec.params["instance"])
                works.append(work)
                self.selected[run.key] += 1
        self.executor.register([item.nodeid for item in items], works)
        self.order.arrange(works)
        self.outbox.collected(self.collected(), final=True)
        self._checkpoint()

    def _collecting(self) -> None:
        """Leave the runs collected so far where the report finds them, before a step that may hang (a server's probe).

        An xdist worker's ledger gets them at once; a single process sends them when it finishes (``finish``).
        """
        self.outbox.collected(self.collected(), final=False)
        self._checkpoint()

    def collected(self) -> list[CollectedRun]:
        """Every run collection built, with how many of its items survived deselection (-k, -m, --lf)."""
        return [CollectedRun(run.info, len(run.items), self.selected.get(key, 0)) for key, run in sorted(self.runs.items())]

    # -- running ------------------------------------------------------------------------------------

    def answer(self, item: pytest.Item) -> Answer:
        """This item's answer, computing its shard on first use; a failure is the item's error outcome."""
        if ITEM_WORK not in item.stash:
            pytest.fail("the `completion` fixture only exists in tests marked @pytest.mark.holistic(scenario)", pytrace=False)
        if ITEM_ANSWER not in item.stash:
            settled = self.order.past_stop(item.stash[ITEM_WORK])
            if settled is not None:  # its run's gates were decided on the instances before it: not computed
                pytest.skip(printable(settled))
            failure: str | None = None
            try:
                item.stash[ITEM_ANSWER] = self.executor.answer_for(item.nodeid)
            except InternalError:
                raise  # our bug: the traceback is what a report needs
            except ModelLoadError as error:
                failure = f"pytest-holistic: {error}"
                item.session.shouldstop = "pytest-holistic: the model could not be loaded (the error above says why)"
            except HolisticError as error:
                failure = f"pytest-holistic: {error}"
            if failure is not None:  # failed outside the except block, so the message is not chained to the error
                pytest.fail(printable(failure), pytrace=False)
        return item.stash[ITEM_ANSWER]

    def probe(self, item: pytest.Item) -> AnswerProbe:
        """This item's ``answer(text)``: any input, in its scenario's prompt layout, through the cached model."""
        work = item.stash.get(ITEM_WORK, None)
        if work is None:
            pytest.fail("the `answer` fixture only exists in tests marked @pytest.mark.holistic(scenario)", pytrace=False)
        if ITEM_PROBE not in item.stash:
            item.stash[ITEM_PROBE] = AnswerProbe(work, self.model, self._checkpoint)
        return item.stash[ITEM_PROBE]

    def attach_record(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """Send this item's record (and, first time per run, the run's header) through the outbox."""
        work = item.stash.get(ITEM_WORK, None)
        if work is None or not (report.when == "call" or (report.when == "setup" and report.failed)):
            return
        record = self.record(item, work, report)
        properties = score_properties(work.run.info.scenario, record)
        report.user_properties.extend(properties)
        # pytest's --junitxml reads the teardown report's properties, which are copied from the item's: put them there too
        # (replacing those of an earlier attempt of a rerun item, so a rerun does not list its scores twice).
        item.user_properties[:] = [entry for entry in item.user_properties if not str(entry[0]).startswith(PROPERTY_PREFIX)]
        item.user_properties.extend(properties)
        if record.counterexample is not None:
            report.sections.append(("pytest-holistic counterexample", counterexample_text(record.counterexample)))
        header = None
        if work.run.key not in self._announced:
            self._announced.add(work.run.key)
            key = work.run.key
            header = RunHeader(work.run.info, self.model.known_info, self.order.ids(key), self.order.groups(key))
        self.outbox.record(report, record, header)
        self._checkpoint_if_changed()  # the test body may have asked the model itself (``holistic_model``)

    def record(self, item: pytest.Item, work: Work, report: pytest.TestReport) -> ItemRecord:
        answer = item.stash.get(ITEM_ANSWER, None)
        completion = answer.completion if answer is not None else None
        scores: dict[str, float] = {}
        if answer is not None:
            prediction, golds = work.run.adapter.reference_inputs(work.instance, answer.completion)
            for info in work.run.instance_metrics:
                scores[info.name] = float(info.function(prediction, golds))
            scores.update(answer.scores)
        recorded: dict[str, float] = item.stash.get(ITEM_SCORES, {})
        scores.update(recorded)
        outcome: Outcome = "error" if report.when == "setup" else report.outcome
        probe = item.stash.get(ITEM_PROBE, None)
        counterexample = None
        if probe is not None and report.failed:
            try:
                counterexample = probe.counterexample(completion, str(report.longrepr))
            except HolisticError:  # the model failed on the original: the failure itself says why
                counterexample = None
        return ItemRecord(
            nodeid=item.nodeid,
            run_key=work.run.key,
            instance=work.instance,
            perturbation=work.instance.perturbation,
            prompt=completion.prompt if completion is not None else None,
            completion=completion,
            scores=scores,
            outcome=outcome,
            worker=self.name,
            scorers=answer.scorers if answer is not None else {},
            skipped=answer.skipped if answer is not None else (),
            error=_error_line(report) if report.failed else None,
            counterexample=counterexample,
        )

    def announce(self) -> None:
        """A first checkpoint as soon as the worker side exists: an xdist worker's ledger then shows that this session
        has holistic work, which a controller still dormant reads once every collection is in (``activation``)."""
        self._checkpoint()

    def _checkpoint(self) -> None:
        """Tell the outbox the counts changed (after each committed batch, each probe, each collection step)."""
        self.outbox.checkpoint(self._progress)

    def _progress(self) -> WorkerSummary:
        return self.summary(final=False)

    def _checkpoint_if_changed(self) -> None:
        """After an item: a checkpoint only if something the summary reports changed since the last item's.

        Counts change when a shard is computed or looked up, so this is about one checkpoint per shard rather than a
        copy of the model's info (and a read of peak memory) per item. Peak memory alone does not make one.
        """
        model, stats = self.model, self.model.stats
        key = (
            stats.generation_requests,
            stats.loglikelihood_requests,
            stats.cache_hits,
            stats.batches,
            model.known_info,
            model.loaded,
            model.cache_problem,
            model.load_failure,
        )
        if key != self._counts_key:
            self._counts_key = key
            self._checkpoint()

    # -- the end ------------------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        """No holistic item and no model use: the xdist controller, or a run without holistic tests."""
        return not (self.executor.has_work or self.model.touched)

    def summary(self, final: bool = True, memory: dict[str, float | None] | None = None) -> WorkerSummary:
        """What this process computed. ``memory``: peak memory already measured, so that the summary and the cache
        record the same figures."""
        stats = self.model.stats
        info = self.model.known_info
        details = info.details if info is not None and self.model.loaded else {}  # a warm worker ran on nothing
        return WorkerSummary(
            worker=self.name,
            model=info,
            generation_requests=stats.generation_requests,
            loglikelihood_requests=stats.loglikelihood_requests,
            cache_hits=stats.cache_hits,
            batches=stats.batches,
            model_seconds=stats.model_seconds,
            load_seconds=stats.load_seconds,
            batch_seconds=stats.batch_seconds,
            device=details.get("device"),
            cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
            batch_size=details.get("batch_size"),
            cache_problem=self.model.cache_problem,
            model_failure=self.model.load_failure,
            final=final,
            **(memory if memory is not None else peak_memory()),
        )

    def finish(self) -> None:
        """Send this process's runs, if collection was cut short (Ctrl-C) before ``register``, and its summary."""
        if self.model.progress is not None:  # before pytest's summary: no heartbeat line can follow it
            self.model.progress.close()
        memory = peak_memory()
        if self.model.loaded:  # for warm runs, which replay the answers without loading the model
            self.model.remember_peak_memory(memory)
        if not self.registered:
            self.outbox.collected(self.collected(), final=True)
        self.outbox.finished(self.summary(memory=memory), self.idle)

    def cancel(self) -> None:
        """The session is ending early: requests in flight are cancelled, none is started; what was committed stays."""
        self.model.cancel()

    # -- an engine the session runs (--model vllm:MODEL) -------------------------------------------------

    def start_engine(self) -> EngineSession | None:
        """pytest's main process: the engine's supervisor, when the model's kind runs an engine (the engine itself
        starts when a process first needs it). Nothing when resolving the backend fails: its items say why."""
        kind = self.settings.backends.kind_for(self.settings.model)
        if kind is None or not kind.engine:
            return None
        try:  # a backend of its own: the model's is resolved when first used, so an xdist controller stays idle
            backend = self._backend()
        except HolisticError:
            return None
        if not isinstance(backend, ManagesEngine):
            return None
        self.engine = EngineSession.start_supervisor(backend.engine_command())
        return self.engine

    def close(self) -> None:
        self.executor.close()
        self.model.close()
        if self.engine is not None:
            self.engine.stop()  # only the process that started it stops it (the others' session is not owned)


def prepare_worker(config: pytest.Config, settings: Settings) -> None:
    """Pin this xdist worker to its GPU and CPU share before torch or CUDA start."""
    workerinput = config.workerinput  # type: ignore[attr-defined]
    gpus = [] if settings.model_options.device == "cpu" or "CUDA_VISIBLE_DEVICES" in os.environ else _devices.visible_gpus()
    os.environ.update(
        worker_environment(str(workerinput.get("workerid", "gw0")), int(workerinput.get("workercount", 1)), os.environ, gpus)
    )
