"""Every pytest hook and fixture of pytest-holistic: thin shells that delegate to the modules.

Importing this module must stay cheap: torch, transformers and datasets load only when a model or a
hub dataset is actually needed.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import tempfile
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

import pytest

from . import metrics as metric_registry
from .adaptation import Completion
from .errors import HolisticError, ModelLoadError, UserError
from .execution import Executor, Work, visible_gpus, worker_environment
from .gates import GateResult, judge, parse_gate
from .metrics.base import Score
from .models import cache as response_cache
from .models import identify, load_model
from .report.json_report import build_report, model_slug, write_json
from .report.records import Collector
from .report.terminal import summary_lines
from .runspec import RunSpec, build_run
from .settings import Settings, add_options, check_writable

ITEM_RUN = pytest.StashKey[RunSpec]()
ITEM_COMPLETION = pytest.StashKey[Completion]()
ITEM_SCORES = pytest.StashKey[dict[str, float]]()
MARKER_HELP = "holistic(scenario, adapter=..., metrics=..., gates=...): evaluate a model on every instance of the scenario"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspec

    pluginmanager.add_hookspecs(hookspec)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    try:
        settings = Settings.from_config(config)
        if not _is_worker(config) and not config.option.collectonly:
            check_writable(settings.report_dir)
    except UserError as error:
        raise pytest.UsageError(f"pytest-holistic: {error}") from None
    if _is_worker(config):
        _prepare_worker(config, settings)
    elif settings.cache_dir is not None and getattr(config.option, "cacheclear", False):
        response_cache.clear(settings.cache_dir)
    session = HolisticSession(config, settings)
    config.stash[SESSION] = session
    config.pluginmanager.register(session, "holistic-session")
    if config.pluginmanager.hasplugin("xdist"):
        from ._xdist import XdistHooks

        config.pluginmanager.register(XdistHooks(session), "holistic-xdist")


def _prepare_worker(config: pytest.Config, settings: Settings) -> None:
    """Pin this xdist worker to its GPU and CPU share before torch or CUDA start."""
    workerinput = config.workerinput  # type: ignore[attr-defined]
    gpus = [] if settings.model_options.device == "cpu" or "CUDA_VISIBLE_DEVICES" in os.environ else visible_gpus()
    os.environ.update(worker_environment(str(workerinput.get("workerid", "gw0")), int(workerinput.get("workercount", 1)), os.environ, gpus))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("holistic")
    if marker is None:
        return
    session = metafunc.config.stash[SESSION]
    settings = session.settings
    try:
        run = build_run(metafunc.definition.nodeid, marker.args, marker.kwargs, settings.source, settings.max_instances)
    except UserError as error:
        raise pytest.Collector.CollectError(f"pytest-holistic: {error}") from None
    session.runs[run.key] = run
    if "instance" not in metafunc.fixturenames:
        metafunc.fixturenames.append("instance")
    metafunc.parametrize("instance", run.instances, ids=[instance.id for instance in run.instances])


def _run_key(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "instance" not in callspec.params:
        return None
    return item.nodeid[: -len(callspec.id) - 2]


def pytest_collection_finish(session: pytest.Session) -> None:
    holistic = session.config.stash[SESSION]
    works = []
    for item in session.items:
        key = _run_key(item)
        run = holistic.runs.get(key) if key else None
        if run is not None and item.get_closest_marker("holistic") is not None:
            item.stash[ITEM_RUN] = run
            works.append(Work(item.nodeid, run, item.callspec.params["instance"]))  # type: ignore[attr-defined]
    holistic.executor.register([item.nodeid for item in session.items], works)


@pytest.fixture
def instance(request: pytest.FixtureRequest) -> Any:
    """The eval instance of this item (parametrized by ``@pytest.mark.holistic``)."""
    pytest.fail("the `instance` fixture only exists in tests marked @pytest.mark.holistic(scenario)", pytrace=False)


@pytest.fixture
def completion(request: pytest.FixtureRequest) -> Completion:
    """The model's answer to this item's instance, computed with the rest of its shard in batches."""
    item = request.node
    if ITEM_RUN not in item.stash:
        pytest.fail("the `completion` fixture only exists in tests marked @pytest.mark.holistic(scenario)", pytrace=False)
    if ITEM_COMPLETION not in item.stash:
        executor = request.config.stash[SESSION].executor
        try:
            item.stash[ITEM_COMPLETION] = executor.completion_for(item.nodeid)
        except ModelLoadError as error:
            request.session.shouldstop = f"pytest-holistic: {error}"
            pytest.fail(f"pytest-holistic: {error}", pytrace=False)
        except HolisticError as error:
            pytest.fail(f"pytest-holistic: {error}", pytrace=False)
    return item.stash[ITEM_COMPLETION]


@pytest.fixture(autouse=True)
def _holistic_completion(request: pytest.FixtureRequest) -> None:
    """Compute the completion in setup for every holistic item, so a model failure is an error outcome."""
    if ITEM_RUN in request.node.stash:
        request.getfixturevalue("completion")


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
                raise TypeError(f"record() takes Score objects (from pytest_holistic.metrics) or name=value, got {score!r}")
        for name, value in named.items():
            self._put(name, value)

    def _put(self, name: str, value: Any) -> None:
        if isinstance(value, bool) or isinstance(value, int | float):
            self._scores[name] = float(value)
        else:
            raise TypeError(f"record(): metric {name!r} must be a number, got {value!r}")


@pytest.fixture
def record(request: pytest.FixtureRequest) -> Recorder:
    """Record per-instance metric scores; they appear in the summary table, gates and report.json."""
    return Recorder(request.node.stash.setdefault(ITEM_SCORES, {}))


@pytest.fixture(scope="session")
def holistic_model(request: pytest.FixtureRequest) -> Any:
    """The loaded model of this worker (for tests that call it directly)."""
    try:
        return request.config.stash[SESSION].executor.model
    except ModelLoadError as error:
        pytest.fail(f"pytest-holistic: {error}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    run = item.stash.get(ITEM_RUN, None)
    if run is not None and (report.when == "call" or (report.when == "setup" and report.failed)):
        report.holistic = item.config.stash[SESSION].item_record(item, run, report)  # type: ignore[attr-defined]
    return report


class GateFailure:
    """A failed gate's longrepr: its message in the failures section, the short summary and JUnit."""

    def __init__(self, message: str, path: str) -> None:
        self.message = message
        self.reprcrash = _Crash(path, 0, message)

    def toterminal(self, out: Any) -> None:
        out.line(self.message)

    def __str__(self) -> str:
        return self.message


