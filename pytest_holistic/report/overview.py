"""What the report page's first screen shows, read from report.json payloads: verdicts, one cell per scenario and
family, the largest perturbation drops, the worst groups and the calibration errors.

Numbers only, no markup (``html_overview`` draws them): each choice made here (which metric stands for a family,
what counts as a drop) is one a reader of the page has to trust, so it is made once and can be tested alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .payload import Gate, MetricResult, Report, Run

FAMILY_ORDER = ("accuracy", "calibration", "robustness", "fairness", "bias", "toxicity", "efficiency")
"""HELM's metric families, in the order its tables show them; the grid's columns."""
PREFERRED = {"calibration": ("ece_10_bin",), "toxicity": ("toxic_frac", "toxicity"), "efficiency": ("runtime_s", "throughput")}
"""A family's usual headline metric where the run's main metric does not name it (HELM's choices)."""
GATE_RANK = {"failed": 0, "not_evaluated": 1, "passed": 2}
"""Verdicts in the order a reader needs them: what failed first."""
SHARES = ("accuracy", "calibration", "robustness", "fairness", "bias", "toxicity")
"""Families whose metrics are shares (0 to 1), so a value can be shaded on a fixed scale; efficiency's are not."""
BOUNDED_LOWER = ("calibration", "toxicity")
"""Families whose lower-is-better metrics are bounded shares too (a calibration error, a toxic fraction)."""
TOP = 8
"""Rows in each "where it breaks" list: enough to see a pattern, few enough for one screen."""


class LabelledRun(Protocol):
    """One model's run of a scenario (``html_report.RunColumn`` is one)."""

    @property
    def label(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def run(self) -> Run: ...


@dataclass(frozen=True, slots=True)
class ScenarioRuns:
    """A scenario, the anchor of its section on the page, and its runs (one per model, or per split)."""

    name: str
    anchor: str
    runs: Sequence[LabelledRun]


def number(value: Any) -> float | None:
    """A finite float, or None (missing, text, NaN, a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _interval(result: MetricResult | Gate) -> tuple[float | None, float | None]:
    ci = result.get("ci95")
    return (number(ci[0]), number(ci[1])) if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None)


def goodness(value: float | None, direction: str, optimum: float | None) -> float | None:
    """The value as "more is better" (a lower-is-better value negated, a target one as minus its distance)."""
    if value is None:
        return None
    if direction == "higher":
        return value
    if direction == "lower":
        return -value
    if direction == "target" and optimum is not None:
        return -abs(value - optimum)
    return None


@dataclass(frozen=True, slots=True)
class Value:
    """One metric of one run: its value, 95% interval and count, and which way is better."""

    metric: str
    value: float | None
    low: float | None
    high: float | None
    n: int | None
    direction: str
    optimum: float | None
    family: str = ""

    @classmethod
    def of(cls, metric: str, result: MetricResult) -> Value:
        low, high = _interval(result)
        n = result.get("n")
        return cls(
            metric,
            number(result.get("value")),
            low,
            high,
            n if isinstance(n, int) and not isinstance(n, bool) else None,
            str(result.get("direction") or ""),
            number(result.get("optimum")),
            str(result.get("family") or ""),
        )

    @property
    def share(self) -> float | None:
        """Where the value sits on a fixed 0-1 "how good" scale, or None for a metric without one (seconds, tokens)."""
        value = self.value
        if value is None:
            return None
        if self.direction == "target" and self.optimum is not None and -1.0 <= value <= 1.0:
            return max(0.0, 1.0 - abs(value - self.optimum))
        if not 0.0 <= value <= 1.0 or self.family not in SHARES:
            return None
        if self.direction == "lower" and self.family not in BOUNDED_LOWER:
            return None  # perplexity, bits per byte, seconds: lower is better, but no bound says how good 0.4 is
        return value if self.direction == "higher" else 1.0 - value if self.direction == "lower" else None


def main_metric(run: Run) -> str | None:
    """The run's main metric, as the leaderboard takes it: the first it asked for, if it recorded it."""
    requested = run.get("requested_metrics") or []
    metrics = run.get("metrics") or {}
    return str(requested[0]) if requested and str(requested[0]) in metrics else None


def _gated(run: Run, gates: Sequence[Gate]) -> list[str]:
    return [str(gate.get("metric")) for gate in gates if gate.get("run") == run.get("key")]


def family_metric(run: Run, family: str, gates: Sequence[Gate] = ()) -> str | None:
    """The metric that stands for ``family`` in this run: one a gate judged, the main metric (or its robustness or
    fairness twin), the family's usual headline, then what the run asked for, then any other of the family."""
    metrics: Mapping[str, MetricResult] = run.get("metrics") or {}
    main = main_metric(run)
    candidates = [
        *_gated(run, gates),
        *([main, f"{family}.{main}"] if main else []),
        *PREFERRED.get(family, ()),
        *(str(name) for name in run.get("requested_metrics") or ()),
        *(name for name in metrics if ".delta." not in name),
    ]
    found = [name for name in candidates if (metrics.get(name) or {}).get("family") == family]
    with_value = [name for name in found if number(metrics[name].get("value")) is not None]
    return next(iter(with_value or found), None)


def gate_status(gate: Gate) -> str:
    """passed, failed or not_evaluated; anything else reads as failed (never as passed)."""
    status = gate.get("status") or ("passed" if gate.get("passed") else "failed")
    return status if status in GATE_RANK else "failed"


@dataclass(frozen=True, slots=True)
class Cell:
    """One model's value in a grid cell, and the verdict of the gate on it (None: no gate)."""

    label: str
    index: int
    value: Value
    gate: str | None


def grid(scenarios: Sequence[ScenarioRuns], reports: Sequence[Report]) -> tuple[list[str], list[list[list[Cell]]]]:
    """The families any run has, and per scenario per family the cells (one per run that has the family)."""
    rows: list[list[list[Cell]]] = []
    present: set[str] = set()
    for scenario in scenarios:
        row: list[list[Cell]] = []
        for family in FAMILY_ORDER:
            cells = []
            for labelled in scenario.runs:
                gates = [gate for gate in reports[labelled.index].get("gates") or () if isinstance(gate, Mapping)]
                name = family_metric(labelled.run, family, gates)
                if name is None:
                    continue
                on_it = [gate_status(g) for g in gates if g.get("run") == labelled.run.get("key") and g.get("metric") == name]
                verdict = min(on_it, key=GATE_RANK.__getitem__) if on_it else None
                cells.append(Cell(labelled.label, labelled.index, Value.of(name, labelled.run["metrics"][name]), verdict))
                present.add(family)
            row.append(cells)
        rows.append(row)
    keep = [k for k, family in enumerate(FAMILY_ORDER) if family in present]
    return [FAMILY_ORDER[k] for k in keep], [[row[k] for k in keep] for row in rows]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A gate's verdict as the first screen lists it."""

    status: str
    gate: str
    label: str
    anchor: str | None
    scenario: str
    observed: float | None
    low: float | None
    high: float | None
    n: str
    threshold: str
    message: str


def verdicts(reports: Sequence[Report], names: Sequence[str], scenarios: Sequence[ScenarioRuns]) -> list[Verdict]:
    """Every gate of every report, failed first; a gate decided early says on how many of the run's items."""
    anchors: dict[tuple[int, str | None], str] = {
        (labelled.index, labelled.run["key"]): scenario.anchor for scenario in scenarios for labelled in scenario.runs
    }
    found = []
    for index, (name, report) in enumerate(zip(names, reports, strict=True)):
        for gate in report.get("gates") or ():
            if not isinstance(gate, Mapping):
                continue
            low, high = _interval(gate)
            sequence = gate.get("sequence")
            n = f"{gate.get('n')}" if gate.get("n") is not None else "—"
            if isinstance(sequence, Mapping) and sequence.get("of") is not None:
                n = f"{sequence.get('n')} of {sequence.get('of')}"
            threshold = number(gate.get("threshold"))
            found.append(
                Verdict(
                    gate_status(gate),
                    str(gate.get("gate") or gate.get("metric") or ""),
                    name,
                    anchors.get((index, gate.get("run"))),
                    str(gate.get("scenario") or ""),
                    number(gate.get("observed")),
                    low,
                    high,
                    n,
                    f"{gate.get('op') or ''} {threshold:g}" if threshold is not None else "—",
                    str(gate.get("message") or ""),
                )
            )
    return sorted(found, key=lambda verdict: GATE_RANK[verdict.status])


@dataclass(frozen=True, slots=True)
class Drop:
    """A perturbation's effect on one metric of one run: before, after, the worst case and how many answers flipped."""

    scenario: str
    anchor: str
    label: str
    index: int
    perturbation: str
    family: str
    metric: str
    before: Value
    after: Value
    worst: float | None
    flipped: int | None
    changed: int | None

    @property
    def loss(self) -> float:
        """How much worse the metric got (in its own units, whichever way is better); 0 when unknown."""
        before = goodness(self.before.value, self.before.direction, self.before.optimum)
        after = goodness(self.after.value, self.after.direction, self.after.optimum)
        return before - after if before is not None and after is not None else 0.0


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def drops(scenarios: Sequence[ScenarioRuns], top: int = TOP) -> list[Drop]:
    """The perturbations that cost most on each run's main metric, largest loss first (only those that cost something)."""
    found = []
    for scenario in scenarios:
        for labelled in scenario.runs:
            main = main_metric(labelled.run)
            for preset, entry in (labelled.run.get("perturbations") or {}).items():
                table = entry.get("metrics") or {}
                metric = main if main in table else next(iter(table), None)
                if metric is None:
                    continue
                stats = table[metric]
                drop = Drop(
                    scenario.name,
                    scenario.anchor,
                    labelled.label,
                    labelled.index,
                    str(preset),
                    str(entry.get("family") or "perturbation"),
                    str(metric),
                    Value.of(str(metric), stats.get("before") or {}),
                    Value.of(str(metric), stats.get("after") or {}),
                    number((stats.get("worst") or {}).get("value")),
                    _count(entry.get("flipped")),
                    _count(entry.get("changed")),
                )
                if drop.loss > 0:
                    found.append(drop)
    return sorted(found, key=lambda drop: -drop.loss)[:top]


@dataclass(frozen=True, slots=True)
class WorstGroup:
    """A run's weakest group on one metric, against its best."""

    scenario: str
    anchor: str
    label: str
    metric: str
    worst: str
    worst_mean: float | None
    worst_n: int | None
    best: str
    best_mean: float | None
    gap: float


def worst_groups(scenarios: Sequence[ScenarioRuns], top: int = TOP) -> list[WorstGroup]:
    """Per run, the group entry of its main metric (else every entry), widest gap between groups first."""
    found = []
    for scenario in scenarios:
        for labelled in scenario.runs:
            entries = [entry for entry in labelled.run.get("groups") or () if isinstance(entry, Mapping)]
            main = [entry for entry in entries if entry.get("metric") == main_metric(labelled.run)]
            for entry in main or entries:
                groups = entry.get("groups") or {}
                worst, best, gap = str(entry.get("worst")), str(entry.get("best")), number(entry.get("gap"))
                if gap is None or worst not in groups:
                    continue
                found.append(
                    WorstGroup(
                        scenario.name,
                        scenario.anchor,
                        labelled.label,
                        str(entry.get("metric")),
                        worst,
                        number(groups[worst].get("mean")),
                        _count(groups[worst].get("n")),
                        best,
                        number((groups.get(best) or {}).get("mean")),
                        gap,
                    )
                )
    return sorted(found, key=lambda group: -group.gap)[:top]


@dataclass(frozen=True, slots=True)
class Calibration:
    """A run's expected calibration error (HELM's ten equal-mass bins)."""

    scenario: str
    anchor: str
    label: str
    ece: Value


def calibration(scenarios: Sequence[ScenarioRuns]) -> list[Calibration]:
    """ECE per run where it was computed, the worst calibrated first."""
    found = [
        Calibration(scenario.name, scenario.anchor, labelled.label, Value.of("ece_10_bin", labelled.run["metrics"]["ece_10_bin"]))
        for scenario in scenarios
        for labelled in scenario.runs
        if isinstance((labelled.run.get("metrics") or {}).get("ece_10_bin"), Mapping)
    ]
    return sorted(found, key=lambda row: -(row.ece.value if row.ece.value is not None else -math.inf))


def main_values(scenarios: Sequence[ScenarioRuns]) -> list[tuple[ScenarioRuns, LabelledRun, Value]]:
    """Each run's main metric, largest first (as the chart's dots lie; missing values last)."""
    found = [
        (scenario, labelled, Value.of(main, labelled.run["metrics"][main]))
        for scenario in scenarios
        for labelled in scenario.runs
        if (main := main_metric(labelled.run)) is not None
    ]
    return sorted(found, key=lambda item: -(item[2].value if item[2].value is not None else -math.inf))


def shared_notes(notes: Mapping[str, Sequence[str]]) -> tuple[list[tuple[str, list[str]]], dict[str, list[str]]]:
    """Notes said of several scenarios, once each with the scenarios they apply to; the rest, per scenario."""
    where: dict[str, list[str]] = {}
    for scenario, lines in notes.items():
        for line in dict.fromkeys(lines):
            where.setdefault(line, []).append(scenario)
    shared = [(line, scenarios) for line, scenarios in where.items() if len(scenarios) > 1]
    alone = {scenario: [line for line in dict.fromkeys(lines) if len(where[line]) == 1] for scenario, lines in notes.items()}
    return shared, alone
