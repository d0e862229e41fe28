"""Per-item records and their aggregation into per-run metrics.

Records are plain builtin types so they ride on pytest's TestReport across xdist. Aggregation sorts
records by node id first, so the numbers do not depend on the order workers finished in.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .. import metrics as metric_registry
from ..metrics.stats import Stat


@dataclass
class RunResult:
    """Aggregate of one run (test function × scenario): metrics over its answered instances."""

    key: str
    info: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def scenario(self) -> str:
        return str(self.info.get("scenario", self.key))

    def sorted_records(self) -> list[dict[str, Any]]:
        return sorted(self.records, key=lambda record: record["nodeid"])

    def stats(self) -> dict[str, Stat]:
        values: dict[str, list[float]] = {}
        for record in self.sorted_records():
            for name, value in record.get("scores", {}).items():
                if value is not None and not math.isnan(value):
                    values.setdefault(name, []).append(float(value))
        return {name: Stat.of(series) for name, series in sorted(values.items())}

    def outcomes(self) -> dict[str, int]:
        return dict(sorted(Counter(record["outcome"] for record in self.records).items()))


def bounds_of(metric: str) -> tuple[float, float] | None:
    info = metric_registry.BUILTIN.get(metric)
    return info.bounds if info else None


class Collector:
    """Gathers records on the controller (the only process that writes reports)."""

    def __init__(self) -> None:
        self.runs: dict[str, RunResult] = {}
        self.model: dict[str, Any] | None = None

    def add(self, record: dict[str, Any]) -> None:
        run = record["run"]
        result = self.runs.setdefault(run["key"], RunResult(run["key"], run))
        result.records.append({key: value for key, value in record.items() if key not in ("run", "model")})
        if self.model is None and record.get("model"):
            self.model = record["model"]

    def __bool__(self) -> bool:
        return bool(self.runs)

    def ordered(self) -> list[RunResult]:
        return [self.runs[key] for key in sorted(self.runs)]
