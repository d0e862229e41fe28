"""``--holistic-baseline``: this run against a stored report.json, instance by instance.

Two runs of one model differ on a few instances by chance; comparing their two means with two separate
intervals throws away the pairing and calls real drops noise. So records are matched by (run, instance id,
variant label), and each scenario's per-instance scores are compared as paired differences
(this - baseline), with a paired bootstrap interval over the scenario's natural clusters, McNemar's exact
test for 0/1 scores, the smallest difference this many instances could detect, and a verdict. Formulas and
their sources: :mod:`pytest_holistic.metrics.paired`.

Runs are matched by key (test path and function), then, for the runs left over, by a scenario name that
is unique on both sides (the same suite run from another folder). Instances present on one side only,
runs present on one side only, and metrics recorded on one side only are listed, never dropped in
silence. Only per-instance scores are paired; scenario-level numbers such as ECE have no per-instance
values and stay in each report's own ``metrics``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from .. import metrics as registry
from ..errors import UserError
from ..metrics.paired import (
    PROPORTION_INTERVALS,
    clustered_stderr,
    mcnemar_exact,
    minimum_detectable_difference,
    paired_bootstrap,
)
from .labels import run_labels
from .payload import (
    BootstrapClusters,
    ComparedBaseline,
    ComparedMean,
    ComparedMetric,
    ComparedScenario,
    Comparison,
    McNemar,
    Run,
    UnpairedRun,
    read_payload,
)

if TYPE_CHECKING:
    from .aggregate import RunResults

RESAMPLES = 1000
SEED = 0
ALPHA = 0.05
POWER = 0.8
MIN_CLUSTERS = 10
"""Instance groups become bootstrap clusters only when there are at least this many: a handful of groups
(two difficulty levels, six subjects of a sample) are strata rather than clusters, and a bootstrap over so
few clusters is degenerate. Below it each instance (with its variants) is a cluster."""
SMALL_N = 300
"""Up to this many pairs, a 0/1 metric also gets Wilson, Clopper-Pearson and Jeffreys intervals per run
(Bowyer et al. 2025: the normal interval under-covers at a few hundred items or fewer)."""
VARIANTS = "*"
"""The perturbation label of the row that pools every variant of a run (each instance's variants one cluster)."""

METHODS = {
    "difference": (
        f"paired cluster bootstrap of the mean of (this - baseline), {RESAMPLES} resamples, seed {SEED}, "
        "95% percentile interval (Efron 1979; clusters resampled whole)"
    ),
    "clusters": (
        f"instance groups (e.g. MMLU subject) when a run has at least {MIN_CLUSTERS} of them, else each instance; "
        "an instance's variants are always in one cluster"
    ),
    "mde": (
        "minimum detectable difference at 80% power, alpha 0.05: (z_0.975 + z_0.8) x the cluster-robust standard "
        "error of the mean difference (Miller 2024, Adding Error Bars to Evals, sections 2.2 and 5)"
    ),
    "mcnemar": "McNemar's exact test: two-sided binomial test of the discordant pairs (0/1 metrics only)",
    "verdict": (
        "better / worse when the 95% interval excludes 0 (and, for 0/1 metrics, McNemar p < 0.05), "
        "in the metric's direction; else statistically tied"
    ),
    "wilson": "Wilson score interval (Wilson 1927)",
    "clopper_pearson": "exact Clopper-Pearson interval (Clopper & Pearson 1934)",
    "jeffreys": "Beta-Binomial posterior with the Jeffreys prior Beta(1/2, 1/2), equal-tailed 95% credible interval",
}


@dataclass(frozen=True)
class Entry:
    """One record as the comparison sees it, from either side."""

    instance_id: str
    perturbation: str | None
    group: str | None
    scores: Mapping[str, float]

    @property
    def label(self) -> str:
        return self.instance_id if self.perturbation is None else f"{self.instance_id}~{self.perturbation}"


Key = tuple[str, str]  # (instance id, variant label or "")


@dataclass(frozen=True)
class Side:
    """One run of either report: its key, its scenario and its records by (instance id, variant)."""

    key: str
    scenario: str
    entries: Mapping[Key, Entry]
    directions: Mapping[str, str]


@dataclass(frozen=True)
class Baseline:
    """A stored report.json, read and checked once, at configure time."""

    path: Path
    run_id: str
    model: str
    created: str | None
    runs: tuple[Side, ...]
    complete: bool | None = None  # False: the stored run was interrupted or lost a worker

    def describe(self) -> ComparedBaseline:
        return {
            "path": str(self.path),
            "run_id": self.run_id,
            "model": self.model,
            "created": self.created,
            "complete": self.complete,
        }


def _finite_scores(scores: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for name, value in scores.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[str(name)] = float(value)
    return out


MCNEMAR_FEWEST = 6
"""The fewest discordant pairs, all one way, for which McNemar's exact test reaches p < 0.05 (2 / 2**6 = 0.031)."""


def metric_range(metric: str, binary: bool) -> float | None:
    """How far apart two values of ``metric`` can be: its registered bounds, 1 for an unregistered 0/1 score, else unknown."""
    info = registry.find(metric)
    if info is not None:
        span = info.bounds[1] - info.bounds[0]
        return span if math.isfinite(span) else None
    return 1.0 if binary else None


def _mde(stderr: float, binary: bool, n: int, span: float | None) -> tuple[float | None, str | None]:
    """The minimum detectable difference, and why there is none when there is none.

    When no pair differed (SE 0) the formula gives 0, which claims too much: for 0/1 scores a difference needs at
    least ``MCNEMAR_FEWEST`` discordant pairs to be significant, so it is never below ``MCNEMAR_FEWEST / n``; for
    other scores with no spread at all there is nothing to estimate it from. A difference larger than the metric's
    range cannot happen, so an MDE beyond it means that no difference is detectable with this many pairs.
    """
    formula = minimum_detectable_difference(stderr, ALPHA, POWER) if math.isfinite(stderr) else 0.0
    mde: float | None
    if binary:
        mde = max(formula, MCNEMAR_FEWEST / n) if n else None
    else:
        mde = formula if stderr > 0 else None
    if mde is not None and span is not None and mde > span:
        return None, f"not detectable at n={n}: the smallest detectable difference exceeds the metric's range ({span:g})"
    return mde, None


def _side(key: str, scenario: str, entries: Iterable[Entry], directions: Mapping[str, str]) -> Side:
    table = {(entry.instance_id, entry.perturbation or ""): entry for entry in entries}
    return Side(key, scenario, table, dict(directions))


def side_of(run: RunResults) -> Side:
    """This run's records (those pytest did not skip), as the comparison reads them."""
    entries = (
        Entry(record.instance_id, record.perturbation, record.instance.group, _finite_scores(record.scores))
        for record in run.records
        if record.outcome != "skipped"
    )
    return _side(run.key, run.scenario, entries, {})


def load_baseline(path: Path) -> Baseline:
    """Read a report.json (or the folder holding one); a missing, unreadable or foreign file is a UserError."""
    flag = f"--holistic-baseline {path}"
    fix = "pass the report.json of an earlier run (reports/<model>/latest/report.json)"
    data = read_payload(path, fix, flag)
    try:
        runs = tuple(_stored_run(run) for run in data["runs"])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise UserError(f"{flag}: a run or instance record is malformed ({type(error).__name__}: {error}); {fix}") from None
    stored = data.get("model")
    model = stored if isinstance(stored, dict) else {}
    complete = data.get("complete") if isinstance(data.get("complete"), bool) else None
    return Baseline(path, str(data.get("run_id") or ""), str(model.get("name") or "?"), data.get("created"), runs, complete)


def _stored_run(run: Run) -> Side:
    if not isinstance(run.get("instances"), list):
        raise TypeError(f"run {run.get('key')!r} has no instance records")
    entries = []
    for record in run["instances"]:
        if record.get("outcome") == "skipped":
            continue
        instance = record.get("instance") or {}
        group = instance.get("group")
        entries.append(
            Entry(
                str(record.get("instance_id", instance.get("id"))),
                record.get("perturbation"),
                None if group in (None, "") else str(group),
                _finite_scores(record.get("scores") or {}),
            )
        )
    directions = {
        str(name): str(result["direction"])
        for name, result in (run.get("metrics") or {}).items()
        if isinstance(result, dict) and result.get("direction") in ("higher", "lower", "target")
    }
    return _side(str(run["key"]), str(run["scenario"]), entries, directions)


def pair_runs(this: Sequence[Side], base: Sequence[Side]) -> tuple[list[tuple[Side, Side, str]], list[Side], list[Side]]:
    """Runs matched by key, then by a scenario name unique on both sides; and the runs of each side left over."""
    by_key = {side.key: side for side in base}
    pairs = [(side, by_key[side.key], "key") for side in this if side.key in by_key]
    taken = {side.key for side, _, _ in pairs}
    left_this = [side for side in this if side.key not in taken]
    left_base = [side for side in base if side.key not in taken]
    for side in list(left_this):
        mine = [other for other in left_this if other.scenario == side.scenario]
        theirs = [other for other in left_base if other.scenario == side.scenario]
        if len(mine) == 1 and len(theirs) == 1:
            pairs.append((side, theirs[0], "scenario"))
            left_this.remove(side)
            left_base.remove(theirs[0])
    pairs.sort(key=lambda pair: pair[0].key)
    return pairs, left_this, left_base


def direction_of(metric: str, *sides: Side) -> str:
    """Which way is better: the registry's word, else what a stored report said, else higher (a recorded score)."""
    info = registry.find(metric)
    if info is not None:
        return info.direction
    return next((side.directions[metric] for side in sides if metric in side.directions), "higher")


def _clusters(pairs: Sequence[tuple[Entry, Entry]]) -> tuple[list[Hashable], str]:
    """Cluster labels for the pairs: their groups when there are enough of them, else their instance ids."""
    groups = [this.group if this.group is not None else base.group for this, base in pairs]
    if len({group for group in groups if group is not None}) >= MIN_CLUSTERS:
        return [("group", g) if g is not None else ("instance", t.instance_id) for g, (t, _) in zip(groups, pairs)], "group"
    return [this.instance_id for this, _ in pairs], "instance"


def _verdict(low: float, high: float, direction: str, p_value: float | None) -> str:
    if math.isnan(low) or math.isnan(high) or (p_value is not None and p_value >= ALPHA):
        return "statistically tied"
    if low > 0 or high < 0:
        if direction == "target":
            return "different"
        return "better" if (low > 0) == (direction == "higher") else "worse"
    return "statistically tied"


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


class PairedDifference(TypedDict):
    """:func:`compare_metric`'s numbers: a compared row (``payload.ComparedMetric``) but its variant label and count unscored."""

    metric: str
    direction: str
    n: int
    this: ComparedMean
    baseline: ComparedMean
    difference: float
    ci95: list[float | None]
    interval_method: str
    clusters: BootstrapClusters
    stderr: float | None
    mde: float | None
    mde_note: str | None
    mcnemar: McNemar | None
    verdict: str
    missing: None


def compare_metric(metric: str, direction: str, pairs: Sequence[tuple[Entry, Entry]]) -> PairedDifference:
    """One metric on matched pairs that both have it: the paired difference, its interval, McNemar, MDE, verdict."""
    here = [this.scores[metric] for this, _ in pairs]
    there = [base.scores[metric] for _, base in pairs]
    differences = [a - b for a, b in zip(here, there, strict=True)]
    labels, clustered_by = _clusters(pairs)
    interval = paired_bootstrap(differences, labels, resamples=RESAMPLES, seed=SEED)
    stderr = clustered_stderr(differences, labels)
    binary = all(value in (0.0, 1.0) for value in (*here, *there))
    mcnemar: McNemar | None = None
    if binary:
        gained = sum(1 for a, b in zip(here, there, strict=True) if a > b)
        lost = sum(1 for a, b in zip(here, there, strict=True) if a < b)
        mcnemar = {"this_1_baseline_0": gained, "this_0_baseline_1": lost, "p_value": mcnemar_exact(gained, lost)}
    n = len(pairs)
    mde, mde_note = _mde(stderr, binary, n, metric_range(metric, binary))
    sides: dict[str, ComparedMean] = {}
    for name, values in (("this", here), ("baseline", there)):
        entry: ComparedMean = {"mean": _mean(values)}
        if binary and n <= SMALL_N:
            successes = int(sum(values))
            entry["intervals"] = {method: list(function(successes, n)) for method, function in PROPORTION_INTERVALS.items()}
        sides[name] = entry
    return {
        "metric": metric,
        "direction": direction,
        "n": n,
        "this": sides["this"],
        "baseline": sides["baseline"],
        "difference": interval.mean,
        "ci95": [interval.low, interval.high],
        "interval_method": f"paired cluster bootstrap, {RESAMPLES} resamples, seed {SEED}, 95% percentile",
        "clusters": {"by": clustered_by, "count": interval.clusters},
        "stderr": stderr,
        "mde": mde,
        "mde_note": mde_note,
        "mcnemar": mcnemar,
        "verdict": _verdict(interval.low, interval.high, direction, None if mcnemar is None else mcnemar["p_value"]),
        "missing": None,
    }


def _rows(this: Side, base: Side, label: str | None, keys: Sequence[Key]) -> list[ComparedMetric]:
    """Every per-instance metric of one variant label (None: the originals; ``*``: all variants) on matched keys."""

    def chosen(side: Side) -> list[Entry]:
        entries = side.entries.values()
        if label == VARIANTS:
            return [entry for entry in entries if entry.perturbation is not None]
        return [entry for entry in entries if entry.perturbation == label]

    here_names = {name for entry in chosen(this) for name in entry.scores}
    there_names = {name for entry in chosen(base) for name in entry.scores}
    matched = [
        (this.entries[key], base.entries[key])
        for key in keys
        if (this.entries[key].perturbation is not None if label == VARIANTS else this.entries[key].perturbation == label)
    ]
    rows: list[ComparedMetric] = []
    for metric in sorted(here_names | there_names):
        direction = direction_of(metric, base, this)
        if metric not in here_names or metric not in there_names:
            missing = "this run" if metric not in here_names else "baseline"
            rows.append({"metric": metric, "perturbation": label, "direction": direction, "n": 0, "missing": missing})
            continue
        pairs = [(a, b) for a, b in matched if metric in a.scores and metric in b.scores]
        unscored = len(matched) - len(pairs)
        if not pairs:
            rows.append({"metric": metric, "perturbation": label, "direction": direction, "n": 0, "missing": "matched instances"})
            continue
        rows.append({**compare_metric(metric, direction, pairs), "perturbation": label, "unscored": unscored})
    return rows


def _order(key: Key) -> tuple[str, bool, str]:
    return (key[0], key[1] != "", key[1])


def compare_pair(this: Side, base: Side, matched_by: str, label: str) -> ComparedScenario:
    """One scenario on both sides: which instances match up, and a row per (variant label, metric)."""
    keys = sorted(set(this.entries) & set(base.entries), key=_order)
    added = [this.entries[key].label for key in sorted(set(this.entries) - set(base.entries), key=_order)]
    removed = [base.entries[key].label for key in sorted(set(base.entries) - set(this.entries), key=_order)]
    labels = sorted({entry.perturbation for entry in this.entries.values() if entry.perturbation is not None})
    rows = _rows(this, base, None, keys)
    for variant in labels:
        rows += _rows(this, base, variant, keys)
    if len(labels) > 1:
        rows += _rows(this, base, VARIANTS, keys)
    return {
        "label": label,
        "scenario": this.scenario,
        "key": this.key,
        "baseline_key": base.key,
        "matched_by": matched_by,
        "instances": {
            "matched": len(keys),
            "added_count": len(added),
            "removed_count": len(removed),
            "added": added,
            "removed": removed,
        },
        "metrics": rows,
    }


def compare(this: Sequence[Side], baseline: Baseline) -> Comparison:
    """The whole comparison as plain data (report.json's ``comparison``, without the regression verdicts)."""
    pairs, only_this, only_base = pair_runs(this, baseline.runs)
    labels = run_labels((side.key, side.scenario) for side in this)  # the names gate lines and the page use
    scenarios = [compare_pair(side, base, how, labels.of(side.key, side.scenario)) for side, base, how in pairs]
    return {
        "baseline": baseline.describe(),
        "methods": dict(METHODS),
        "scenarios": scenarios,
        "only_in_this_run": [_alone(side) for side in only_this],
        "only_in_baseline": [_alone(side) for side in only_base],
    }


def _alone(side: Side) -> UnpairedRun:
    """A run found on one side only: what it is, and the per-instance scores its originals recorded."""
    names = sorted({name for entry in side.entries.values() if entry.perturbation is None for name in entry.scores})
    return {"scenario": side.scenario, "key": side.key, "instances": len(side.entries), "metrics": names}
