"""Every gate gets a verdict: judged on the records, failed with its reason, or reported as not evaluated.

The rules (docs/how-to/gates-in-ci.md):

* a gate is judged on every run of its scenario that has records; an unscoped gate only on the runs that
  recorded its metric, and it fails once if no run did;
* a gate given on the command line must be checked: if its scenario was deselected, never collected, or
  no item of it finished, it fails with that reason;
* a marker or ini gate whose scenario was deselected (``-k``, ``-m``, ``--lf``) or not collected in this
  run (a narrower path) is *not evaluated*: narrowing a run is a deliberate choice. It is reported as a
  skipped gate and listed in the summary; ``--holistic-strict-gates`` makes it fail instead. An ini
  gate naming a scenario that looks like a misspelling of a collected one fails;
* when the run is interrupted, no gate is judged: each is reported as not evaluated, with the reason.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from ..gates import Gate, GateResult, Observation, judge
from ..metrics.base import EFFICIENCY
from ..perturbations import naming
from ..records import CollectedRun, RunInfo
from .aggregate import RunResults
from .labels import run_labels
from .perturbed import missing_reason
from .sequential import RunSequences, sequential_result

GLOBAL_PREFIX = "holistic"


@dataclass(frozen=True)
class Verdict:
    """A gate's result and the node id its test item is reported under."""

    nodeid: str
    result: GateResult


def _unjudged(gate: Gate, run: str, scenario: str, message: str, evaluated: bool = True) -> GateResult:
    return GateResult(gate, run, scenario, False, math.nan, 0, (math.nan, math.nan), message, evaluated)


def _failed(gate: Gate, run: str, scenario: str, message: str) -> GateResult:
    return _unjudged(gate, run, scenario, message)


def unevaluated(gate: Gate, run: str, scenario: str, reason: str) -> GateResult:
    """The one "not evaluated" result: never passed, nothing observed, ``reason`` after the gate's expression."""
    return _unjudged(gate, run, scenario, f"gate {gate.expression}: {reason}", evaluated=False)


def _unchecked(gate: Gate, run: str, scenario: str, reason: str, strict: bool) -> GateResult:
    """Not evaluated, or a failure when the gate must be checked (command line, or strict gates)."""
    if gate.origin == "command line":
        return _failed(
            gate, run, scenario, f"gate {gate.expression}: {reason}; a gate asked for on the command line must be checked"
        )
    if strict:
        return _failed(gate, run, scenario, f"gate {gate.expression}: {reason}; --holistic-strict-gates makes this a failure")
    return unevaluated(gate, run, scenario, reason)


def _plans(info: RunInfo, gate: Gate) -> bool:
    """Whether the run would record the gate's metric: one it asked for, an efficiency figure, or a number its variants
    derive."""
    metric, name = gate.metric, gate.metric_name
    if metric in info.metrics or metric in EFFICIENCY:
        return True
    if name.group is not None:
        return name.group[1] in info.metrics
    parsed = name.derived
    if parsed is None or not info.perturbations:
        return False
    return parsed.base is None or parsed.base in info.metrics


def _observed(run: RunResults, observations: Mapping[str, Observation], gate: Gate) -> Observation | None:
    """The run's number for a gate: one it computed, else a group number (``groups.gap.<metric>``) computed now."""
    found = observations.get(gate.metric)
    if found is not None or gate.metric_name.group is None:
        return found
    return run.group_observation(gate.metric_name)


def judge_run(gate: Gate, run: RunResults, observations: Mapping[str, Observation], label: str | None = None) -> GateResult:
    """The gate against one run that has records: compared (``gates.judge``), or failed with why its metric is missing.

    ``label`` names the run in the message (``report.labels``: its scenario, unless another run shares that).
    """
    key, scenario = run.key, run.info.scenario
    where = scenario if label is None else label
    observation = _observed(run, observations, gate)
    if observation is not None and observation.n:
        return judge(gate, key, scenario, observation, where)
    grouped = gate.metric_name.group
    if grouped is not None:
        message = (
            f"gate {gate.expression} on {where}: {gate.metric!r} needs {grouped[1]!r} scored on instances of at least "
            "two groups; give the scenario's Fields a group= column (or Instance(group=...)), and record the metric"
        )
        return _failed(gate, key, scenario, message)
    parsed = gate.metric_name.derived
    if parsed is not None:  # a robustness or fairness number: the run's own account, else the option that adds variants
        fix = _why_missing(run, gate) or naming.variants_hint(parsed.prefix)
        return _failed(gate, key, scenario, f"gate {gate.expression} on {where}: metric {gate.metric!r} was not recorded; {fix}")
    recorded = ", ".join(sorted(name for name in observations if naming.parse(name) is None)) or "none"
    message = (
        f"gate {gate.expression} on {where}: metric {gate.metric!r} was not recorded "
        f"(recorded: {recorded}); add it to metrics=(...) or record() it in the test"
    )
    return _failed(gate, key, scenario, message)


