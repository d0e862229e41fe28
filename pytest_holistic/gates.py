"""Scenario-level thresholds, judged against a metric's point estimate or its confidence interval.

Grammar (one gate)::

    [scenario:] metric[.bound] OP number
    [scenario:] abs(metric[.bound] - number) OP number

``bound`` is ``mean`` (the default), ``lower`` or ``upper`` (the 95% interval's ends) or ``worst``:
the end that is worse for this metric. For a higher-is-better metric that is the lower bound, for a
lower-is-better one the upper bound, and for a metric with an optimum (stereotyping, 0.5) it is the
end farthest from the optimum. ``abs(...)`` gates metrics with an optimum:
``abs(stereotyping.is_biased - 0.5) <= 0.1``.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .errors import GateSyntaxError

if TYPE_CHECKING:
    from .perturbations.naming import DerivedName

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
BOUNDS = ("mean", "lower", "upper", "worst")
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_METRIC = r"[A-Za-z_][A-Za-z0-9_.@]*"
_GATE = re.compile(
    rf"""^\s*(?:(?P<scenario>[A-Za-z0-9_.\-/]+)\s*:)?\s*
        (?:abs\(\s*(?P<abs_metric>{_METRIC})\s*-\s*(?P<target>{_NUMBER})\s*\)|(?P<metric>{_METRIC}))\s*
        (?P<op>>=|<=|==|>|<)\s*
        (?P<threshold>{_NUMBER})\s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Observation:
    """A scenario-level metric as gates see it: estimate, 95% interval, n and which way is better."""

    value: float
    low: float
    high: float
    n: int
    direction: str = "higher"  # "higher", "lower", or "target" (an optimum, see ``target``)
    target: float | None = None


@dataclass(frozen=True)
class MetricName:
    """A gate's metric name, read once: a plain metric, a group number (``groups.gap.<metric>``) or a number
    perturbations derive (``robustness.exact_match``). Every reader of a gate's metric asks this, not the string."""

    text: str

    @cached_property
    def head(self) -> str:
        """What comes before the first dot (the whole name when there is none)."""
        return self.text.partition(".")[0]

    @cached_property
    def group(self) -> tuple[str, str] | None:
        """``groups.gap.exact_match`` -> (gap, exact_match); None for a name that is not a group number."""
        return parse_group_number(self.text)

    @cached_property
    def derived(self) -> DerivedName | None:
        """The perturbation number it names (``naming.parse``), None for another name; the perturbation catalog is read
        on the first ask, not when the gate is parsed."""
        from .perturbations import naming

        return naming.parse(self.text)


@dataclass(frozen=True)
class Gate:
    """One threshold. ``scenario`` None means every scenario it is checked against."""

    scenario: str | None
    metric: str
    op: str
    threshold: float
    origin: str = "marker"
    bound: str = "mean"
    target: float | None = None

    @property
    def expression(self) -> str:
        prefix = f"{self.scenario}:" if self.scenario else ""
        subject = self.metric if self.bound == "mean" else f"{self.metric}.{self.bound}"
        if self.target is not None:
            subject = f"abs({subject}-{self.target:g})"
        return f"{prefix}{subject}{self.op}{self.threshold:g}"

    @cached_property
    def metric_name(self) -> MetricName:
        """The metric, parsed once per gate (not a dataclass field: a gate travels as its written fields)."""
        return MetricName(self.metric)

    def holds(self, value: float) -> bool:
        return not math.isnan(value) and _OPERATORS[self.op](value, self.threshold)

    def observed(self, observation: Observation) -> float:
        """The number this gate compares: the chosen bound, then the distance to ``target`` if any."""
        if self.bound == "worst":
            value = _worst(observation, self.target)
        else:
            value = {"mean": observation.value, "lower": observation.low, "upper": observation.high}[self.bound]
        if self.target is None:
            return value
        if self.bound == "worst":
            return max(abs(observation.low - self.target), abs(observation.high - self.target))
        return abs(value - self.target)


def _worst(observation: Observation, target: float | None) -> float:
    optimum = target if target is not None else observation.target
    if optimum is not None or observation.direction == "target":
        optimum = optimum if optimum is not None else 0.5
        return max((observation.low, observation.high), key=lambda end: abs(end - optimum))
    return observation.high if observation.direction == "lower" else observation.low


