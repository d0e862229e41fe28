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

from ..gates import Gate, GateResult, Observation, judge, parse_group_number
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


def _failed(gate: Gate, run: str, scenario: str, message: str) -> GateResult:
    return GateResult(gate, run, scenario, False, math.nan, 0, (math.nan, math.nan), message)


def _unchecked(gate: Gate, run: str, scenario: str, reason: str, strict: bool) -> GateResult:
    """Not evaluated, or a failure when the gate must be checked (command line, or strict gates)."""
    if gate.origin == "command line":
        return _failed(
            gate, run, scenario, f"gate {gate.expression}: {reason}; a gate asked for on the command line must be checked"
        )
    if strict:
        return _failed(gate, run, scenario, f"gate {gate.expression}: {reason}; --holistic-strict-gates makes this a failure")
    return GateResult(gate, run, scenario, False, math.nan, 0, (math.nan, math.nan), f"gate {gate.expression}: {reason}", False)


def _plans(info: RunInfo, metric: str) -> bool:
    """Whether the run would record ``metric``: one it asked for, an efficiency figure, or a number its variants derive."""
    if metric in info.metrics or metric in EFFICIENCY:
        return True
    grouped = parse_group_number(metric)
    if grouped is not None:
        return grouped[1] in info.metrics
    parsed = naming.parse(metric)
    if parsed is None or not info.perturbations:
        return False
    return parsed.base is None or parsed.base in info.metrics


def _perturbation_hint(metric: str) -> str:
    """For a robustness or fairness number nobody recorded: the option that makes it."""
    parsed = naming.parse(metric)
    return "" if parsed is None else f"; it needs perturbed variants: {naming.variants_hint(parsed.prefix)}"


def _observed(run: RunResults, observations: Mapping[str, Observation], metric: str) -> Observation | None:
    """The run's number for a gate: one it computed, else a group number (``groups.gap.<metric>``) computed now."""
    found = observations.get(metric)
    return found if found is not None else run.group_observation(metric)


