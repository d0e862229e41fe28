"""The end-of-run summary: per worker what it computed, per scenario each metric family with value and 95% interval."""

from __future__ import annotations

import math

from ..metrics.base import FAMILIES
from .aggregate import Results
from .records import WorkerSummary


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"


def worker_line(worker: WorkerSummary) -> str:
    return (
        f"{worker.worker}: device {worker.device or '-'}, model load {worker.load_seconds:.1f} s, "
        f"peak RSS {worker.peak_rss_mib} MiB"
        + (f", peak GPU {worker.peak_gpu_mib} MiB" if worker.peak_gpu_mib else "")
        + f", {worker.requests_computed} requests computed, {worker.cache_hits} from cache"
    )


def summary_lines(results: Results) -> list[str]:
    """Worker lines, then a block per run: ``family  metric  value  [low, high]``, families in HELM's order."""
    lines = [worker_line(worker) for _, worker in sorted(results.workers.items())]
    if len(results.workers) > 1 and (total := results.batch_seconds()).count:
        lines.append(
            f"all workers: {total.count} batches, {total.mean:.3f} s per batch on average "
            f"(min {total.min:.3f}, max {total.max:.3f})"
        )
    for run in results.runs:
        metrics = run.metrics()
        adapter = run.info.adapter.get("method", "?")
        outcomes = ", ".join(f"{count} {outcome}" for outcome, count in run.outcomes().items())
        lines.append(f"{run.scenario} ({adapter}, {run.info.source}; {outcomes})")
        rows = []
        for family in FAMILIES:
            names = sorted(name for name, result in metrics.items() if result.family == family)
            for k, name in enumerate(names):
                result = metrics[name]
                arrow = {"higher": "↑", "lower": "↓"}.get(
                    result.direction, "→" + _number(0.5 if result.optimum is None else result.optimum)
                )
                rows.append(
                    [
                        family if k == 0 else "",
                        f"{name} {arrow}",
                        _number(result.value),
                        f"[{_number(result.low)}, {_number(result.high)}]",
                        f"n={result.n}",
                    ]
                )
        widths = [max((len(row[c]) for row in rows), default=0) for c in range(5)]
        for row in rows:
            lines.append(
                "  "
                + "  ".join(
                    cell.rjust(width) if c in (2, 3) else cell.ljust(width) for c, (cell, width) in enumerate(zip(row, widths))
                ).rstrip()
            )
        for breakdown in run.groups():
            groups = breakdown["groups"]
            worst = min(groups, key=lambda g: groups[g]["mean"])
            best = max(groups, key=lambda g: groups[g]["mean"])
            lines.append(
                f"  groups   {breakdown['metric']}: worst {worst} {groups[worst]['mean']:.3f}, "
                f"best {best} {groups[best]['mean']:.3f}, gap {breakdown['gap']:.3f}"
            )
        lines.extend(f"  skipped  {reason}" for reason in run.skipped())
    lines.append("(value [95% bootstrap interval]; ↑ higher is better, ↓ lower is better, →x best at x)")
    for result in results.gates:
        lines.append(f"gate {'PASSED' if result.passed else 'FAILED'}: {result.message}")
    return lines