def parse_gate(text: str, origin: str = "marker") -> Gate:
    """Parse ``"boolq:quasi_exact_match.lower >= 0.6"``; a malformed expression says what form is expected."""
    if not isinstance(text, str):
        raise GateSyntaxError(f"gate {text!r} must be a string like 'quasi_exact_match>=0.6'")
    match = _GATE.match(text)
    if match is None:
        raise GateSyntaxError(
            f"malformed gate {text!r}: expected '[scenario:]metric OP number' with OP one of >=, <=, >, <, ==, "
            "optionally metric.lower/.upper/.worst or abs(metric - optimum), e.g. 'boolq:quasi_exact_match>=0.6'"
        )
    name = match["abs_metric"] or match["metric"]
    metric, _, last = name.rpartition(".")
    bound = last if metric and last in BOUNDS else "mean"
    metric = metric if metric and last in BOUNDS else name
    head, _, before = metric.rpartition(".")
    if metric != name and head and before in BOUNDS:  # else read as a metric named 'exact_match.lower', which nothing records
        raise GateSyntaxError(f"gate {text!r}: two bounds ({before!r}, {last!r}) after {head!r}; write one, e.g. '{head}.{last}'")
    for role, written in (("threshold", match["threshold"]), ("optimum", match["target"])):
        if written is not None and not math.isfinite(float(written)):  # 1e999 reads as inf: a gate that cannot fail (or pass)
            raise GateSyntaxError(
                f"gate {text!r}: {role} {written} is beyond the float range (it reads as infinity); use a finite number"
            )
    target = float(match["target"]) if match["target"] is not None else None
    return Gate(match["scenario"], metric, match["op"], float(match["threshold"]), origin, bound, target)


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    run: str
    scenario: str
    passed: bool
    observed: float
    n: int
    interval: tuple[float, float]
    message: str
    evaluated: bool = True  # False: the gate could not be checked (its scenario deselected, or the run interrupted)
    sequence: Mapping[str, Any] | None = None  # a run that could stop early: the gate's confidence sequence (n of N, bounds)

    @property
    def status(self) -> str:
        """``passed``, ``failed``, or ``not_evaluated`` (never counted as passed)."""
        if not self.evaluated:
            return "not_evaluated"
        return "passed" if self.passed else "failed"

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "gate": self.gate.expression,
            "origin": self.gate.origin,
            "run": self.run,
            "scenario": self.scenario,
            "metric": self.gate.metric,
            "bound": self.gate.bound,
            "op": self.gate.op,
            "threshold": self.gate.threshold,
            "observed": self.observed,
            "n": self.n,
            "ci95": list(self.interval),
            "passed": self.passed,
            "message": self.message,
            **({"sequence": dict(self.sequence)} if self.sequence is not None else {}),
        }


def judge(gate: Gate, run: str, scenario: str, observation: Observation, label: str | None = None) -> GateResult:
    """Compare one recorded metric with the gate's threshold and say the outcome in one line.

    Only the comparison: which runs a gate is judged on, and what a metric nobody recorded means, are
    decided in ``report.verdicts``. ``label`` names the run in the line (its scenario, unless another run
    of the session has that scenario too).
    """
    where = scenario if label is None else label
    if math.isnan(observation.value):
        message = (
            f"gate {gate.expression} on {where}: metric {gate.metric!r} is undefined on these {observation.n} instances "
            "(e.g. no group word in any text); the gate cannot pass"
        )
        return GateResult(gate, run, scenario, False, math.nan, observation.n, (math.nan, math.nan), message)
    compared = gate.observed(observation)
    passed = gate.holds(compared)
    verdict = "meets" if passed else "does not meet"
    summary = (
        f"{where} {gate.metric} = {observation.value:.4f} "
        f"(95% CI {observation.low:.4f}-{observation.high:.4f}, n={observation.n}"
        f"{', lower is better' if observation.direction == 'lower' else ''})"
    )
    if gate.bound != "mean" or gate.target is not None:
        subject = gate.expression.split(":", 1)[-1]
        subject = subject[: len(subject) - len(f"{gate.op}{gate.threshold:g}")]
        summary += f"; {subject} = {compared:.4f}"
    message = f"{summary} {verdict} {gate.op} {gate.threshold:g}"
    return GateResult(gate, run, scenario, passed, observation.value, observation.n, (observation.low, observation.high), message)


GROUP_PREFIX = "groups"
GROUP_STATISTICS = ("gap", "worst")
"""``groups.gap.<metric>``: how much worse the worst instance group is than the best (HELM's performance disparity,
max − min of the group means); ``groups.worst.<metric>``: the worst group's mean. Over the originals' groups."""


def parse_group_number(name: str) -> tuple[str, str] | None:
    """``groups.gap.exact_match`` -> (gap, exact_match); None for a name that is not a group number."""
    prefix, _, rest = name.partition(".")
    statistic, dot, base = rest.partition(".")
    if prefix != GROUP_PREFIX or not dot or not base:
        return None
    return statistic, base