def judge_run(gate: Gate, run: RunResults, observations: Mapping[str, Observation], label: str | None = None) -> GateResult:
    """The gate against one run that has records: compared (``gates.judge``), or failed with why its metric is missing.

    ``label`` names the run in the message (``report.labels``: its scenario, unless another run shares that).
    """
    key, scenario = run.key, run.info.scenario
    where = scenario if label is None else label
    observation = _observed(run, observations, gate.metric)
    if observation is not None and observation.n:
        return judge(gate, key, scenario, observation, where)
    grouped = parse_group_number(gate.metric)
    if grouped is not None:
        message = (
            f"gate {gate.expression} on {where}: {gate.metric!r} needs {grouped[1]!r} scored on instances of at least "
            "two groups; give the scenario's Fields a group= column (or Instance(group=...)), and record the metric"
        )
        return _failed(gate, key, scenario, message)
    parsed = naming.parse(gate.metric)
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
    session = [gate for gate in gates if gate.scenario == info.scenario or (gate.scenario is None and _plans(info, gate.metric))]
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
    sequences = sequences or {}
    gates = _distinct(gates)
    skipped = skipped or {}
    by_key = {run.key: run for run in ran}
    infos: dict[str, RunInfo] = {key: entry.run for key, entry in collected.items()}
    infos.update((run.key, run.info) for run in ran)
    labels = run_labels((key, info.scenario) for key, info in infos.items())
    scoped = [gate for gate in gates if gate.scenario is not None]
    unscoped = [gate for gate in gates if gate.scenario is None]
    verdicts: list[Verdict] = []
    observed_by: dict[Gate, list[str]] = {gate: [] for gate in unscoped}
    left_out_by: dict[Gate, list[str]] = {gate: [] for gate in unscoped}
    for key in sorted(infos):
        info = infos[key]
        own = [*info.gates, *(gate for gate in scoped if gate.scenario == info.scenario)]
        run = by_key.get(key)
        entry = collected.get(key)
        if run is not None and any(record.outcome != "skipped" for record in run.records):
            observations = run.observations()
            recorded = [gate for gate in unscoped if (seen := _observed(run, observations, gate.metric)) is not None and seen.n]
            for gate in recorded:
                observed_by[gate].append(key)
            for gate in _distinct([*own, *recorded]):
                label = labels.of(key, info.scenario)
                result = _early(gate, run, judge_run(gate, run, observations, label), sequences.get(key), label)
                result = _on_subset(result, entry)
                verdicts.append(Verdict(f"{key}::gate[{gate.expression}]", result))
            continue
        entry = entry or CollectedRun(info, 0, 0)
        if entry.selected == 0 or skipped.get(key, 0) >= entry.selected:
            if entry.selected == 0:
                reason = f"scenario {info.scenario!r} ({key}) was deselected: none of its {entry.collected} items was selected"
            else:
                reason = f"every selected item of scenario {info.scenario!r} ({key}) was skipped ({entry.selected})"
            for gate in _distinct(own):
                verdicts.append(Verdict(f"{key}::gate[{gate.expression}]", _unchecked(gate, key, info.scenario, reason, strict)))
            for gate in unscoped:
                if _plans(info, gate.metric):
                    left_out_by[gate].append(info.scenario)
            continue
        message = (
            f"no item of scenario {info.scenario!r} ({key}) finished: {entry.selected} were selected; "
            "see the report's not_completed list"
        )
        for gate in _distinct(own):
            verdicts.append(
                Verdict(
                    f"{key}::gate[{gate.expression}]", _failed(gate, key, info.scenario, f"gate {gate.expression}: {message}")
                )
            )
    verdicts += _unmatched_scenarios(scoped, {info.scenario for info in infos.values()}, strict)
    narrowed = any(entry.selected < entry.collected for entry in collected.values()) or bool(skipped)
    for gate in unscoped:
        if observed_by[gate]:
            continue
        nodeid = f"{GLOBAL_PREFIX}::gate[{gate.expression}]"
        if left_out_by[gate]:
            reason = f"the scenarios that record {gate.metric!r} were deselected or skipped ({', '.join(sorted(set(left_out_by[gate])))})"
            verdicts.append(Verdict(nodeid, _unchecked(gate, "", "", reason, strict)))
        elif narrowed and gate.origin != "command line":  # a score that a left-out test records cannot be known
            reason = f"no scenario that ran recorded {gate.metric!r}, and this run left items out (-k, -m, --lf, skips)"
            verdicts.append(Verdict(nodeid, _unchecked(gate, "", "", reason, strict)))
        else:
            ran_names = ", ".join(sorted({run.scenario for run in ran})) or "none"
            reasons = sorted({f"{run.scenario}: {why}" for run in ran if (why := _why_missing(run, gate)) is not None})
            if reasons:  # a robustness/fairness number: each scenario's own reason
                shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
                message = f"gate {gate.expression}: no scenario in this run recorded metric {gate.metric!r}; {shown}"
            else:
                message = (
                    f"gate {gate.expression}: no scenario in this run recorded metric {gate.metric!r} (scenarios run: {ran_names}); "
                    "fix the metric name, or name the scenario ('scenario:metric ...')" + _perturbation_hint(gate.metric)
                )
            verdicts.append(Verdict(nodeid, _failed(gate, "", "", message)))
    return verdicts


def _unmatched_scenarios(scoped: Sequence[Gate], known: set[str], strict: bool) -> list[Verdict]:
    """Ini and command-line gates naming a scenario that no collected run has."""
    verdicts = []
    for gate in scoped:
        assert gate.scenario is not None
        if gate.scenario in known:
            continue
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
    infos: dict[str, RunInfo] = {key: entry.run for key, entry in collected.items()}
    infos.update((run.key, run.info) for run in ran)
    results = [
        GateResult(
            gate,
            key,
            info.scenario,
            False,
            math.nan,
            0,
            (math.nan, math.nan),
            f"gate {gate.expression}: not evaluated, {reason}",
            False,
        )
        for key, info in sorted(infos.items())
        for gate in info.gates
    ]
    results += [
        GateResult(
            gate,
            "",
            gate.scenario or "",
            False,
            math.nan,
            0,
            (math.nan, math.nan),
            f"gate {gate.expression}: not evaluated, {reason}",
            False,
        )
        for gate in gates
    ]
    return results


def _why_missing(run: RunResults, gate: Gate) -> str | None:
    """The run's reason for lacking a derived number the gate names (None for a plain metric)."""
    parsed = naming.parse(gate.metric)
    if parsed is None or gate.metric in run.observations():
        return None
    return missing_reason(run.info, run.perturbed(), parsed.prefix)
