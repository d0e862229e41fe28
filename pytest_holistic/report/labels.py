"""Each run's label: its scenario, qualified only when another run of the same session has that scenario.

Two test functions may evaluate one scenario (zero-shot and five-shot, say); gate lines, the terminal summary,
JUnit suites, report.json and the HTML page must name them apart, and all in the same words. A run is told apart
by its test function, or by its whole node id when two files hold functions of one name. Only keys and scenario
names are read, so the same labels come from live runs and from the plain data of stored reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

RunName = tuple[str, str]
"""A run's key (its test function's node id) and its scenario."""


def function_of(key: str) -> str:
    """The node id without its file: the test function (``Class::function`` for a method)."""
    return key.partition("::")[2] or key


@dataclass(frozen=True)
class Labels:
    """What tells each run apart from the others of its scenario; a run alone with its scenario needs nothing."""

    qualifiers: Mapping[RunName, str]

    def qualifier(self, key: str, scenario: str) -> str | None:
        return self.qualifiers.get((key, scenario))

    def of(self, key: str, scenario: str, name: str | None = None) -> str:
        """``name`` (the scenario when not given), followed by the run's qualifier in parentheses when it has one."""
        base = scenario if name is None else name
        qualifier = self.qualifiers.get((key, scenario))
        return base if qualifier is None else f"{base} ({qualifier})"


def run_labels(runs: Iterable[RunName]) -> Labels:
    """The labels of a session's runs (``(key, scenario)`` pairs, repeats ignored), independent of their order.

    A scenario run once keeps its bare name. Otherwise each run is qualified by its test function, or by its node
    id when another run of the scenario has a function of the same name (in another file), so labels never clash.
    """
    keys: dict[str, set[str]] = {}
    for key, scenario in runs:
        keys.setdefault(scenario, set()).add(key)
    qualifiers: dict[RunName, str] = {}
    for scenario, found in keys.items():
        if len(found) < 2:
            continue
        functions = [function_of(key) for key in found]
        for key in found:
            function = function_of(key)
            qualifiers[(key, scenario)] = function if functions.count(function) == 1 else key
    return Labels(qualifiers)
