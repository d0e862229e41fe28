"""The controller's half of a run: registered only on the controller (or in a plain run), chosen at configure.

It receives what the processes send (the hooks ``channels`` lists: the same at -n 0 and -n 8), keeps each
worker's summary, judges the gates once the items are done (each gate a test item of its own), and hands the
results to its writers and the terminal. Data only flows in: nothing here calls back into a worker, and
nothing outside writes into it.

It also keeps the ledger that makes a partial run honest: which items were collected, which finished,
which crashed with their worker, and why the run ended early. An interrupted or crashed run still gets
its report, marked incomplete, with every item that did not finish and every gate left unchecked.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .. import metrics as registry
from ..errors import InternalError, error_line
from ..gates import Gate, GateResult
from ..methods import kind_named
from ..metrics.base import ScoredMetric
from ..models.base import ModelInfo
from ..printable import printable
from ..records import CollectedRun, ItemRecord, RunHeader, WorkerSummary, number_text
from ..scrubbing import scrub_text
from ..stops import StopTable
from .aggregate import Progress, Results, RunResults
from .early_stop import EarlyStop
from .json_report import build_report
from .labels import Labels, run_labels
from .ledger import Ledgers
from .outputs import Writer, write_outputs
from .payload import Comparison, NotCompared
from .regression import ComparisonPlan, RegressionVerdict
from .sigterm import SigtermAsInterrupt
from .terminal import comparison_lines, partial_lines, summary_lines
from .verdicts import Verdict, decide, not_evaluated


class GateFailure:
    """A failed gate's longrepr: its message in the failures section, the short summary and JUnit."""

    def __init__(self, message: str, path: str) -> None:
        self.message = printable(message)
        self.reprcrash = _Crash(path, 0, message)

    def toterminal(self, out: Any) -> None:
        out.line(self.message)

    def __str__(self) -> str:
        return self.message


@dataclass
class _Crash:
    path: str
    lineno: int
    message: str


@dataclass(frozen=True)
class Unfinished:
    """A collected item without a final report: crashed with its worker, or never run before the run ended."""

    nodeid: str
    run: str | None
    reason: str

    def to_data(self) -> dict[str, str | None]:
        return {"nodeid": self.nodeid, "run": self.run, "reason": self.reason}


