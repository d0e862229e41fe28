"""``--holistic-fail-on-regression METRIC:MARGIN``: a paired comparison that can fail the run.

A run fails a check only when it is worse than the baseline beyond the margin *with confidence*: the whole
95% interval of (this - baseline) lies past -MARGIN on the bad side (below it for higher-is-better metrics,
above +MARGIN for lower-is-better ones), and the verdict is "worse". A drop that may be noise, or a real
drop smaller than the margin, passes. Each (scenario, metric) check is a test item of its own,
``holistic::regression[scenario:metric]``, reported like a gate.

Checks follow the gate rules (docs/how-to/gates-in-ci.md): a scenario that ran and lost the metric, or whose
instances match none of the baseline's, fails; a scenario on one side only (new, or not run this time)
is not evaluated, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import metrics as registry
from ..regression_specs import RegressionSpec
from .compare import Baseline, Side, compare, direction_of, load_baseline, side_of
from .payload import ComparedMetric, Comparison, NotCompared, RegressionCheck
from .sequential import PairedCheck

if TYPE_CHECKING:
    from ..records import RunInfo
    from .aggregate import RunResults

PREFIX = "holistic::regression"


@dataclass(frozen=True)
class RegressionVerdict:
    """One check's outcome, reported as the test item ``nodeid``: passed, failed or skipped (not evaluated)."""

    nodeid: str
    scenario: str
    metric: str
    margin: float
    status: str
    message: str
    row: ComparedMetric | None = None

    def to_dict(self) -> RegressionCheck:
        row = self.row
        return {
            "nodeid": self.nodeid,
            "scenario": self.scenario,
            "metric": self.metric,
            "margin": self.margin,
            "status": self.status,
            "message": self.message,
            "difference": row.get("difference") if row else None,
            "ci95": row.get("ci95") if row else None,
            "n": row.get("n") if row else None,
            "verdict": row.get("verdict") if row else None,
            "mde": row.get("mde") if row else None,
            "mde_note": row.get("mde_note") if row else None,
        }


