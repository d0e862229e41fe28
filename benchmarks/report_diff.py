"""Two ``report.json`` files of the same suite, compared number by number: what a faster way to compute must not change.

Every run's results (metrics, perturbation and group results, gates, outcomes) and every item's record (prompt,
answer, log-probabilities, scores, outcome, error) are walked leaf by leaf. Text, counts and answers must be
identical; other numbers equal within ``tolerance`` (relative or absolute: float32 log-probabilities computed in
another order differ in their last bits, and so do metrics built on them). What times the run (the efficiency
metrics ``runtime_s``, ``throughput`` and ``tokens_per_s``, each record's seconds, worker and cache flag) is left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

TIMING = frozenset({"runtime_s", "throughput", "tokens_per_s"})
RUN_SKIP = frozenset({"instances"})  # compared record by record instead
RECORD_SKIP = frozenset({"execution", "seconds", "cached", "worker"})
ANSWER = ("text", "predicted_index", "ranking")  # what the model answered, as opposed to how sure it was


@dataclass(frozen=True)
class Difference:
    where: str
    first: Any
    second: Any


@dataclass
class Comparison:
    """What differed, and how much was compared."""

    runs: int = 0
    values: int = 0  # leaves compared in the runs' results
    items: int = 0
    same_answers: int = 0
    worst_logprob: float = 0.0  # largest |difference| of a number in an item's completion
    worst_metric: float = 0.0  # largest |difference| of a number in a run's results or an item's scores
    differences: list[Difference] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences


def leaves(value: Any, path: str = "", skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, Any]]:
    """``(path, leaf)`` for every leaf of nested dicts and lists; keys in ``skip`` (at any depth) are left out."""
    if isinstance(value, Mapping):
        for key in sorted(value, key=str):
            if key not in skip:
                yield from leaves(value[key], f"{path}.{key}" if path else str(key), skip)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]", skip)
    else:
        yield path, value


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare_leaves(
    first: Mapping[str, Any], second: Mapping[str, Any], where: str, tolerance: float, out: Comparison, logprobs: bool
) -> bool:
    """Leaf by leaf; differences go to ``out``. Integers, text and flags must be equal, floats close. True when all match."""
    same = True
    for path in sorted(set(first) | set(second)):
        a, b = first.get(path, "<missing>"), second.get(path, "<missing>")
        if _number(a) and _number(b) and (isinstance(a, float) or isinstance(b, float)):
            gap = abs(float(a) - float(b))
            if logprobs:
                out.worst_logprob = max(out.worst_logprob, gap)
            else:
                out.worst_metric = max(out.worst_metric, gap)
            if math.isclose(float(a), float(b), rel_tol=tolerance, abs_tol=tolerance):
                continue
        elif a == b:
            continue
        same = False
        out.differences.append(Difference(f"{where} {path}", a, b))
    return same


def _records(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {record["nodeid"]: record for run in report.get("runs") or () for record in run.get("instances") or ()}


def compare_reports(first: Mapping[str, Any], second: Mapping[str, Any], tolerance: float = 1e-4) -> Comparison:
    """Every result and record of ``first`` against ``second``'s."""
    out = Comparison()
    runs_a = {run["key"]: run for run in first.get("runs") or ()}
    runs_b = {run["key"]: run for run in second.get("runs") or ()}
    for key in sorted(set(runs_a) | set(runs_b)):
        if key not in runs_a or key not in runs_b:
            out.differences.append(Difference(f"run {key}", key in runs_a, key in runs_b))
            continue
        out.runs += 1
        a = {path: v for path, v in leaves(runs_a[key], skip=RUN_SKIP) if not TIMING & set(path.replace("[", ".").split("."))}
        b = {path: v for path, v in leaves(runs_b[key], skip=RUN_SKIP) if not TIMING & set(path.replace("[", ".").split("."))}
        out.values += len(set(a) | set(b))
        _compare_leaves(a, b, f"run {key}", tolerance, out, logprobs=False)
    for part in ("gates", "not_completed", "runs_without_records"):
        _compare_leaves(dict(leaves(first.get(part))), dict(leaves(second.get(part))), part, tolerance, out, logprobs=False)
    records_a, records_b = _records(first), _records(second)
    for nodeid in sorted(set(records_a) | set(records_b)):
        if nodeid not in records_a or nodeid not in records_b:
            out.differences.append(Difference(f"item {nodeid}", nodeid in records_a, nodeid in records_b))
            continue
        out.items += 1
        a, b = records_a[nodeid], records_b[nodeid]
        completion_a, completion_b = a.get("completion") or {}, b.get("completion") or {}
        if all(completion_a.get(name) == completion_b.get(name) for name in ANSWER):
            out.same_answers += 1
        rest_a = {key: value for key, value in a.items() if key not in ("completion", "scores")}
        rest_b = {key: value for key, value in b.items() if key not in ("completion", "scores")}
        where = f"item {nodeid}"
        _compare_leaves(
            dict(leaves(rest_a, skip=RECORD_SKIP)), dict(leaves(rest_b, skip=RECORD_SKIP)), where, tolerance, out, False
        )
        _compare_leaves(
            dict(leaves(a.get("scores"), "scores")), dict(leaves(b.get("scores"), "scores")), where, tolerance, out, False
        )
        _compare_leaves(
            dict(leaves(completion_a, "completion", RECORD_SKIP)),
            dict(leaves(completion_b, "completion", RECORD_SKIP)),
            where,
            tolerance,
            out,
            logprobs=True,
        )
    return out


def describe(comparison: Comparison, names: tuple[str, str], shown: int = 30) -> list[str]:
    """Printable lines: the counts, the worst gaps, and the first ``shown`` differences."""
    first, second = names
    lines = [
        (
            f"compared {comparison.runs} runs ({comparison.values} result values) and {comparison.items} items: "
            f"same answer on {comparison.same_answers}/{comparison.items}"
        ),
        (
            f"largest |difference|: {comparison.worst_logprob:.2e} in an answer's log-probabilities, "
            f"{comparison.worst_metric:.2e} in a metric or score"
        ),
    ]
    if comparison.identical:
        lines.append("no difference beyond the tolerance")
        return lines
    lines.append(f"{len(comparison.differences)} differences ({first} | {second}):")
    for difference in comparison.differences[:shown]:
        lines.append(f"  {difference.where}: {difference.first!r} | {difference.second!r}")
    if len(comparison.differences) > shown:
        lines.append(f"  ... and {len(comparison.differences) - shown} more (all in the results JSON)")
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python benchmarks/report_diff.py BEFORE.json AFTER.json [--tolerance X]``: exit 0 when they agree."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description="Compare two report.json files of the same suite, leaf by leaf.")
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-4, help="relative or absolute, for floats (0: exact)")
    arguments = parser.parse_args(argv)
    reports = [json.loads(path.read_text(encoding="utf-8")) for path in (arguments.first, arguments.second)]
    comparison = compare_reports(reports[0], reports[1], arguments.tolerance)
    print("\n".join(describe(comparison, (str(arguments.first), str(arguments.second)))))
    return 0 if comparison.identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