class Reporter:
    """Records in, results out: aggregation keyed by (run, perturbation, metric), gates, writers, summary."""

    def __init__(
        self,
        config: pytest.Config,
        model_spec: str,
        gates: Sequence[Gate],
        writers: Sequence[Writer],
        *,
        strict_gates: bool = False,
        run_id: str = "",
        source: str = "local",
        comparison: ComparisonPlan | None = None,
        ledgers: Ledgers | None = None,
        scored: Mapping[str, ScoredMetric] | None = None,
        stops: StopTable | None = None,
        stop_level: float = 0.95,
    ) -> None:
        """``ledgers``: the folder xdist workers keep their ledgers in (decided at configure, shared with the xdist glue);
        ``stops``: the session's early-stop table, which every process reads (None: no run can stop early);
        ``stop_level``: the level of the confidence sequences that stop a run."""
        self.config = config
        self.model_spec = model_spec
        self.gates = tuple(gates)
        self.writers = list(writers)
        self.strict_gates = strict_gates
        self.run_id = run_id
        self.source = source  # the data source asked for (--holistic-source), to say where a scenario fell back
        self.plan = comparison  # --holistic-baseline: the stored run to compare with, and the regression checks
        self.comparison: Comparison | NotCompared | None = None
        self.runs: dict[str, RunResults] = {}
        self.find_metric = registry.finder(scored or {})  # the session's scored metrics keep their declared direction
        self.headers: list[RunHeader] = []
        self.workers: dict[str, WorkerSummary] = {}
        self.collected: dict[str, CollectedRun] = {}
        self.expected: list[str] | None = None
        self.finished: set[str] = set()
        self.crashed: dict[str, str] = {}
        self.lost_workers: dict[str, str] = {}  # xdist workers that died, and how
        self.skipped: set[str] = set()  # items pytest skipped (a skip marker, pytest.skip): never judged as results
        self.interrupted: str | None = None
        self.cut_in_collection = False  # stopped before the items were known: a run's selected count means nothing
        self.gate_results: list[GateResult] = []
        self.gates_decided = False
        self.written: list[Path] = []
        self.ledgers: dict[str, WorkerSummary] = {}
        self._ledgers = ledgers if ledgers is not None else Ledgers()
        self._sigterm = SigtermAsInterrupt(self._ledgers.interrupt_workers)
        self.started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        self.early_stop = EarlyStop(stops, stop_level, self.gates, comparison)  # each stop-early run's sequences and stop

    # -- life cycle ---------------------------------------------------------------------------------

    def _read_ledgers(self) -> None:
        """What each worker last wrote: the runs it collected and its counts, also if it never sent its summary."""
        for worker, runs in self._ledgers.summaries():
            self.ledgers[worker.worker] = worker
            self._collected(runs)

    def handle_sigterm(self) -> None:
        """SIGTERM ends the run like Ctrl-C (the workers are interrupted too), until the report is written."""
        self._sigterm.install()

    def close(self) -> None:
        self._sigterm.restore()
        self.early_stop.close()
        self._ledgers.remove()

    # -- collecting ---------------------------------------------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The items this run means to run (at -n 0; under xdist the controller hears it from the first worker)."""
        self._expect([item.nodeid for item in session.items])

    def pytest_holistic_items_expected(self, config: pytest.Config, nodeids: list[str]) -> None:
        self._expect(nodeids)

    def _expect(self, nodeids: Sequence[str]) -> None:
        if self.expected is None:
            self.expected = list(nodeids)

    def pytest_holistic_runs_collected(self, config: pytest.Config, runs: list[dict[str, Any]]) -> None:
        self._collected([CollectedRun.from_data(data) for data in runs])

    def _collected(self, runs: Sequence[CollectedRun]) -> None:
        for entry in runs:
            self.collected.setdefault(entry.run.key, entry)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.finished.add(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and report.when not in ("setup", "call", "teardown"):  # xdist's report of a crashed worker's item
            lines = [line.strip() for line in str(report.longrepr).splitlines() if line.strip()]
            self.crashed[report.nodeid] = next(
                (line for line in lines if "crashed" in line), lines[-1] if lines else "worker crashed"
            )
        if report.skipped and report.when in ("setup", "call"):
            self.skipped.add(report.nodeid)

    def pytest_holistic_item_recorded(self, config: pytest.Config, record: ItemRecord, header: RunHeader | None) -> None:
        if header is not None:
            self.headers.append(header)
            self.runs.setdefault(header.run.key, RunResults(header.run, find=self.find_metric))
            self.early_stop.describe(header)
        run = self.runs.get(record.run_key)
        if run is None:
            raise InternalError(f"record of {record.nodeid} arrived before its run {record.run_key!r} was described")
        run.add(record)
        self.early_stop.add(record)

    def pytest_holistic_worker_finished(self, config: pytest.Config, summary: dict[str, Any]) -> None:
        worker = WorkerSummary.from_data(summary)
        self.workers[worker.worker] = worker

    def pytest_holistic_worker_lost(self, config: pytest.Config, worker: str, reason: str) -> None:
        self.lost_workers[worker] = reason

    # -- gates --------------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            result = yield
        except BaseException as stop:  # Ctrl-C, -x / --maxfail, a model that could not load, xdist giving up
            self.loop_failed(stop)
            raise
        self.loop_finished(session)
        return result

    def loop_failed(self, stop: BaseException) -> None:
        """The test loop ended by an exception: what the report says of it."""
        self.interrupted = _reason(stop)
        if self.expected is None:  # under xdist the workers collect inside this loop
            self.interrupted += " during collection, before the items were known"
            self.cut_in_collection = True

    def loop_finished(self, session: pytest.Session) -> None:
        """After the test loop: the ledgers read, then the numbers, the gates and the comparison.

        Called by the reporter's own ``pytest_runtestloop``, or, for a reporter made during the loop (an xdist
        controller that learns of holistic work from its workers' collections), by ``activation``'s glue.
        """
        stopped = session.shouldfail or session.shouldstop
        self._read_ledgers()
        if stopped:
            self.interrupted = str(stopped)
        elif (left := self._never_ran()) and self.relevant:  # e.g. xdist gave up after too many crashed workers
            self.interrupted = f"the run ended with {left} item(s) never run (xdist stopped scheduling)"
        elif self.relevant:
            from .aggregate import aggregate_runs  # the bootstrap intervals take seconds: name each scenario as it starts

            terminal = self.config.pluginmanager.get_plugin("terminalreporter") if self.config.get_verbosity() > -2 else None
            progress: Progress | None = None
            if terminal is not None:

                def show(name: str, k: int, total: int) -> None:
                    terminal.ensure_newline()
                    if self.config.get_terminal_writer().width_of_current_line:  # -q leaves the cursor after "[100%]"
                        terminal.write("\n")
                    terminal.write_line(printable(f"computing intervals: {name} ({k}/{total})"))

                progress = show
            self.early_stop.cut(self.runs, self.skipped)
            aggregate_runs(self.ordered_runs(), progress, self.labels())
            self._judge_gates(session)
            self._compare(session)

    def _judge_gates(self, session: pytest.Session) -> None:
        if self.expected == []:  # -k or -m matched nothing: pytest's "no tests ran" (exit 5) must stand
            reason = "no item was selected (-k or -m matched nothing)"
            self.gate_results = not_evaluated(self.gates, self.collected, self.ordered_runs(), reason)
            self.gates_decided = True
            return
        skipped = self.early_stop.skips_counted(self.skipped)
        sequences = self.early_stop.sequences
        verdicts = decide(self.gates, self.ordered_runs(), self.collected, self.strict_gates, skipped, sequences)
        self.gates_decided = True
        session.testscollected += len(verdicts)
        for verdict in verdicts:
            self.gate_results.append(verdict.result)
            self._emit_gate(verdict)

    def _compare(self, session: pytest.Session) -> None:
        """Pair this run's records with the baseline's (here, on the controller, which has every record) and emit each check."""
        if self.plan is None:
            return
        self.comparison, verdicts = self.plan.run(self.ordered_runs(), self.early_stop.paired())
        session.testscollected += len(verdicts)
        for verdict in verdicts:
            self._emit_regression(verdict)

    def _emit_regression(self, verdict: RegressionVerdict) -> None:
        """A regression check as a test item of its own, reported like a gate."""
        row = verdict.row
        properties: list[tuple[str, Any]] = [("regression", f"{verdict.metric}:{verdict.margin:g}")]
        properties += [(key, row[key]) for key in ("difference", "n", "verdict", "mde") if row and key in row]
        self._emit_item(verdict.nodeid, "holistic_regression", verdict.status, verdict.message, properties)

    def _emit_gate(self, verdict: Verdict) -> None:
        result = verdict.result
        observed = number_text(result.observed)  # a gate not judged observed nothing: left out, never "nan"
        properties = [("gate", result.gate.expression), *([("observed", observed)] if observed is not None else []), ("n", result.n)]
        if result.sequence is not None:  # decided by a confidence sequence: on how many of the run's items, and how
            sequence = result.sequence
            properties += [("sequence_of", sequence["of"]), ("sequence_ci", f"{sequence['ci'][0]:g} {sequence['ci'][1]:g}")]
            properties += [(f"sequence_{key}", sequence[key]) for key in ("stopped", "decision", "level", "method")]
        status = result.status.replace("not_evaluated", "skipped")
        self._emit_item(verdict.nodeid, "holistic_gate", status, result.message, properties)

    def _emit_item(self, nodeid: str, keyword: str, status: str, message: str, properties: list[tuple[str, Any]]) -> None:
        """A check decided on the controller (gate, regression) as a test item: logged, reported and finished as pytest's own."""
        path, _, name = nodeid.partition("::")
        location = (path, None, name)
        hook = self.config.hook
        hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        longrepr: Any = None
        if status == "skipped":
            longrepr = (path, 0, f"Skipped: {message}")
        elif status == "failed":
            longrepr = GateFailure(message, path)
        report = pytest.TestReport(nodeid, location, {keyword: 1}, status, longrepr, "call", user_properties=properties)  # type: ignore[arg-type]
        hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)

    # -- results ------------------------------------------------------------------------------------

    def ordered_runs(self) -> list[RunResults]:
        return [self.runs[key] for key in sorted(self.runs)]

    def labels(self) -> Labels:
        """Every collected run's label, as ``Results.labels`` gives it once the results are built."""
        infos = {key: entry.run for key, entry in self.collected.items()} | {key: run.info for key, run in self.runs.items()}
        return run_labels((key, info.scenario) for key, info in infos.items())

    def model_info(self) -> ModelInfo | None:
        """A loaded copy's info (with device and dtype) from any worker, else the identity the records carried."""
        workers = [worker for _, worker in sorted(self.worker_table().items())]
        loaded = [worker.model for worker in workers if worker.model is not None and worker.model.details]
        if loaded:
            return loaded[0]
        known = [header.model for header in self.headers if header.model is not None]
        known += [worker.model for worker in workers if worker.model is not None]
        return known[0] if known else None

    def worker_table(self) -> dict[str, WorkerSummary]:
        """Each worker's final summary, or, for one that crashed or was cut off, what its ledger last said."""
        return {**self.ledgers, **self.workers}

    def _never_ran(self) -> int:
        return sum(1 for nodeid in self.expected or [] if nodeid not in self.finished and nodeid not in self.crashed)

    def unfinished(self) -> list[Unfinished]:
        """Items collected but not finished: crashed ones first named by their worker's crash, then the rest."""
        runs = {run.key for run in self.runs.values()} | set(self.collected)
        out = []
        for nodeid in self.expected or []:
            if nodeid in self.crashed:
                out.append(Unfinished(nodeid, _run_of(nodeid, runs), self.crashed[nodeid]))
            elif nodeid not in self.finished:
                reason = f"did not run: {self.interrupted}" if self.interrupted else "did not run: its worker stopped first"
                out.append(Unfinished(nodeid, _run_of(nodeid, runs), reason))
        out += [
            Unfinished(nodeid, _run_of(nodeid, runs), reason)
            for nodeid, reason in self.crashed.items()
            if nodeid not in (self.expected or [])
        ]
        return out

    def results(self) -> Results:
        if not self.gates_decided and self.interrupted:
            self.gate_results = not_evaluated(
                self.gates, self.collected, self.ordered_runs(), f"the run was interrupted ({self.interrupted})"
            )
            self.gates_decided = True
        if self.plan is not None and self.comparison is None and self.interrupted:
            self.comparison = self.plan.not_evaluated(f"the run was interrupted ({self.interrupted})")
        return Results(
            self.model_spec,
            self.model_info(),
            self.ordered_runs(),
            list(self.gate_results),
            self.worker_table(),
            list(sys.argv),
            run_id=self.run_id,
            interrupted=self.interrupted,
            unfinished=[entry.to_data() for entry in self.unfinished()],
            lost_workers=dict(sorted(self.lost_workers.items())),
            collected=[entry for _, entry in sorted(self.collected.items()) if entry.run.key not in self.runs],
            warnings=_warnings(self.ordered_runs(), self.source, self.labels()),
            started=self.started,
            comparison=self.comparison,
            items_known=not self.cut_in_collection,
        )

    @property
    def relevant(self) -> bool:
        """Whether this session had anything holistic: a run collected, a record, or a gate to decide."""
        if self.config.option.collectonly:
            return False
        return bool(self.collected or self.runs or self.gates)

    def never_started(self) -> str | None:
        """The model failure, when the model never answered anything: there is no evaluation to report."""
        failures = [worker.model_failure for worker in self.worker_table().values() if worker.model_failure]
        answered = any(record.answered for run in self.runs.values() for record in run.records)
        return failures[0] if failures and not answered else None

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Generator[None]:
        """The plugin's outputs, written once every other plugin's session finish has run or failed.

        The innermost wrapper: after xdist has stopped its workers (so their ledgers are final), and still written
        when another finish raises (pytest's ``--junitxml`` on a full disk). pytest then prints no summaries, so
        this one prints its own before the error goes on.
        """
        try:
            result = yield
        except BaseException:
            self._finish_session(session, exitstatus)
            terminal = self.config.pluginmanager.get_plugin("terminalreporter")
            if terminal is not None:
                self.pytest_terminal_summary(terminal)
            raise
        self._finish_session(session, exitstatus)
        return result

    def _finish_session(self, session: pytest.Session, exitstatus: int) -> None:
        self._sigterm.restore()  # the run is over: from here on SIGTERM ends the process as usual
        self._read_ledgers()
        if self.interrupted is None and exitstatus == pytest.ExitCode.INTERRUPTED:  # stopped before the tests ran
            self.interrupted = "interrupted before the tests ran (during collection)"
            self.cut_in_collection = True
        if not self.relevant or self.never_started():
            return
        results = self.results()
        payload = build_report(results)
        self.written = write_outputs(self.writers, results, payload)
        if self.written:
            self.config.hook.pytest_holistic_report_written(config=self.config, path=self.written[0], report=payload)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.relevant:
            return
        failure = self.never_started()

        def write(line: str, **markup: bool) -> None:  # every line may carry data: names, ids, server messages
            terminalreporter.write_line(printable(line), **markup)

        if failure is not None:  # under its own heading: pytest may print this section right after the errors' bodies
            terminalreporter.write_sep("=", printable(f"holistic summary: {scrub_text(self.model_spec)}"))
            write("pytest-holistic: no report written: the model never answered", yellow=True)
            return
        results = self.results()
        model = scrub_text(results.model.name) if results.model is not None else self.model_spec
        terminalreporter.write_sep("=", printable(f"holistic summary: {model}"))
        for line in summary_lines(results):
            write(line)
        if results.comparison is not None:
            for line in comparison_lines(results.comparison):
                write(line, red=line.startswith("regression FAILED"))
        for line in partial_lines(results):
            write(line, yellow=True)
        problems = [writer.problem for writer in self.writers] + [worker.cache_problem for worker in results.workers.values()]
        problems.append(self.early_stop.problem)
        for problem in dict.fromkeys(p for p in problems if p):
            write(f"pytest-holistic: {problem}", yellow=True)
        for path in self.written:
            write(f"report: {path}")