def _number(value: Any, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def describe(row: ComparedMetric) -> str:
    """A compared row in words: the difference, its interval, n, the verdict and the MDE."""
    low, high = row["ci95"]
    mcnemar = row.get("mcnemar")
    test = f", McNemar p={mcnemar['p_value']:.3g}" if mcnemar else ""
    return (
        f"{_number(row['this']['mean'])} vs baseline {_number(row['baseline']['mean'])}: "
        f"difference {_number(row['difference'], True)} (95% CI {_number(low, True)} to {_number(high, True)}, n={row['n']}), "
        f"{row['verdict']}{test}; {mde_text(row)}"
    )


def mde_text(row: ComparedMetric) -> str:
    """The row's minimum detectable difference in words, or why no difference is detectable at its n."""
    if row.get("mde_note"):
        return f"MDE: {row['mde_note']}"
    return f"MDE {_number(row.get('mde'))} (80% power, alpha 0.05)"


def _regressed(row: ComparedMetric, margin: float) -> bool:
    low, high = row["ci95"]
    if row["verdict"] != "worse" or low is None or high is None:  # None: NaN as JSON writes it; "worse" has a finite interval
        return False
    regressed: bool = high < -margin if row["direction"] == "higher" else low > margin
    return regressed


def _sequential(sequence: Mapping[str, Any], spec: RegressionSpec) -> tuple[str, str]:
    """A check decided by its paired-difference sequence on a run stopped early: its status and why, in words."""
    low, high = sequence["ci"]
    held = sequence["decision"] == "holds"
    return ("passed" if held else "failed"), (
        f"stopped early: the {sequence['level']:.0%} confidence sequence of the paired difference [{low:+.4f}, {high:+.4f}] "
        f"after {sequence['of']} of {sequence['population']} instances ({sequence['n']} paired) "
        f"{'rules out' if held else 'shows'} a drop beyond {spec.margin:g}"
    )


def _spec_for(specs: Sequence[RegressionSpec], scenario: str, metric: str) -> RegressionSpec | None:
    """The spec that decides (scenario, metric): one naming the scenario, else the last one for every scenario."""
    own = [spec for spec in specs if spec.metric == metric and spec.scenario == scenario]
    general = [spec for spec in specs if spec.metric == metric and spec.scenario is None]
    chosen = own or general
    return chosen[-1] if chosen else None


def judge(
    comparison: Comparison,
    specs: Sequence[RegressionSpec],
    early: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> list[RegressionVerdict]:
    """A verdict per (scenario, metric) that a spec names: judged, failed with its reason, or not evaluated.

    ``early`` (run key -> check -> its sequence): on a run stopped early, the check is its paired-difference
    sequence's decision, which holds at every n, rather than a fixed-n interval over the instances before the stop.
    """
    early = early or {}
    verdicts: list[RegressionVerdict] = []
    checked: set[str] = set()  # the metrics some verdict is about
    used: set[RegressionSpec] = set()

    def add(label: str | None, spec: RegressionSpec, status: str, message: str, row: ComparedMetric | None = None) -> None:
        checked.add(spec.metric)
        used.add(spec)
        name = spec.metric if label is None else f"{label}:{spec.metric}"
        text = f"regression {name} (margin {spec.margin:g}): {message}"
        verdicts.append(RegressionVerdict(f"{PREFIX}[{name}]", label or "", spec.metric, spec.margin, status, text, row))

    for scenario in comparison["scenarios"]:
        label = scenario["label"]
        for row in scenario["metrics"]:
            spec = _spec_for(specs, scenario["scenario"], row["metric"])
            if spec is None or row["perturbation"] is not None:
                continue
            if row["missing"] == "this run":
                add(label, spec, "failed", f"this run recorded no {spec.metric}, the baseline did; it cannot be checked")
            elif row["missing"] == "baseline":
                add(label, spec, "skipped", f"not evaluated: the baseline has no {spec.metric} for this scenario")
            elif row["missing"] is not None:
                add(label, spec, "failed", "no instance scored on both sides matches up (see the comparison's added/removed ids)")
            elif (sequence := early.get(scenario["key"], {}).get(spec.text)) is not None:
                status, message = _sequential(sequence, spec)
                add(label, spec, status, f"{describe(row)}; {message}", row)
            elif _regressed(row, spec.margin):
                add(label, spec, "failed", f"{describe(row)}; dropped by more than {spec.margin:g} with confidence", row)
            else:
                add(label, spec, "passed", f"{describe(row)}; no drop beyond {spec.margin:g} with confidence", row)
    lacking = "is not in the baseline"
    if comparison["baseline"]["complete"] is False:
        lacking += " (the baseline run did not complete; compare with a complete one)"
    for entries, reason in (
        (comparison["only_in_baseline"], "did not run in this run"),
        (comparison["only_in_this_run"], lacking),
    ):
        for entry in entries:
            for metric in entry["metrics"]:
                spec = _spec_for(specs, entry["scenario"], metric)
                if spec is None:
                    continue
                # A check that names its scenario was asked for by name: one that cannot be judged fails, as a
                # command-line gate does; a check for every scenario skips the scenarios one side lacks.
                named = spec.scenario is not None
                add(
                    entry["scenario"],
                    spec,
                    "failed" if named else "skipped",
                    f"{'cannot be checked' if named else 'not evaluated'}: scenario {entry['scenario']!r} ({entry['key']}) {reason}",
                )
    for spec in specs:
        if spec in used or (spec.scenario is None and spec.metric in checked):
            continue
        where = f"scenario {spec.scenario!r}" if spec.scenario else "any scenario"
        add(spec.scenario, spec, "failed", f"neither this run nor the baseline recorded {spec.metric} for {where}")
    return verdicts


@dataclass(frozen=True)
class ComparisonPlan:
    """What the controller's reporter compares with (the loaded baseline) and the checks that can fail the run."""

    baseline: Baseline
    specs: tuple[RegressionSpec, ...]

    def run(
        self, runs: Sequence[RunResults], early: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None
    ) -> tuple[Comparison, list[RegressionVerdict]]:
        """The comparison (report.json's ``comparison``, verdicts included) and each check's verdict. ``early``: per
        run that stopped early, each check's paired-difference sequence, which decides that check there."""
        comparison = compare([side_of(run) for run in runs], self.baseline)
        verdicts = judge(comparison, self.specs, early or {})
        comparison["regressions"] = [verdict.to_dict() for verdict in verdicts]
        return comparison, verdicts

    def paired_checks(self, info: RunInfo) -> tuple[list[PairedCheck], list[str]]:
        """The regression checks on a run that may stop early, each as a paired-difference sequence decides it, and
        one line for each that cannot stop it (a metric without finite bounds, a run the baseline does not have)."""
        checks, held = [], []
        base = _baseline_side(self.baseline, info)
        for metric in dict.fromkeys(spec.metric for spec in self.specs):
            spec = _spec_for(self.specs, info.scenario, metric)
            if spec is None or metric not in info.metrics:
                continue
            found = registry.find(metric)
            if found is None or not (math.isfinite(found.bounds[0]) and math.isfinite(found.bounds[1])):
                held.append(f"regression check {spec.text}: {metric!r} has no finite bounds, so the run is compared in full")
            elif base is None:
                held.append(f"regression check {spec.text}: the baseline has no run to pair with {info.key}")
            else:
                scores = {
                    entry.instance_id: entry.scores[metric]
                    for entry in base.entries.values()
                    if entry.perturbation is None and metric in entry.scores
                }
                low, high = found.bounds
                checks.append(PairedCheck(spec.text, metric, spec.margin, found.direction, low, high, scores))
        return checks, held

    def not_evaluated(self, reason: str) -> NotCompared:
        """The comparison's entry in the report of a run that ended early: nothing paired, no check judged."""
        return {"baseline": self.baseline.describe(), "not_evaluated": reason, "regressions": []}


def _baseline_side(baseline: Baseline, info: RunInfo) -> Side | None:
    """The baseline's run this run is compared with: the same key, else the only one of its scenario."""
    same = [side for side in baseline.runs if side.key == info.key]
    named = [side for side in baseline.runs if side.scenario == info.scenario]
    return same[0] if same else named[0] if len(named) == 1 else None


def comparison_plan(baseline: Path | None, specs: Sequence[RegressionSpec]) -> ComparisonPlan | None:
    """The baseline read and checked at configure time (a UserError when it cannot be used), or None without one."""
    if baseline is None:
        return None
    return ComparisonPlan(load_baseline(baseline), tuple(specs))


__all__ = ["ComparisonPlan", "RegressionVerdict", "comparison_plan", "direction_of"]