def gates_of(info: RunInfo, gates: Sequence[Gate]) -> list[Gate]:
    """The gates a run's early stop must settle: its marker's, the session's that name its scenario, and the session's
    unscoped ones on a number the run records (a score only the test body records cannot be known ahead)."""
    session = [gate for gate in gates if gate.scenario == info.scenario or (gate.scenario is None and _plans(info, gate))]
    return _distinct([*info.gates, *session])


def _early(gate: Gate, run: RunResults, judged: GateResult, sequences: RunSequences | None, label: str) -> GateResult:
    """A gate's verdict on a run that could stop early: its sequence's, when it stopped the run; else the fixed-n one,
    with the sequence beside it (or the note that the gate was judged on the items before the stop)."""
    if sequences is None:
        return judged
    stopped = sequential_result(gate, run.key, run.info.scenario, sequences, label)
    if stopped is not None:
        return stopped
    if gate.expression in sequences.gates:
        return replace(judged, sequence=sequences.gate_data(gate.expression))
    settled = sequences.settled
    if settled is not None and settled.early:
        return replace(judged, message=f"{judged.message} [judged on the {settled.n} instances before the early stop]")
    return judged


def _distinct(gates: Sequence[Gate]) -> list[Gate]:
    """One gate per expression: the same threshold from a marker and the command line is one check (kept as the latter)."""
    chosen: dict[str, Gate] = {}
    for gate in gates:
        if gate.expression not in chosen or gate.origin == "command line":
            chosen[gate.expression] = gate
    return list(chosen.values())


def _on_subset(result: GateResult, entry: CollectedRun | None) -> GateResult:
    """Say so when a gate was judged on part of its scenario (``-k`` on instance ids, ``--lf``)."""
    if entry is None or entry.selected >= entry.collected:
        return result
    return replace(result, message=f"{result.message} [judged on the {entry.selected} of {entry.collected} items selected]")


@dataclass(frozen=True)
class RunFacts:
    """What every gate of one run reads, gathered once per run: its records, counts, label and sequences.

    ``results`` is None for a run with no record at all; ``entry`` None for a run collection did not report.
    """

    key: str
    info: RunInfo
    label: str
    results: RunResults | None = None
    entry: CollectedRun | None = None
    skipped: int = 0  # items pytest skipped (not those left out past an early stop)
    sequences: RunSequences | None = None

    @cached_property
    def judged(self) -> bool:
        """Whether its gates are judged on its records: an item of it finished, not only skipped ones."""
        return self.results is not None and any(record.outcome != "skipped" for record in self.results.records)

    @cached_property
    def observations(self) -> Mapping[str, Observation]:
        """The run's numbers as gates see them (``RunResults.observations``), empty for a run not judged."""
        return self.results.observations() if self.results is not None and self.judged else {}

    def records_metric(self, gate: Gate) -> bool:
        """Whether the run has a number, on at least one instance, for the gate's metric."""
        if self.results is None or not self.judged:
            return False
        seen = _observed(self.results, self.observations, gate)
        return seen is not None and bool(seen.n)

    @cached_property
    def left_out(self) -> str | None:
        """Why a run that was not judged was left out (deselected, or every selected item skipped); None otherwise."""
        if self.judged:
            return None
        entry = self.entry or CollectedRun(self.info, 0, 0)
        if entry.selected == 0:
            return (
                f"scenario {self.info.scenario!r} ({self.key}) was deselected: none of its {entry.collected} items was selected"
            )
        if self.skipped >= entry.selected:
            return f"every selected item of scenario {self.info.scenario!r} ({self.key}) was skipped ({entry.selected})"
        return None