@dataclasses.dataclass
class _Crash:
    path: str
    lineno: int
    message: str


class HolisticSession:
    """Per-process state of one pytest run: settings, runs, the executor and, on the controller, results."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.runs: dict[str, RunSpec] = {}
        cache = response_cache.ResponseCache(settings.cache_dir) if settings.cache_dir is not None else None
        self.executor = Executor(self._load_model, settings.shard_size, cache, self._identify_model, self._make_toxicity_scorer)
        self.collector = Collector()
        self.gate_results: list[GateResult] = []
        self.workers: dict[str, dict[str, Any]] = {}
        self.report_path: Path | None = None
        self.report_problem: str | None = None
        self._described: dict[str, dict[str, Any]] = {}

    def _custom_model(self) -> Any:
        """A model from a ``pytest_holistic_make_model`` implementation, asked once per process."""
        if not hasattr(self, "_custom"):
            self._custom = self.config.hook.pytest_holistic_make_model(config=self.config, name=self.settings.model)
        return self._custom

    def _make_toxicity_scorer(self) -> Any:
        """The toxicity scorer named by --holistic-toxicity-scorer (ScorerUnavailable says why not)."""
        from .metrics import toxicity_scorers

        spec = self.settings.toxicity_scorer
        if spec == "perspective":
            return toxicity_scorers.PerspectiveScorer()
        if spec.startswith("hf:"):
            return toxicity_scorers.HFToxicityScorer(spec[3:])
        return toxicity_scorers.ProfanityScorer()

    def _identify_model(self) -> Any:
        custom = self._custom_model()
        if custom is not None:
            return custom.info
        return identify(self.settings.model, self.settings.model_options)

    def _load_model(self) -> Any:
        custom = self._custom_model()
        if custom is not None:
            return custom
        return load_model(self.settings.model, self.settings.model_options, self.executor.identity)

    def worker_summary(self) -> dict[str, Any]:
        """What this process computed, for the report's per-worker table."""
        info = self.executor.model_info
        details = info.details if info is not None else {}
        return {
            **dataclasses.asdict(self.executor.stats),
            "device": details.get("device"),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "batch_size": details.get("batch_size"),
            "cache_problem": self.executor.cache_problem,
            **peak_memory(),
        }

    def item_record(self, item: pytest.Item, run: RunSpec, report: pytest.TestReport) -> dict[str, Any]:
        completion = item.stash.get(ITEM_COMPLETION, None)
        scores: dict[str, float] = {}
        if completion is not None:
            for name in run.instance_metrics:
                scores[name] = float(metric_registry.lookup(name).function(completion.text, completion.gold))
            scores.update(self.executor.extra_scores.pop(item.nodeid, {}))
        scores.update(item.stash.get(ITEM_SCORES, {}))
        instance = item.callspec.params["instance"]  # type: ignore[attr-defined]
        model_info = self.executor.model_info
        answer = completion.to_record() if completion is not None else None
        prompt = answer.pop("prompt") if answer else None
        if run.key not in self._described:
            self._described[run.key] = run.describe()
        if run.wants_toxicity and "toxicity_scorer" not in self._described[run.key] and self.executor.scorer_info:
            self._described[run.key] = {**self._described[run.key], "toxicity_scorer": self.executor.scorer_info}
        return {
            "nodeid": item.nodeid,
            "instance_id": instance.id,
            "run": self._described[run.key],
            "model": dataclasses.asdict(model_info) if model_info is not None else None,
            "instance": instance.to_record(),
            "prompt": prompt,
            "completion": answer,
            "scores": scores,
            "outcome": "error" if report.when == "setup" else report.outcome,
            "skipped": self.executor.skipped.get(run.key),
            "toxicity_scorer": self.executor.scorer_info if "toxicity" in scores else None,
            "error": _one_line(report.longreprtext) if report.failed else None,
            "execution": {
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                "seconds": completion.seconds if completion else None,
                "tokens_in": completion.tokens_in if completion else None,
                "tokens_out": completion.tokens_out if completion else None,
            },
        }

    # -- controller side -------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "holistic", None)
        if record and not _is_worker(self.config):
            self.collector.add(record)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not _is_worker(self.config) and self.collector and not (session.shouldfail or session.shouldstop):
            self._judge_gates(session)
        return result

    def _judge_gates(self, session: pytest.Session) -> None:
        runs = self.collector.ordered()
        judged: list[tuple[str, GateResult]] = []
        for run in runs:
            observations = run.observations()
            gates = [parse_gate(text, "marker") for text in run.info.get("gates", [])]
            gates += [gate for gate in self.settings.gates if gate.scenario in (None, run.scenario)]
            for gate in gates:
                judged.append((f"{run.key}::gate[{gate.expression}]", judge(gate, run.key, run.scenario, observations)))
        ran = sorted({run.scenario for run in runs})
        for gate in self.settings.gates:
            if gate.scenario is not None and gate.scenario not in ran:
                message = f"gate {gate.expression}: scenario {gate.scenario!r} did not run (ran: {', '.join(ran)}); fix the scenario name"
                result = GateResult(gate, "", gate.scenario, False, math.nan, 0, (math.nan, math.nan), message)
                judged.append((f"holistic::gate[{gate.expression}]", result))
        session.testscollected += len(judged)
        for nodeid, result in judged:
            self.gate_results.append(result)
            self._emit_gate(nodeid, result)

    def _emit_gate(self, nodeid: str, result: GateResult) -> None:
        path, _, name = nodeid.partition("::")
        location = (path, None, name)
        hook = self.config.hook
        hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        report = pytest.TestReport(
            nodeid,
            location,
            {"holistic_gate": 1},
            "passed" if result.passed else "failed",
            None if result.passed else GateFailure(result.message, path),
            "call",
            user_properties=[("gate", result.gate.expression), ("observed", result.observed), ("n", result.n)],
        )
        hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if _is_worker(self.config):
            return
        if "main" not in self.workers and self.executor.model_info is not None:
            self.workers["main"] = self.worker_summary()
        if not self.collector:
            return
        payload = build_report(self.collector, self.gate_results, self.settings.model, sys.argv)
        payload["workers"] = dict(sorted(self.workers.items()))
        target = self.settings.report_dir / model_slug(self.settings.model) / "report.json"
        try:
            self.report_path = write_json(target, payload)
        except OSError as error:
            fallback = Path(tempfile.mkdtemp(prefix="pytest-holistic-")) / "report.json"
            self.report_path = write_json(fallback, payload)
            self.report_problem = f"could not write {target} ({error.strerror or error}); wrote {fallback} instead"
        self.config.hook.pytest_holistic_report_written(config=self.config, path=self.report_path, report=payload)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if _is_worker(self.config) or not self.collector:
            return
        model = (self.collector.model or {}).get("name", self.settings.model)
        terminalreporter.write_sep("=", f"holistic summary: {model}")
        for name, worker in sorted(self.workers.items()):
            load = worker.get("load_seconds") or 0.0
            terminalreporter.write_line(
                f"{name}: device {worker.get('device') or '-'}, model load {load:.1f} s, "
                f"peak RSS {worker.get('peak_rss_mib')} MiB"
                + (f", peak GPU {worker['peak_gpu_mib']} MiB" if worker.get("peak_gpu_mib") else "")
                + f", {worker.get('generation_requests', 0) + worker.get('loglikelihood_requests', 0)} requests computed, "
                f"{worker.get('cache_hits', 0)} from cache"
            )
        for line in summary_lines(self.collector, self.gate_results):
            terminalreporter.write_line(line)
        problems = [self.report_problem] + [worker.get("cache_problem") for worker in self.workers.values()]
        for problem in dict.fromkeys(p for p in problems if p):
            terminalreporter.write_line(f"pytest-holistic: {problem}", yellow=True)
        if self.report_path:
            terminalreporter.write_line(f"report: {self.report_path}")


def peak_memory() -> dict[str, float | None]:
    """Peak resident memory of this process and, when CUDA was used, peak GPU memory (MiB)."""
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    gpu = None
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        gpu = torch.cuda.max_memory_allocated() / 2**20
    return {"peak_rss_mib": round(rss, 1), "peak_gpu_mib": None if gpu is None else round(gpu, 1)}


def _one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


SESSION = pytest.StashKey[HolisticSession]()
