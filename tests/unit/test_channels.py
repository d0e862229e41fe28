"""The two outboxes and the controller's relays: what each role sends, by which carrier, and that it arrives whole.

A stand-in config records the hook calls; the xdist worker's config has a real ledger folder and ``workeroutput``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_holistic._roles import LEDGER
from pytest_holistic.channels import OUTPUT, RECORD, RUN, InProcess, XdistWorker, relay_output, relay_report
from pytest_holistic.metrics.stats import Stat
from pytest_holistic.models.base import ModelInfo
from pytest_holistic.plans import Completion
from pytest_holistic.records import CollectedRun, ItemRecord, RunHeader, RunInfo, WorkerSummary
from pytest_holistic.report.ledger import Ledgers
from pytest_holistic.scenarios.instance import Instance

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_holistic"


class Hooks:
    """Records every hook called on it, in order, with its arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda **kwargs: self.calls.append((name, kwargs))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [kwargs for called, kwargs in self.calls if called == name]


def _config(**attributes: Any) -> Any:
    return SimpleNamespace(hook=Hooks(), **attributes)


def _info(key: str = "t.py::test_q") -> RunInfo:
    return RunInfo(key, "q", "test", "local", {}, {"method": "generation"}, (), ("exact_match",), ())


def _record(k: int = 0) -> ItemRecord:
    completion = Completion(text="B", prompt="p", gold=("B",), tokens_in=3, tokens_out=1, seconds=0.5)
    return ItemRecord(f"t.py::test_q[i{k}]", "t.py::test_q", Instance(f"i{k}", "x", ("B",)), None, "p", completion,
                      {"exact_match": 1.0}, "passed", "gw3")  # fmt: skip


def _summary(name: str = "gw3", computed: int = 0, final: bool = False) -> WorkerSummary:
    return WorkerSummary(name, ModelInfo("m", "scripted", "1", {}), computed, 0, 2, 1, 0.5, 0.1, Stat.of([0.5]), "cpu",
                         None, 8, None, 100.0, None, final=final)  # fmt: skip


def _report(k: int = 0) -> pytest.TestReport:
    return pytest.TestReport(f"t.py::test_q[i{k}]", ("t.py", 1, "test_q"), {}, "passed", None, "call")


RUNS = [CollectedRun(_info(), 4, 3), CollectedRun(_info("t.py::test_r"), 2, 0)]


# -- the role is read once --------------------------------------------------------------------------


def test_the_role_is_read_in_one_place() -> None:
    """``is_worker`` is called only by ``activation.start`` (from ``pytest_configure``), and only ``_roles`` looks for ``workerinput`` to decide."""
    calls: list[tuple[str, str]] = []
    probes: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "is_worker":
                    calls.append((path.name, function.name))
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) == "hasattr"
                    and any(isinstance(arg, ast.Constant) and arg.value == "workerinput" for arg in node.args)
                ):
                    probes.append(path.name)
    assert calls == [("activation.py", "start")]
    assert probes == ["_roles.py"]


# -- one process (-n 0) -----------------------------------------------------------------------------


def test_in_process_the_reporter_gets_the_record_itself_and_the_report_carries_plain_data() -> None:
    config = _config()
    outbox = InProcess(config)
    record, header = _record(), RunHeader(_info(), None)
    first, second = _report(0), _report(1)
    outbox.record(first, record, header)
    outbox.record(second, _record(1), None)
    sent = config.hook.named("pytest_holistic_item_recorded")
    assert sent[0]["record"] is record and sent[0]["header"] is header  # no second copy of the instance and answer
    assert sent[1]["header"] is None and len(sent) == 2
    assert type(getattr(first, RECORD)) is dict and getattr(first, RECORD) == record.to_data()  # for report-log
    assert getattr(first, RUN) == header.to_data() and not hasattr(second, RUN)
    assert outbox.name == "main"


def test_in_process_runs_go_once_collection_is_over_and_nothing_is_kept_for_a_crash() -> None:
    config = _config()
    outbox = InProcess(config)
    outbox.collected(RUNS[:1], final=False)  # before a server's probe: this process sends them when it finishes
    outbox.collected([], final=True)
    assert config.hook.calls == []
    outbox.collected(RUNS, final=True)
    assert config.hook.calls == [("pytest_holistic_runs_collected", {"config": config, "runs": [r.to_data() for r in RUNS]})]

    def never() -> WorkerSummary:
        raise AssertionError("an in-process outbox keeps no ledger, so it never asks for the counts")

    outbox.checkpoint(never)


def test_in_process_the_summary_goes_at_the_end_unless_the_process_was_idle() -> None:
    config = _config()
    outbox = InProcess(config)
    outbox.finished(_summary("main"), idle=True)  # the xdist controller: nothing computed, no worker row
    assert config.hook.calls == []
    outbox.finished(_summary("main", computed=5, final=True), idle=False)
    (sent,) = config.hook.named("pytest_holistic_worker_finished")
    assert WorkerSummary.from_data(sent["summary"]) == _summary("main", computed=5, final=True)


