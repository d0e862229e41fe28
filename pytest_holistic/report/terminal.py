"""The end-of-run summary: per scenario, each metric family with value and 95% interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..gates import GateResult
from .records import Collector

FAMILY_ORDER = ("accuracy", "calibration", "bias", "toxicity", "custom", "efficiency")


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"


def summary_lines(collector: Collector, gates: Sequence[GateResult]) -> list[str]:
    """A block per run: ``family  metric  value  [low, high]``, families in HELM's order."""
    lines: list[str] = []
    for run in collector.ordered():
        results = run.metric_results()
        adapter = run.info.get("adapter", {}).get("method", "?")
        outcomes = ", ".join(f"{count} {outcome}" for outcome, count in run.outcomes().items())
        lines.append(f"{run.scenario} ({adapter}, {run.info.get('source', 'local')}; {outcomes})")
        rows = []
        for family in FAMILY_ORDER:
            names = sorted(name for name, result in results.items() if result.family == family)
            for k, name in enumerate(names):
                result = results[name]
                arrow = {"higher": "↑", "lower": "↓"}.get(result.direction, "→" + _number(0.5 if result.optimum is None else result.optimum))
                rows.append(
                    [family if k == 0 else "", f"{name} {arrow}", _number(result.value), f"[{_number(result.low)}, {_number(result.high)}]", f"n={result.n}"]
                )
        widths = [max((len(row[c]) for row in rows), default=0) for c in range(5)]
        for row in rows:
            lines.append("  " + "  ".join(cell.rjust(width) if c in (2, 3) else cell.ljust(width) for c, (cell, width) in enumerate(zip(row, widths))).rstrip())
        for breakdown in run.groups():
            groups = breakdown["groups"]
            worst = min(groups, key=lambda g: groups[g]["mean"])
            best = max(groups, key=lambda g: groups[g]["mean"])
            lines.append(
                f"  groups   {breakdown['metric']}: worst {worst} {groups[worst]['mean']:.3f}, best {best} {groups[best]['mean']:.3f}, gap {breakdown['gap']:.3f}"
            )
        lines.extend(f"  skipped  {reason}" for reason in run.skipped())
    lines.append("(value [95% bootstrap interval]; ↑ higher is better, ↓ lower is better, →x best at x)")
    for result in gates:
        lines.append(f"gate {'PASSED' if result.passed else 'FAILED'}: {result.message}")
    return lines
