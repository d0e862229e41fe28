"""Per-item records and their aggregation into per-run metrics.

Records are plain builtin types so they ride on pytest's TestReport across xdist. Aggregation sorts
records by node id first, so the numbers do not depend on the order workers finished in.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..gates import Observation
from .aggregate import MetricResult, group_breakdown, run_metrics


@dataclass
class RunResult:
    """Aggregate of one run (test function × scenario): metrics over its answered instances."""

    key: str
    info: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    _metrics: dict[str, MetricResult] | None = field(default=None, repr=False)

    @property
    def scenario(self) -> str:
        return str(self.info.get("scenario", self.key))

    def sorted_records(self) -> list[dict[str, Any]]:
        return sorted(self.records, key=lambda record: record["nodeid"])

    def metric_results(self) -> dict[str, MetricResult]:
        """Every scenario-level number with its bootstrap interval (computed once)."""
        if self._metrics is None:
            self._metrics = run_metrics(self.records, self.info.get("metrics", []))
        return self._metrics

    def observations(self) -> dict[str, Observation]:
        """Every metric of the run as gates see it: value, 95% interval, n and direction."""
        return {name: result.observation() for name, result in self.metric_results().items()}

    def groups(self) -> list[dict[str, Any]]:
        """Per-group breakdowns (HELM performance disparities) of the run's instance-level metrics."""
        declared = set(self.info.get("metrics", [])) | {"toxicity"}
        names = [name for name, result in self.metric_results().items() if result.kind == "instance" and name in declared]
        return [breakdown for name in names if (breakdown := group_breakdown(self.sorted_records(), name)) is not None]

    def skipped(self) -> list[str]:
        return sorted({record["skipped"] for record in self.records if record.get("skipped")})

    def outcomes(self) -> dict[str, int]:
        return dict(sorted(Counter(record["outcome"] for record in self.records).items()))


class Collector:
    """Gathers records on the controller (the only process that writes reports)."""

    def __init__(self) -> None:
        self.runs: dict[str, RunResult] = {}
        self.model: dict[str, Any] | None = None

    def add(self, record: dict[str, Any]) -> None:
        run = record["run"]
        result = self.runs.setdefault(run["key"], RunResult(run["key"], run))
        if "toxicity_scorer" in run and "toxicity_scorer" not in result.info:
            result.info = {**result.info, "toxicity_scorer": run["toxicity_scorer"]}
        result._metrics = None
        result.records.append({key: value for key, value in record.items() if key not in ("run", "model")})
        if self.model is None and record.get("model"):
            self.model = record["model"]

    def __bool__(self) -> bool:
        return bool(self.runs)

    def ordered(self) -> list[RunResult]:
        return [self.runs[key] for key in sorted(self.runs)]
