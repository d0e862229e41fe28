"""The compact scenario × metric table printed at the end of a run."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..gates import GateResult
from .records import Collector


def _cell(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def summary_lines(collector: Collector, gates: Sequence[GateResult]) -> list[str]:
    """Rows are runs, columns the union of their metrics (mean, with the interval's half-width)."""
    runs = collector.ordered()
    metric_names = sorted({name for run in runs for name in run.stats()})
    header = ["scenario", "adapter", "n", *metric_names]
    rows = []
    for run in runs:
        stats = run.stats()
        cells = []
        for name in metric_names:
            stat = stats.get(name)
            if stat is None:
                cells.append("")
                continue
            low, high = stat.interval()
            cells.append(f"{_cell(stat.mean)}±{(high - low) / 2:.2f}" if stat.count > 1 else _cell(stat.mean))
        adapter = run.info.get("adapter", {}).get("method", "?")
        rows.append([run.scenario, adapter, str(len(run.records)), *cells])
    widths = [max(len(row[k]) for row in [header, *rows]) for k in range(len(header))]
    lines = ["  ".join(cell.ljust(width) if k < 2 else cell.rjust(width) for k, (cell, width) in enumerate(zip(row, widths))) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.append("(mean ± half-width of the 95% interval)")
    for result in gates:
        lines.append(f"gate {'PASSED' if result.passed else 'FAILED'}: {result.message}")
    return lines