def _check_group_number(gate: Gate, known: Sequence[str], where: str) -> None:
    parsed = gate.metric_name.group
    if parsed is None:
        raise GateSyntaxError(
            f"gate {gate.expression!r} ({where}): a group number is 'groups.gap.<metric>' or 'groups.worst.<metric>'"
        )
    statistic, base = parsed
    if statistic not in GROUP_STATISTICS:
        raise GateSyntaxError(
            f"gate {gate.expression!r} ({where}): no group statistic {statistic!r}; use groups.gap.{base} (best minus worst "
            f"group mean) or groups.worst.{base} (the worst group's mean)"
        )
    if base not in known:
        close = difflib.get_close_matches(base, sorted(set(known)), n=1, cutoff=0.6)
        hint = f"did you mean 'groups.{statistic}.{close[0]}'?" if close else "name a per-instance metric the run records"
        raise GateSyntaxError(f"gate {gate.expression!r} ({where}): no metric {base!r}; {hint}")


def check_metric_name(gate: Gate, known: Sequence[str], where: str) -> None:
    """Refuse a gate whose metric looks like a misspelling of a metric that exists, before any model work.

    A score a test records itself (``record(my_score=...)``) may have any name, so a name is refused
    only when it is not known but is close to one that is: ``exact_mach`` is a typo, ``my_score`` is not;
    so is one that differs only in case (``EXACT_MATCH``), and a known metric followed by something that
    is not one bound (``exact_match.lower.upper``, ``exact_match.upr``), which would otherwise never be recorded.
    """
    if gate.metric in known:
        return
    if gate.metric_name.head == GROUP_PREFIX:
        _check_group_number(gate, known, where)
        return
    from .perturbations import naming  # the perturbation catalog, read only when a gate is not a plain metric

    parsed = gate.metric_name.derived
    if parsed is not None:  # robustness.exact_match, typos_hard.before.exact_match, fairness.consistency
        if parsed.base is not None and parsed.base not in known:
            name, dot, rest = parsed.base.rpartition(".")
            if dot and name in known:  # fairness.exact_match.lowr: a known metric, then not a bound
                close = difflib.get_close_matches(rest.lower(), BOUNDS, n=1, cutoff=0.6)
                fixed = naming.derived(parsed.prefix, parsed.statistic, name)
                hint = f"did you mean '{fixed}.{close[0]}'? " if close else ""
                raise GateSyntaxError(
                    f"gate {gate.expression!r} ({where}): unknown bound {rest!r} after metric {fixed!r}; "
                    f"{hint}write at most one of .{', .'.join(BOUNDS)} after it"
                )
            close = difflib.get_close_matches(parsed.base, sorted(set(known)), n=1, cutoff=0.8)
            if close:
                fixed = naming.derived(parsed.prefix, parsed.statistic, close[0])
                raise GateSyntaxError(f"gate {gate.expression!r} ({where}): no metric {parsed.base!r}; did you mean {fixed!r}?")
        return
    head = gate.metric_name.head
    if head != gate.metric and not any(head == name.split(".", 1)[0] for name in known):
        close = difflib.get_close_matches(head, naming.prefixes(), n=1, cutoff=0.8)
        if close:
            raise GateSyntaxError(
                f"gate {gate.expression!r} ({where}): no family or perturbation {head!r}; did you mean {close[0]!r}?"
            )
    subject = gate.metric if gate.bound == "mean" else f"{gate.metric}.{gate.bound}"
    folded = {name.lower(): name for name in known}
    parts = subject.split(".")
    heads = ((folded.get(".".join(parts[:end]).lower()), ".".join(parts[end:])) for end in range(len(parts), 0, -1))
    matched, rest = next(((name, rest) for name, rest in heads if name is not None), (None, ""))
    if matched is None:
        close = difflib.get_close_matches(gate.metric, sorted(set(known)), n=1, cutoff=0.8)
        if not close:
            return
        problem = f"no metric {gate.metric!r}; did you mean {close[0]!r}? "
        problem += "(a score you record yourself may have any name that is not this close to a known one)"
    elif gate.metric.lower() != matched.lower():
        close = difflib.get_close_matches(rest.lower(), BOUNDS, n=1, cutoff=0.6) if "." not in rest else []
        hint = f"did you mean '{matched}.{close[0]}'? " if close else ""
        problem = f"unknown bound {rest!r} after metric {matched!r}; {hint}write at most one of .{', .'.join(BOUNDS)} after it"
    else:  # the name of a known metric (and a valid bound) in other letter case
        problem = f"no metric {gate.metric!r}; did you mean {matched!r}? (metric names are case-sensitive)"
    raise GateSyntaxError(f"gate {gate.expression!r} ({where}): {problem}")
