"""The controller's side of deciding gates early: each run's records fed to one confidence sequence per gate, in the
scenario's seeded order, whatever order they arrive in.

A gate can stop its run early only when its number is a mean of per-instance values with known bounds: a per-item
metric over the originals (``exact_match >= 0.6``) or a family's worst case per instance over the original and the
family's variants (``robustness.exact_match >= 0.5``, seeds digest §2.3). Population metrics (ECE, bias), gates on an
interval end (``.lower``, ``.worst``: they depend on the final n), ``abs(...)`` gates and one perturbation's numbers
(over the instances it changed, which are not known ahead) cannot, and a run with such a gate runs in full.

Records are held back until every record of the next instance in the seeded order is in (its original and each
variant of the family that was not dropped as identical), so the sequence sees the same values in the same order at
``-n 0`` and ``-n 4``: arrival order under xdist depends on timing, and timing can depend on the answer. The sequence
is the without-replacement one over the run's N selected instances (``metrics.confidence_sequence``), so its target
is the mean the full run would report. The reporter's ``early_stop.EarlyStop`` feeds one ``RunSequences`` per run
that may stop early and, once it is ``settled``, writes the stop into the session's table (``stops``) that every
process reads before computing an item; ``sequential_result`` is then the verdict of each gate.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import metrics as registry
from ..gates import GROUP_STATISTICS, Gate, GateResult
from ..metrics.base import Direction
from ..metrics.confidence_sequence import ConfidenceSequence, Decision, GroupSequences, Interval, decide
from ..records import ItemRecord, RunInfo
from .perturbed import labels_of, unchanged_by_instance, worst

METHOD = "betting confidence sequence (Waudby-Smith & Ramdas 2024), without replacement"
"""How a sequence decides, as the report names it (``metrics.confidence_sequence`` has the formula)."""
STOPPABLE_FAMILIES = ("robustness", "fairness")
"""Families whose worst case counts every instance (one whose variants were all dropped keeps its own score)."""


@dataclass(frozen=True)
class SequentialGate:
    """A gate in the form a sequence can decide: the per-instance metric, its bounds and direction, and the variant
    labels its worst case is taken over (none: the original's score); ``group``: a group number's statistic (gap,
    worst), decided by one sequence per instance group."""

    gate: Gate
    metric: str
    low: float
    high: float
    direction: Direction
    optimum: float | None
    labels: tuple[str, ...]
    group: str | None = None


class GroupGate:
    """A gate on a group number: one sequence per group (union bound over the k groups, each without replacement
    over its own instances); the gap's interval is their spread, the worst group's is the range of the worst mean."""

    def __init__(self, form: SequentialGate, populations: Mapping[str, int], level: float) -> None:
        self.form = form
        sizes: dict[Hashable, int] = {group: size for group, size in populations.items()}
        self.groups = GroupSequences(sorted(populations), form.low, form.high, level, sizes)
        self._sums = dict.fromkeys(populations, 0.0)
        self._counts = dict.fromkeys(populations, 0)

    def update(self, group: str, value: float) -> None:
        self.groups.update(group, value)
        self._sums[group] += value
        self._counts[group] += 1

    @property
    def interval(self) -> Interval:
        if self.form.group == "gap":
            return self.groups.spread
        intervals = [sequence.interval for sequence in self.groups.sequences.values()]
        pick = min if self.form.direction == "higher" else max
        return pick(low for low, _ in intervals), pick(high for _, high in intervals)

    def decide(self, op: str, threshold: float) -> Decision:
        return decide(self.interval, op, threshold)

    @property
    def value(self) -> float:
        """The number over the instances fed: the gap between the group means, or the worst group's mean."""
        means = [self._sums[group] / count for group, count in self._counts.items() if count]
        if len(means) < 2:
            return math.nan
        if self.form.group == "gap":
            return max(means) - min(means)
        return min(means) if self.form.direction == "higher" else max(means)


def sequential_form(gate: Gate, info: RunInfo) -> SequentialGate | str:
    """The gate as a sequence decides it on this run, or why it cannot stop the run early (one line)."""
    if gate.bound != "mean" or gate.target is not None:
        return f"gate {gate.expression}: a gate on an interval end or a distance depends on the final n"
    grouped = gate.metric_name.group
    if grouped is not None and grouped[0] in GROUP_STATISTICS:
        inner = Gate(gate.scenario, grouped[1], gate.op, gate.threshold, gate.origin)
        form = sequential_form(inner, info)
        if isinstance(form, str):
            return form.replace(f"gate {inner.expression}", f"gate {gate.expression}", 1)
        if form.direction == "target":
            return f"gate {gate.expression}: {grouped[1]!r} has an optimum, so its groups have no worst by one direction"
        return SequentialGate(gate, form.metric, form.low, form.high, form.direction, None, (), grouped[0])
    parsed = gate.metric_name.derived
    base = gate.metric
    labels: tuple[str, ...] = ()
    if parsed is not None:
        if parsed.prefix not in STOPPABLE_FAMILIES or parsed.statistic != "worst" or parsed.base is None:
            return f"gate {gate.expression}: only a family's worst case ({', '.join(STOPPABLE_FAMILIES)}) can stop early"
        base = parsed.base
        labels = tuple(label for d in info.perturbations if str(d["family"]) == parsed.prefix for label in labels_of(d))
        if not labels:
            return f"gate {gate.expression}: the run has no {parsed.prefix} variants"
    found = registry.BUILTIN.get(base)
    if found is None:
        kind = "a population metric" if base in registry.POPULATION else "not a per-instance metric of known bounds"
        return f"gate {gate.expression}: {base!r} is {kind}"
    low, high = found.bounds
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"gate {gate.expression}: {base!r} has no finite bounds"
    return SequentialGate(gate, base, low, high, found.direction, found.optimum, labels)


@dataclass(frozen=True)
class PairedCheck:
    """A regression check (``--holistic-fail-on-regression``) as a sequence decides it: the mean of this run's score
    minus the baseline's, per instance the baseline has, in [low − high, high − low]; the run regressed when that
    mean is past −margin (past +margin for a lower-is-better metric)."""

    text: str
    metric: str
    margin: float
    direction: Direction
    low: float
    high: float
    baseline: Mapping[str, float]  # instance id -> the baseline's score on the original

    @property
    def op(self) -> str:
        return "<=" if self.direction == "lower" else ">="

    @property
    def threshold(self) -> float:
        return self.margin if self.direction == "lower" else -self.margin


@dataclass(frozen=True)
class Settled:
    """Where a run was stopped: after ``n`` of ``population`` instances, each gate's decision and interval, and each
    regression check's on the instances paired with the baseline so far."""

    n: int
    population: int
    decisions: Mapping[str, tuple[Decision, Interval]]
    paired: Mapping[str, tuple[Decision, Interval, int]] = field(default_factory=dict)

    @property
    def early(self) -> bool:
        """Whether items were left: a run settled by its last instance stopped nothing, and is judged as a full run."""
        return self.n < self.population

    def message(self, expression: str) -> str:
        decision, (low, high) = self.decisions[expression]
        return f"gate `{expression}` {decision}: [{low:.2f}, {high:.2f}] after {self.n} of {self.population} items"

    def reason(self) -> str:
        """The skip reason of every item past the stop: each gate's decision, its bounds and the count."""
        checks = [
            f"regression check `{text}` {'holds' if decision == 'holds' else 'fails'}: paired difference "
            f"[{low:.2f}, {high:.2f}] after {self.n} of {self.population} items"
            for text, (decision, (low, high), _) in sorted(self.paired.items())
        ]
        return "; ".join([*(self.message(expression) for expression in sorted(self.decisions)), *checks])


class RunSequences:
    """One run's sequences, fed in the run's seeded instance order; ``settled`` once every gate is decided."""

    def __init__(
        self,
        info: RunInfo,
        gates: Sequence[Gate],
        order: Sequence[str],
        level: float = 0.95,
        held: Sequence[str] = (),
        paired: Sequence[PairedCheck] = (),
        groups: Mapping[str, str | None] | None = None,
    ) -> None:
        """``held``: other reasons the run must run in full, one line each; ``paired``: the regression checks on the
        run, which must be decided too before it stops; ``groups``: each instance's group, for group numbers."""
        self.order = tuple(order)
        self.level = level
        forms = [sequential_form(gate, info) for gate in gates]
        self.reasons = tuple(form for form in forms if isinstance(form, str)) + tuple(held)
        self.paired = {check.text: check for check in paired}
        self.paired_sequences: dict[str, ConfidenceSequence] = {}
        self._paired_counts = dict.fromkeys(self.paired, 0)
        for check in paired:
            matched = sum(1 for instance in self.order if instance in check.baseline)
            if not matched:
                self.reasons += (f"regression check {check.text}: no instance of this run is in the baseline",)
                continue
            width = check.high - check.low
            self.paired_sequences[check.text] = ConfidenceSequence(-width, width, level, matched)
        self.gates = {form.gate.expression: form for form in forms if isinstance(form, SequentialGate)}
        population = len(self.order)
        self.sequences = {
            expression: ConfidenceSequence(form.low, form.high, level, population)
            for expression, form in self.gates.items()
            if form.group is None
        }
        self._groups = {instance: str(group) for instance, group in (groups or {}).items() if group not in (None, "")}
        sizes: dict[str, int] = {}
        for instance in self.order:
            if instance in self._groups:
                sizes[self._groups[instance]] = sizes.get(self._groups[instance], 0) + 1
        self.grouped: dict[str, GroupGate] = {}
        for expression, form in self.gates.items():
            if form.group is None:
                continue
            if len(sizes) < 2:
                self.reasons += (f"gate {expression}: the run's instances are not in two groups or more",)
            else:
                self.grouped[expression] = GroupGate(form, sizes, level)
        self._unchanged = unchanged_by_instance(info)
        self._waiting: dict[str, dict[str | None, ItemRecord]] = defaultdict(dict)
        self._next = 0
        self._sums = dict.fromkeys(self.gates, 0.0)
        self.settled: Settled | None = None
        self.used: frozenset[str] = frozenset()  # a run stopped early: the instances before its stop, it is judged on
        self.broken: str | None = None  # why the run can no longer stop early (an item without a score)

    @property
    def can_stop(self) -> bool:
        return bool(self.gates) and not self.reasons and self.broken is None

    def add(self, record: ItemRecord) -> Settled | None:
        """Take one record (any order); feed every instance now complete at the head of the order. The settlement,
        once every gate is decided; later records change nothing."""
        self._waiting[record.instance.id][record.perturbation] = record
        while self.can_stop and self.settled is None and self._next < len(self.order):
            instance_id = self.order[self._next]
            values = self._values(instance_id)
            if values is None:
                break
            self._next += 1
            original = self._waiting.pop(instance_id)[None]  # _values found it
            decisions: dict[str, tuple[Decision, Interval]] = {}
            for expression, sequence in self.sequences.items():
                sequence.update(values[expression])
                self._sums[expression] += values[expression]
                gate = self.gates[expression].gate
                decisions[expression] = (sequence.decide(gate.op, gate.threshold), sequence.interval)
            group = self._groups.get(instance_id)
            for expression, grouped in self.grouped.items():
                if group is not None:  # an instance without a group is in no group number, as in the full run's
                    grouped.update(group, values[expression])
                gate = self.gates[expression].gate
                decisions[expression] = (grouped.decide(gate.op, gate.threshold), grouped.interval)
            paired = self._feed_paired(instance_id, original)
            if paired is None:
                break
            decided = [decision for decision, _ in decisions.values()] + [decision for decision, _, _ in paired.values()]
            if all(decision != "undecided" for decision in decided):
                self.settled = Settled(self._next, len(self.order), decisions, paired)
                if self.settled.early:
                    self.used = frozenset(self.order[: self._next])
        return self.settled

    def _feed_paired(self, instance_id: str, original: ItemRecord) -> dict[str, tuple[Decision, Interval, int]] | None:
        """Each regression check after this instance: its difference fed when the baseline has the instance."""
        decisions: dict[str, tuple[Decision, Interval, int]] = {}
        for text, sequence in self.paired_sequences.items():
            check = self.paired[text]
            base = check.baseline.get(instance_id)
            if base is not None:
                difference = original.scores.get(check.metric, math.nan) - base
                if not check.low - check.high <= difference <= check.high - check.low:  # NaN too
                    self.broken = f"instance {instance_id!r} has no {check.metric} score to pair, so the run cannot stop early"
                    return None
                sequence.update(difference)
                self._paired_counts[text] += 1
            decisions[text] = (sequence.decide(check.op, check.threshold), sequence.interval, self._paired_counts[text])
        return decisions

    def _values(self, instance_id: str) -> dict[str, float] | None:
        """Each gate's per-instance value, or None while a record of the instance is still out."""
        arrived = self._waiting.get(instance_id, {})
        original = arrived.get(None)
        if original is None:
            return None
        unusable = next((record for record in arrived.values() if record.outcome in ("skipped", "error")), None)
        if unusable is not None:  # the full run leaves it out of its numbers: the sequence cannot stand for them
            verb = "was skipped by the test" if unusable.outcome == "skipped" else "errored"
            self.broken = f"item {unusable.nodeid} {verb}, so the run cannot stop early"
            return None
        values: dict[str, float] = {}
        for expression, form in self.gates.items():
            missing = [label for label in form.labels if label not in arrived and label not in self._unchanged[instance_id]]
            if missing:
                return None
            scored = [original, *(arrived[label] for label in form.labels if label in arrived)]
            found = [record.scores.get(form.metric, math.nan) for record in scored]
            if any(math.isnan(value) for value in found):
                self.broken = f"instance {instance_id!r} has no {form.metric} score, so the run cannot stop early"
                return None
            values[expression] = worst(found, form.direction, form.optimum)
        return values

    @property
    def fed(self) -> int:
        """Instances the sequences have seen (in order)."""
        return self._next

    def mean(self, expression: str) -> float:
        """The gate's number over the instances fed: the mean of its per-instance values, or the group number."""
        if expression in self.grouped:
            return self.grouped[expression].value
        return self._sums[expression] / self._next if self._next else math.nan

    def _interval(self, expression: str) -> Interval:
        grouped = self.grouped.get(expression)
        return grouped.interval if grouped is not None else self.sequences[expression].interval

    def why_in_full(self) -> str | None:
        """Why the run was not stopped early (None when it was)."""
        if self.settled is not None and self.settled.early:
            return None
        if not self.gates and not self.reasons:
            return "no gate applies to this run"
        if self.reasons or self.broken is not None:
            return "; ".join([*self.reasons, *([self.broken] if self.broken is not None else [])])
        return f"a gate was still undecided after {self.fed} of {len(self.order)} instances"

    def gate_data(self, expression: str) -> dict[str, Any]:
        """One gate's sequence for the report: its interval and decision now, the count, the level and the method."""
        gate = self.gates[expression].gate
        low, high = self._interval(expression)
        return {
            "stopped": self.settled is not None and self.settled.early,
            "n": self.fed,
            "of": len(self.order),
            "ci": [low, high],
            "decision": decide((low, high), gate.op, gate.threshold),
            "level": self.level,
            "method": METHOD,
        }

    def summary(self) -> dict[str, Any]:
        """The run's ``early_stop`` entry in the report: whether and where it stopped, or why it ran in full."""
        stopped = self.settled is not None and self.settled.early
        return {
            "stopped": stopped,
            "n": self.fed,
            "of": len(self.order),
            "level": self.level,
            "method": METHOD,
            "reason": self.settled.reason() if stopped and self.settled is not None else self.why_in_full(),
            "gates": {expression: self.gate_data(expression) for expression in sorted(self.gates)},
        }

    def paired_data(self) -> dict[str, dict[str, Any]]:
        """Each regression check's sequence where the run stopped early (none when it did not stop)."""
        settled = self.settled
        if settled is None or not settled.early:
            return {}
        return {
            text: {"decision": decision, "ci": [low, high], "n": n, "of": settled.n, "population": settled.population,
                   "level": self.level, "method": METHOD}
            for text, (decision, (low, high), n) in settled.paired.items()
        }  # fmt: skip


def sequential_result(
    gate: Gate, run: str, scenario: str, sequences: RunSequences, label: str | None = None
) -> GateResult | None:
    """The verdict of a gate on a run its sequences stopped early, or None (not stopped, or not one of its gates).

    ``label`` names the run in the message, as ``gates.judge`` does."""
    settled = sequences.settled
    if settled is None or not settled.early or gate.expression not in settled.decisions:
        return None
    decision, (low, high) = settled.decisions[gate.expression]
    mean = sequences.mean(gate.expression)
    passed = decision == "holds"
    message = (
        f"{scenario if label is None else label} {gate.metric} = {mean:.4f} after {settled.n} of {settled.population} items (stopped early: its "
        f"{sequences.level:.0%} confidence sequence [{low:.4f}, {high:.4f}] {'meets' if passed else 'does not meet'} "
        f"{gate.op} {gate.threshold:g} at every n)"
    )
    data = sequences.gate_data(gate.expression)
    return GateResult(gate, run, scenario, passed, mean, settled.n, (low, high), message, sequence=data)
