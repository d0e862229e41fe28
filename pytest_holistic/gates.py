"""Scenario-level thresholds: parse ``[scenario:]metric OP number`` and judge it against a run's numbers."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from .errors import GateSyntaxError
from .metrics.stats import Stat

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_GATE = re.compile(
    r"""^\s*(?:(?P<scenario>[A-Za-z0-9_.\-/]+)\s*:)?\s*
        (?P<metric>[A-Za-z_][A-Za-z0-9_.]*)\s*
        (?P<op>>=|<=|==|>|<)\s*
        (?P<threshold>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Gate:
    """One threshold. ``scenario`` None means every scenario it is checked against."""

    scenario: str | None
    metric: str
    op: str
    threshold: float
    origin: str = "marker"

    @property
    def expression(self) -> str:
        prefix = f"{self.scenario}:" if self.scenario else ""
        return f"{prefix}{self.metric}{self.op}{self.threshold:g}"

    def holds(self, value: float) -> bool:
        return not math.isnan(value) and _OPERATORS[self.op](value, self.threshold)


def parse_gate(text: str, origin: str = "marker") -> Gate:
    """Parse ``"boolq:quasi_exact_match >= 0.6"``; a malformed expression says what form is expected."""
    if not isinstance(text, str):
        raise GateSyntaxError(f"gate {text!r} must be a string like 'quasi_exact_match>=0.6'")
    match = _GATE.match(text)
    if match is None:
        raise GateSyntaxError(
            f"malformed gate {text!r}: expected '[scenario:]metric OP number' with OP one of >=, <=, >, <, ==, "
            "e.g. 'boolq:quasi_exact_match>=0.6'"
        )
    return Gate(match["scenario"], match["metric"], match["op"], float(match["threshold"]), origin)


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

    def to_dict(self) -> dict[str, object]:
        return {
            "gate": self.gate.expression,
            "origin": self.gate.origin,
            "run": self.run,
            "scenario": self.scenario,
            "metric": self.gate.metric,
            "op": self.gate.op,
            "threshold": self.gate.threshold,
            "observed": self.observed,
            "n": self.n,
            "ci95": list(self.interval),
            "passed": self.passed,
            "message": self.message,
        }


def judge(gate: Gate, run: str, scenario: str, stats: dict[str, Stat], bounds: tuple[float, float] | None) -> GateResult:
    """Compare the run's mean of ``gate.metric`` with the threshold and explain the outcome in one line."""
    stat = stats.get(gate.metric)
    if stat is None or stat.count == 0:
        recorded = ", ".join(sorted(stats)) or "none"
        message = (
            f"gate {gate.expression} on {scenario}: metric {gate.metric!r} was not recorded "
            f"(recorded: {recorded}); add it to metrics=(...) or record() it in the test"
        )
        return GateResult(gate, run, scenario, False, math.nan, 0, (math.nan, math.nan), message)
    low, high = stat.interval(bounds)
    passed = gate.holds(stat.mean)
    verdict = "meets" if passed else "does not meet"
    message = (
        f"{scenario} {gate.metric} = {stat.mean:.4f} (95% CI {low:.4f}-{high:.4f}, n={stat.count}) "
        f"{verdict} {gate.op} {gate.threshold:g}"
    )
    return GateResult(gate, run, scenario, passed, stat.mean, stat.count, (low, high), message)