def run_facts(
    ran: Sequence[RunResults],
    collected: Mapping[str, CollectedRun],
    skipped: Mapping[str, int] | None = None,
    sequences: Mapping[str, RunSequences] | None = None,
) -> list[RunFacts]:
    """One ``RunFacts`` per run, collected or recorded, in the order of their keys."""
    by_key = {run.key: run for run in ran}
    infos: dict[str, RunInfo] = {key: entry.run for key, entry in collected.items()}
    infos.update((run.key, run.info) for run in ran)
    labels = run_labels((key, info.scenario) for key, info in infos.items())
    skipped, sequences = skipped or {}, sequences or {}
    return [
        RunFacts(
            key, info, labels.of(key, info.scenario), by_key.get(key), collected.get(key), skipped.get(key, 0), sequences.get(key)
        )
        for key, info in sorted(infos.items())
    ]


def judge_gate(gate: Gate, facts: RunFacts, strict: bool) -> GateResult:
    """The gate on one run it applies to: judged on the records, not evaluated (or failed, when it must be checked)
    for a run left out, or failed for a run none of whose items finished."""
    if facts.judged:
        assert facts.results is not None
        judged = judge_run(gate, facts.results, facts.observations, facts.label)
        return _on_subset(_early(gate, facts.results, judged, facts.sequences, facts.label), facts.entry)
    if facts.left_out is not None:
        return _unchecked(gate, facts.key, facts.info.scenario, facts.left_out, strict)
    entry = facts.entry or CollectedRun(facts.info, 0, 0)
    message = (
        f"no item of scenario {facts.info.scenario!r} ({facts.key}) finished: {entry.selected} were selected; "
        "see the report's not_completed list"
    )
    return _failed(gate, facts.key, facts.info.scenario, f"gate {gate.expression}: {message}")


@dataclass(frozen=True)
class Scope:
    """Which runs each gate applies to. ``pairs``: a gate and a run it is decided on, in run order; ``unrecorded``: the
    unscoped gates no judged run recorded (decided once, on the whole session); ``uncollected``: the scoped gates
    whose scenario no collected run has."""

    pairs: list[tuple[Gate, RunFacts]]
    unrecorded: list[Gate]
    uncollected: list[Gate]


def choose_scope(gates: Sequence[Gate], facts: Sequence[RunFacts]) -> Scope:
    """A run's own gates (its marker's, and the session's naming its scenario) apply to it whatever happened to it;
    an unscoped gate applies to each judged run that recorded its metric, else to none."""
    gates = _distinct(gates)
    scoped = [gate for gate in gates if gate.scenario is not None]
    unscoped = [gate for gate in gates if gate.scenario is None]
    pairs: list[tuple[Gate, RunFacts]] = []
    observed: set[Gate] = set()
    for run in facts:
        own = [*run.info.gates, *(gate for gate in scoped if gate.scenario == run.info.scenario)]
        recorded = [gate for gate in unscoped if run.records_metric(gate)]
        observed.update(recorded)
        pairs += [(gate, run) for gate in _distinct([*own, *recorded])]
    known = {run.info.scenario for run in facts}
    return Scope(
        pairs, [gate for gate in unscoped if gate not in observed], [gate for gate in scoped if gate.scenario not in known]
    )


def decide(
    gates: Sequence[Gate],
    ran: Sequence[RunResults],
    collected: Mapping[str, CollectedRun],
    strict: bool,
    skipped: Mapping[str, int] | None = None,
    sequences: Mapping[str, RunSequences] | None = None,
) -> list[Verdict]:
    """Verdicts for the marker gates of every collected run and for every ini and command-line gate.

    ``skipped`` counts, per run key, the items pytest skipped (a skip marker, ``pytest.skip`` in setup), not those
    left out past an early stop; ``sequences`` holds the confidence sequences of each run that could stop early.
    """
    facts = run_facts(ran, collected, skipped, sequences)
    scope = choose_scope(gates, facts)
    verdicts = [Verdict(f"{run.key}::gate[{gate.expression}]", judge_gate(gate, run, strict)) for gate, run in scope.pairs]
    verdicts += _unmatched_scenarios(scope.uncollected, {run.info.scenario for run in facts}, strict)
    narrowed = any(entry.selected < entry.collected for entry in collected.values()) or bool(skipped)
    verdicts += [
        Verdict(f"{GLOBAL_PREFIX}::gate[{gate.expression}]", _unrecorded(gate, facts, ran, narrowed, strict))
        for gate in scope.unrecorded
    ]
    return verdicts