REPORTER = pytest.StashKey[Reporter]()
"""On the config of the controller (or a plain run): its reporter."""


def _reason(stop: BaseException) -> str:
    """Why the run stopped, in words: the user, a signal, pytest's own stop (-x, a failed load), or our bug."""
    if type(stop) is KeyboardInterrupt:
        return "interrupted by the user (KeyboardInterrupt)"
    if isinstance(stop, KeyboardInterrupt | pytest.Session.Failed | pytest.Session.Interrupted):
        return error_line(stop)
    return f"an internal error stopped the run ({type(stop).__name__}); see the INTERNALERROR above"


def _run_of(nodeid: str, runs: set[str]) -> str | None:
    base = nodeid.rsplit("[", 1)[0] if nodeid.endswith("]") else nodeid
    return base if base in runs else None


def _warnings(runs: Sequence[RunResults], source: str, labels: Labels) -> list[str]:
    """Results that are numbers but not what was asked for: every answer empty, or the shipped data instead of the hub's."""
    warnings = []
    for run in runs:
        label = labels.of(run.key, run.scenario)
        warnings.extend(run.interval_warnings(label))  # an interval left out because most resamples were undefined
        fallback = run.info.source_provenance.get("fallback") and run.info.source_provenance.get("source_reason")
        line = f"{run.scenario}: --holistic-source auto used the shipped data: {fallback}"
        if fallback and line not in warnings:  # auto could not read the real dataset: one line per scenario
            warnings.append(line)
        elif run.info.source != source and source != "auto":
            warnings.append(
                f"{run.scenario}: has no {source} source, so its {run.info.source} data was used "
                f"(--holistic-source {source} applies only to scenarios given a {source}= source)"
            )
        answered = [record.completion for record in run.records if record.completion is not None]
        kind = kind_named(run.info.adapter.get("method"))
        scores_text = kind is None or not kind.scores_documents  # a scored document has no answer text
        if scores_text and answered and all(not completion.text.strip() for completion in answered):
            warnings.append(
                f"{label}: all {len(answered)} answers are empty, so its scores say nothing about the model; "
                "check max_tokens, the stop sequences and the prompt layout (output_prefix)"
            )
    origins: dict[str, dict[str, str]] = {}
    for run in runs:
        origins.setdefault(run.scenario, {})[json.dumps(dict(run.info.source_provenance), sort_keys=True)] = run.key
    for name, keys in sorted(origins.items()):
        if len(keys) > 1:  # two different scenarios under one name: a 'name:metric' gate judges both
            warnings.append(
                f"{name}: {len(keys)} different scenarios share this name ({', '.join(sorted(keys.values()))}); "
                f"a '{name}:...' gate applies to all of them; give each scenario its own name"
            )
    return warnings
