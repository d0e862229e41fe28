"""The controller's half of a run: registered only where ``not hasattr(config, "workerinput")``.

It collects item records as reports arrive (the same path at -n 0 and -n 8), keeps each worker's
summary, judges the gates once the items are done (each gate a test item of its own), and hands the
results to its writers and the terminal. Data only flows in: nothing here calls back into a worker.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

from ..errors import InternalError
from ..gates import Gate, GateResult, judge
from ..models.base import ModelInfo
from .aggregate import Results, RunResults
from .json_report import build_report
from .records import ItemRecord, RunHeader, WorkerSummary
from .terminal import summary_lines


class Writer(Protocol):
    """One output file; ``problem`` is a one-line note when it had to be written somewhere else."""

    name: str
    problem: str | None

    def write(self, results: Results, payload: dict[str, Any]) -> Path: ...


class GateFailure:
    """A failed gate's longrepr: its message in the failures section, the short summary and JUnit."""

    def __init__(self, message: str, path: str) -> None:
        self.message = message
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


class Reporter:
    """Records in, results out: aggregation keyed by (run, perturbation, metric), gates, writers, summary."""

    def __init__(self, config: pytest.Config, model_spec: str, gates: Sequence[Gate], writers: Sequence[Writer]) -> None:
        self.config = config
        self.model_spec = model_spec
        self.gates = tuple(gates)
        self.writers = list(writers)
        self.runs: dict[str, RunResults] = {}
        self.headers: list[RunHeader] = []
        self.workers: dict[str, WorkerSummary] = {}
        self.gate_results: list[GateResult] = []
        self.written: list[Path] = []

    # -- collecting ---------------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        header = getattr(report, "holistic_run", None)
        if header is not None:
            parsed = RunHeader.from_data(header)
            self.headers.append(parsed)
            self.runs.setdefault(parsed.run.key, RunResults(parsed.run))
        data = getattr(report, "holistic_record", None)
        if data is not None:
            record = ItemRecord.from_data(data)
            run = self.runs.get(record.run_key)
            if run is None:
                raise InternalError(f"record of {record.nodeid} arrived before its run {record.run_key!r} was described")
            run.add(record)

    def pytest_holistic_worker_finished(self, config: pytest.Config, summary: dict[str, Any]) -> None:
        worker = WorkerSummary.from_data(summary)
        self.workers[worker.worker] = worker

    # -- gates --------------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if self.runs and not (session.shouldfail or session.shouldstop):
            self._judge_gates(session)
        return result

    def _judge_gates(self, session: pytest.Session) -> None:
        runs = self.ordered_runs()
        judged: list[tuple[str, GateResult]] = []
        for run in runs:
            observations = run.observations()
            gates = [*run.info.gates, *(gate for gate in self.gates if gate.scenario in (None, run.scenario))]
            for gate in gates:
                judged.append((f"{run.key}::gate[{gate.expression}]", judge(gate, run.key, run.scenario, observations)))
        ran = sorted({run.scenario for run in runs})
        for gate in self.gates:
            if gate.scenario is not None and gate.scenario not in ran:
                message = f"gate {gate.expression}: scenario {gate.scenario!r} did not run (ran: {', '.join(ran)}); "
                message += "fix the scenario name"
                judged.append(
                    (
                        f"holistic::gate[{gate.expression}]",
                        GateResult(gate, "", gate.scenario, False, math.nan, 0, (math.nan, math.nan), message),
                    )
                )
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

    # -- results ------------------------------------------------------------------------------------

    def ordered_runs(self) -> list[RunResults]:
        return [self.runs[key] for key in sorted(self.runs)]

    def model_info(self) -> ModelInfo | None:
        """A loaded copy's info (with device and dtype) from any worker, else the identity the records carried."""
        loaded = [worker.model for _, worker in sorted(self.workers.items()) if worker.model is not None and worker.model.details]
        if loaded:
            return loaded[0]
        known = [header.model for header in self.headers if header.model is not None]
        known += [worker.model for _, worker in sorted(self.workers.items()) if worker.model is not None]
        return known[0] if known else None

    def results(self) -> Results:
        return Results(
            self.model_spec, self.model_info(), self.ordered_runs(), list(self.gate_results), dict(self.workers), list(sys.argv)
        )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.runs:
            return
        results = self.results()
        payload = build_report(results)
        self.written = [writer.write(results, payload) for writer in self.writers]
        if self.written:
            self.config.hook.pytest_holistic_report_written(config=self.config, path=self.written[0], report=payload)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.runs:
            return
        results = self.results()
        model = results.model.name if results.model is not None else self.model_spec
        terminalreporter.write_sep("=", f"holistic summary: {model}")
        for line in summary_lines(results):
            terminalreporter.write_line(line)
        problems = [writer.problem for writer in self.writers] + [worker.cache_problem for worker in self.workers.values()]
        for problem in dict.fromkeys(p for p in problems if p):
            terminalreporter.write_line(f"pytest-holistic: {problem}", yellow=True)
        for path in self.written:
            terminalreporter.write_line(f"report: {path}")