def _unrecorded(gate: Gate, facts: Sequence[RunFacts], ran: Sequence[RunResults], narrowed: bool, strict: bool) -> GateResult:
    """An unscoped gate no judged run recorded: not evaluated when the runs that would have were left out (or the
    session was narrowed), else failed with each scenario's reason or the fix."""
    left_out = sorted({run.info.scenario for run in facts if run.left_out is not None and _plans(run.info, gate)})
    if left_out:
        reason = f"the scenarios that record {gate.metric!r} were deselected or skipped ({', '.join(left_out)})"
        return _unchecked(gate, "", "", reason, strict)
    if narrowed and gate.origin != "command line":  # a score that a left-out test records cannot be known
        reason = f"no scenario that ran recorded {gate.metric!r}, and this run left items out (-k, -m, --lf, skips)"
        return _unchecked(gate, "", "", reason, strict)
    ran_names = ", ".join(sorted({run.scenario for run in ran})) or "none"
    reasons = sorted({f"{run.scenario}: {why}" for run in ran if (why := _why_missing(run, gate)) is not None})
    if reasons:  # a robustness/fairness number: each scenario's own reason
        shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
        message = f"gate {gate.expression}: no scenario in this run recorded metric {gate.metric!r}; {shown}"
    else:
        derived = gate.metric_name.derived
        hint = "" if derived is None else f"; it needs perturbed variants: {naming.variants_hint(derived.prefix)}"
        message = (
            f"gate {gate.expression}: no scenario in this run recorded metric {gate.metric!r} (scenarios run: {ran_names}); "
            "fix the metric name, or name the scenario ('scenario:metric ...')" + hint
        )
    return _failed(gate, "", "", message)


def _unmatched_scenarios(uncollected: Sequence[Gate], known: set[str], strict: bool) -> list[Verdict]:
    """Ini and command-line gates naming a scenario that no collected run has."""
    verdicts = []
    for gate in uncollected:
        assert gate.scenario is not None
        nodeid = f"{GLOBAL_PREFIX}::gate[{gate.expression}]"
        close = difflib.get_close_matches(gate.scenario, sorted(known), n=1, cutoff=0.75)
        collected = ", ".join(sorted(known)) or "none"
        if close or gate.origin == "command line":
            hint = f"did you mean {close[0]!r}?" if close else "fix the scenario name or pass its test file"
            message = f"gate {gate.expression}: scenario {gate.scenario!r} did not run (collected: {collected}); {hint}"
            verdicts.append(Verdict(nodeid, _failed(gate, "", gate.scenario, message)))
        else:
            reason = f"scenario {gate.scenario!r} was not collected in this run (collected: {collected})"
            verdicts.append(Verdict(nodeid, _unchecked(gate, "", gate.scenario, reason, strict)))
    return verdicts


def not_evaluated(
    gates: Sequence[Gate], collected: Mapping[str, CollectedRun], ran: Sequence[RunResults], reason: str
) -> list[GateResult]:
    """Every gate of an interrupted run, none judged: reported with the reason, never as passed."""
    facts = run_facts(ran, collected)
    results = [
        unevaluated(gate, run.key, run.info.scenario, f"not evaluated, {reason}") for run in facts for gate in run.info.gates
    ]
    results += [unevaluated(gate, "", gate.scenario or "", f"not evaluated, {reason}") for gate in gates]
    return results


def _why_missing(run: RunResults, gate: Gate) -> str | None:
    """The run's reason for lacking a derived number the gate names (None for a plain metric)."""
    parsed = gate.metric_name.derived
    if parsed is None or gate.metric in run.observations():
        return None
    return missing_reason(run.info, run.perturbed(), parsed.prefix)
