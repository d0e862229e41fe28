"""``--holistic-junit``: the run as JUnit XML, for CI test reporters that read nothing else.

One ``<testsuite>`` per scenario run, named by its label (``report.labels``: two runs of one scenario, two names),
whose ``<properties>`` are the run's numbers (value, 95% interval and n of every metric a gate can check), one
``<testcase>`` per item, and a ``holistic gates`` suite with a testcase per gate. The file keeps to the Jenkins JUnit schema (junit-10.xsd) that strict parsers
validate against, which has no ``<properties>`` inside a ``<testcase>``: an item's scenario, instance,
variant, scores and completion go into its ``<system-out>`` instead, where every CI page shows them.
Model output is arbitrary text, so every string is escaped by ElementTree, and the characters XML 1.0
cannot hold (control characters, lone surrogates) are written as their backslash escapes.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..gates import GateResult
from ..records import CollectedRun, ItemRecord, number_text
from ..scrubbing import scrub_text
from .aggregate import MetricResult, Results, RunResults
from .files import write_atomic
from .labels import Labels
from .payload import RegressionCheck, Report

GATES_SUITE = "holistic gates"
REGRESSIONS_SUITE = "holistic regressions"
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_MESSAGE_CHARS = 2000  # a failure's message attribute; the whole text is the element's body


def clean(text: object) -> str:
    """Text XML 1.0 can hold: each character it cannot (controls, lone surrogates) as its escape (``\\x07``, ``\\ud800``)."""
    return _ILLEGAL.sub(lambda match: match.group().encode("unicode_escape", "backslashreplace").decode("ascii"), str(text))




def _seconds(value: float) -> str:
    """The schema's time format: digits and at most three decimals (never negative, never nan)."""
    return f"{value:.3f}" if math.isfinite(value) and value > 0 else "0.000"


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` as pytest's own junitxml names a test: dotted module path (and class), then the name with its [id]."""
    head = nodeid.split("[", 1)[0]
    parts = head.split("::")
    if len(parts) == 1:
        return "", nodeid
    module = parts[0].removesuffix(".py").replace("/", ".").replace("\\", ".")
    return ".".join([module, *parts[1:-1]]), parts[-1] + nodeid[len(head) :]


def _element(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    node = ET.SubElement(parent, tag, {key: clean(value) for key, value in attributes.items()})
    if text is not None:
        node.text = clean(text)
    return node


def _properties(parent: ET.Element, properties: Iterable[tuple[str, str]]) -> None:
    listed = list(properties)
    if listed:
        node = _element(parent, "properties")
        for name, value in listed:
            _element(node, "property", name=name, value=value)


def _metric_properties(results: Mapping[str, MetricResult]) -> list[tuple[str, str]]:
    properties = []
    for name, result in sorted(results.items()):
        numbers = [(name, result.value), (f"{name}.ci95_low", result.low), (f"{name}.ci95_high", result.high)]
        properties += [(key, text) for key, value in numbers if (text := number_text(value)) is not None]  # undefined: left out
        properties.append((f"{name}.n", str(result.n)))
    return properties


def _outcome(case: ET.Element, tag: str, message: str) -> None:
    _element(case, tag, message, message=message[:_MESSAGE_CHARS], type=f"holistic.{tag}")


def _item_output(scenario: str, record: ItemRecord) -> str:
    """The item's identity, scores and answer, a ``name: value`` line each; the completion is JSON, so it reads back exactly."""
    lines = [f"scenario: {scenario}", f"instance: {record.instance_id}"]
    if record.perturbation is not None:
        lines.append(f"perturbation: {record.perturbation}")
    lines += [f"{name}: {number_text(record.scores[name]) or 'undefined'}" for name in sorted(record.scores)]
    if record.completion is not None:
        lines.append(f"completion: {json.dumps(record.completion.text, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def _item_case(suite: ET.Element, scenario: str, record: ItemRecord) -> tuple[str, float]:
    classname, name = split_nodeid(record.nodeid)
    seconds = float(record.completion.seconds) if record.completion is not None else 0.0
    case = _element(suite, "testcase", name=name, classname=classname, time=_seconds(seconds))
    if record.outcome == "failed":
        _outcome(case, "failure", record.error or "failed")
    elif record.outcome == "error":
        _outcome(case, "error", record.error or "error")
    elif record.outcome == "skipped":
        _outcome(case, "skipped", "skipped by the test")
    _element(case, "system-out", _item_output(scenario, record))
    return record.outcome, seconds


def _unfinished_case(suite: ET.Element, entry: Mapping[str, Any]) -> str:
    """An item without an outcome: skipped when the run ended before it, an error when its worker crashed under it."""
    classname, name = split_nodeid(str(entry["nodeid"]))
    reason = str(entry["reason"])
    case = _element(suite, "testcase", name=name, classname=classname, time=_seconds(0.0))
    outcome = "skipped" if reason.startswith("did not run") else "error"  # the reporter's words for an item never reached
    _outcome(case, outcome, reason)
    return outcome


def _suite(parent: ET.Element, name: str, timestamp: str) -> ET.Element:
    attributes = {"name": name, "timestamp": timestamp} if timestamp else {"name": name}
    return _element(parent, "testsuite", **attributes)


def _count(suite: ET.Element, outcomes: list[str], seconds: float) -> dict[str, int]:
    counts = {
        "tests": len(outcomes),
        "failures": outcomes.count("failed"),
        "errors": outcomes.count("error"),
        "skipped": outcomes.count("skipped"),
    }
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", _seconds(seconds))
    return counts


def _run_suite(root: ET.Element, run: RunResults, results: Results, labels: Labels) -> tuple[dict[str, int], float]:
    suite = _suite(root, labels.of(run.key, run.scenario), results.started)
    numbers = {**run.metrics(), **run.perturbed().perturbations}
    edition = [("edition", run.info.edition)] if run.info.edition else []
    _properties(suite, [("run", run.key), ("model", _model(results)), *edition, *_metric_properties(numbers)])
    outcomes, total = [], 0.0
    for record in run.records:
        outcome, seconds = _item_case(suite, run.scenario, record)
        outcomes.append(outcome)
        total += seconds
    outcomes += [_unfinished_case(suite, entry) for entry in results.unfinished if entry.get("run") == run.key]
    return _count(suite, outcomes, total), total


def _recordless_suite(root: ET.Element, entry: CollectedRun, results: Results, labels: Labels) -> dict[str, int] | None:
    """A run that finished no item but had some selected (cut short, or its worker crashed): its items, none deselected."""
    unfinished = [item for item in results.unfinished if item.get("run") == entry.run.key]
    if not unfinished:
        return None
    suite = _suite(root, labels.of(entry.run.key, entry.run.scenario), results.started)
    _properties(suite, [("run", entry.run.key), ("model", _model(results))])
    return _count(suite, [_unfinished_case(suite, item) for item in unfinished], 0.0)


def _model(results: Results) -> str:
    return scrub_text(results.model.name) if results.model is not None else results.model_spec


def _gate_case(suite: ET.Element, result: GateResult) -> str:
    classname, name = split_nodeid(f"{result.run or 'holistic'}::gate[{result.gate.expression}]")
    case = _element(suite, "testcase", name=name, classname=classname, time=_seconds(0.0))
    if result.status == "failed":
        _outcome(case, "failure", result.message)
    elif result.status == "not_evaluated":
        _outcome(case, "skipped", result.message)
    return {"not_evaluated": "skipped"}.get(result.status, result.status)


def sequence_properties(result: GateResult) -> list[tuple[str, str]]:
    """A gate on a run that could stop early: n used of N, its confidence sequence's bounds, the method and the level.

    Properties of the gates suite, named after the gate's testcase (``<run>::gate[<expression>].sequence.n``): the
    JUnit schema strict readers check allows no properties inside a testcase.
    """
    sequence = result.sequence
    if sequence is None:
        return []
    low, high = sequence["ci"]
    numbers = [("low", number_text(float(low))), ("high", number_text(float(high)))]
    fields = [
        ("stopped", "true" if sequence["stopped"] else "false"),
        ("n", str(sequence["n"])),
        ("of", str(sequence["of"])),
        *((name, text) for name, text in numbers if text is not None),
        ("decision", str(sequence["decision"])),
        ("level", repr(float(sequence["level"]))),
        ("method", str(sequence["method"])),
    ]
    case = f"{result.run or 'holistic'}::gate[{result.gate.expression}]"
    return [(f"{case}.sequence.{name}", value) for name, value in fields]


def _gates_suite(root: ET.Element, results: Results) -> dict[str, int]:
    suite = _suite(root, GATES_SUITE, results.started)
    properties = [("complete", "true" if results.complete else "false")]
    if results.interrupted is not None:
        properties.append(("interrupted", results.interrupted))
    properties += [entry for result in results.gates for entry in sequence_properties(result)]
    _properties(suite, properties)
    return _count(suite, [_gate_case(suite, result) for result in results.gates], 0.0)


def _regression_case(suite: ET.Element, verdict: RegressionCheck) -> str:
    classname, name = split_nodeid(str(verdict["nodeid"]))
    case = _element(suite, "testcase", name=name, classname=classname, time=_seconds(0.0))
    status = str(verdict["status"])
    if status == "failed":
        _outcome(case, "failure", str(verdict["message"]))
    elif status != "passed":
        _outcome(case, "skipped", str(verdict["message"]))
        return "skipped"
    return status


def _regressions_suite(root: ET.Element, results: Results) -> dict[str, int] | None:
    """The --holistic-fail-on-regression checks, one testcase each, as pytest ran them (None without any)."""
    comparison = results.comparison
    verdicts = comparison.get("regressions") if comparison else None
    if not comparison or not verdicts:
        return None
    suite = _suite(root, REGRESSIONS_SUITE, results.started)
    _properties(suite, [("baseline", str(comparison["baseline"]["path"]))])
    return _count(suite, [_regression_case(suite, verdict) for verdict in verdicts], 0.0)


def build_junit(results: Results) -> ET.Element:
    """The ``<testsuites>`` tree: a suite per run (with records, then without), then the gates', with totals that add up."""
    root = ET.Element("testsuites", {"name": "pytest-holistic"})
    suites: list[dict[str, int]] = []
    seconds = 0.0
    labels = results.labels()  # two runs of one scenario: two suites told apart by their test function
    for run in results.runs:
        counts, spent = _run_suite(root, run, results, labels)
        suites.append(counts)
        seconds += spent
    recordless = (_recordless_suite(root, entry, results, labels) for entry in results.collected)
    suites += [suite for suite in recordless if suite is not None]
    suites.append(_gates_suite(root, results))
    if (regressions := _regressions_suite(root, results)) is not None:
        suites.append(regressions)
    for key in ("tests", "failures", "errors"):  # the schema has no "skipped" on the root
        root.set(key, str(sum(counts[key] for counts in suites)))
    root.set("time", _seconds(seconds))
    return root


def render_junit(results: Results) -> str:
    root = build_junit(results)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class JunitWriter:
    """The ``--holistic-junit`` file; if its folder cannot be written, a temporary file instead, with a problem line."""

    name = "junit"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None

    def write(self, results: Results, payload: Report) -> Path:
        text = render_junit(results)
        try:
            return write_atomic(self.path, text)
        except OSError as error:
            fallback = Path(tempfile.mkdtemp(prefix="pytest-holistic-")) / (self.path.name or "junit.xml")
            self.problem = f"could not write {self.path} ({error.strerror or error}); wrote {fallback} instead"
            return write_atomic(fallback, text)