# -- an xdist worker --------------------------------------------------------------------------------


def _worker(tmp_path: Path | None) -> tuple[XdistWorker, Any]:
    workerinput: dict[str, Any] = {"workerid": "gw3", "workercount": 4}
    if tmp_path is not None:
        workerinput[LEDGER] = str(tmp_path)
    config = _config(workerinput=workerinput, workeroutput={})
    return XdistWorker(config), config


def test_a_worker_sends_records_as_plain_data_on_the_report_only(tmp_path: Path) -> None:
    outbox, config = _worker(tmp_path)
    report = _report()
    outbox.record(report, _record(), RunHeader(_info(), ModelInfo("m", "scripted", "1", {})))
    assert config.hook.calls == [] and outbox.name == "gw3"
    assert json.loads(json.dumps(getattr(report, RECORD))) == _record().to_data()  # builtin types: execnet can send them
    assert RunHeader.from_data(json.loads(json.dumps(getattr(report, RUN)))).run == _info()


@pytest.fixture
def ledgers() -> Any:
    ledgers = Ledgers()
    yield ledgers
    ledgers.remove()


def test_a_workers_ledger_is_rewritten_at_each_checkpoint_and_read_back_by_the_controller(ledgers: Ledgers) -> None:
    folder = ledgers.folder()
    outbox, _ = _worker(folder)
    outbox.collected(RUNS[:1], final=False)
    outbox.checkpoint(lambda: _summary(computed=0))
    assert ledgers.summaries() == [(_summary(computed=0), (RUNS[0],))]
    outbox.collected(RUNS, final=True)
    outbox.checkpoint(lambda: _summary(computed=8))
    assert ledgers.summaries() == [(_summary(computed=8), tuple(RUNS))]
    assert [path.name for path in folder.iterdir()] == ["gw3.json"]  # written atomically: no temporary left
    (folder / "gw9.json").write_text('{"summary": {"worker": "gw9"', encoding="utf-8")  # killed mid-write
    assert ledgers.summaries() == [(_summary(computed=8), tuple(RUNS))]


def test_a_worker_without_a_ledger_folder_does_not_measure_for_one() -> None:
    outbox, _ = _worker(None)

    def never() -> WorkerSummary:
        raise AssertionError("no ledger to write")

    outbox.checkpoint(never)


def test_a_workers_summary_and_runs_reach_the_reporters_hooks_through_workeroutput(tmp_path: Path) -> None:
    outbox, config = _worker(tmp_path)
    outbox.collected(RUNS, final=True)
    outbox.finished(_summary(computed=0, final=True), idle=True)  # an idle worker is listed too
    output = json.loads(json.dumps(config.workeroutput))
    controller = _config()
    relay_output(controller, output)
    assert [name for name, _ in controller.hook.calls] == ["pytest_holistic_runs_collected", "pytest_holistic_worker_finished"]
    assert [CollectedRun.from_data(run) for run in controller.hook.named("pytest_holistic_runs_collected")[0]["runs"]] == RUNS
    summary = controller.hook.named("pytest_holistic_worker_finished")[0]["summary"]
    assert WorkerSummary.from_data(summary) == _summary(computed=0, final=True)
    relay_output(controller, {"exitstatus": 0})  # a worker that sent nothing of ours
    assert len(controller.hook.calls) == 2
    assert set(output) == {OUTPUT}


def test_the_controller_relays_a_workers_record_as_objects_and_leaves_its_own_reports_alone() -> None:
    record, header = _record(), RunHeader(_info(), None)
    report = _report()
    XdistWorker(_config(workerinput={"workerid": "gw3"}, workeroutput={})).record(report, record, header)
    controller = _config()
    relay_report(controller, report)  # made in this process (no ``node``): its outbox sent it already
    assert controller.hook.calls == []
    report.node = object()  # type: ignore[attr-defined]  # as xdist marks a report that came from a worker
    relay_report(controller, report)
    (sent,) = controller.hook.named("pytest_holistic_item_recorded")
    assert sent["record"] == record and sent["record"] is not record and sent["header"] == header
    plain = _report(1)
    plain.node = object()  # type: ignore[attr-defined]  # a worker's report of a test that is not holistic
    relay_report(controller, plain)
    assert len(controller.hook.calls) == 1


def test_the_dormant_glue_knows_the_channels_by_their_names() -> None:
    """``activation`` names two channels itself, so that a session without evals loads no channel code."""
    from pytest_holistic import activation, channels

    assert (activation.RECORD, activation.OUTPUT) == (channels.RECORD, channels.OUTPUT)
