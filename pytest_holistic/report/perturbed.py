"""Robustness, fairness and equivariance numbers from the records of a run's originals and their variants.

All definitions are per instance, then averaged over instances, so each gets a bootstrap interval that
resamples instances (an instance and its variants stay together):

* HELM's worst case (seeds digest §2.3, §2.4): per instance the worst score over the original and the
  variants, worst by the metric's direction (HELM takes the minimum even for lower-is-better metrics, a
  known TODO in its code; this takes the worse end), averaged. A family (``robustness``, ``fairness``)
  counts every instance: one whose variants were all identical to it (dropped) keeps its own score, as in
  HELM. One perturbation, and the ``equivariance`` family (contrast sets), count only the instances it
  changed, with ``before`` (the original score on those instances) and ``after`` (the mean over the variants);
* fmeval's ``delta``: per instance the mean absolute change |S - S_p| over its variants, a variant that was
  identical to the original counting as no change (fmeval scores every perturbed copy);
* Dynaboard's ``consistency``: the share of the variants that ran whose prediction (the chosen option; for
  free text the HELM-normalised answer) is the original's; a variant dropped as identical is no prediction;
* fmeval's ``wer`` for open generation: the word error rate between the original and the perturbed output.

Contrast sets are meant to change the answer, so ``equivariance`` and ``contrast_sets`` have the worst case
and before/after only. An instance counts only when its original and all of the group's variants ran (or were
dropped as identical); what was left out is said in ``notes``, never counted as unchanged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import metrics as registry
from ..answers import prediction
from ..methods import kind_named
from ..metrics.base import Direction, Family, MetricInfo
from ..metrics.wer import word_error_rate
from ..perturbations import naming
from ..perturbations.naming import derived
from ..records import ItemRecord, RunInfo

Summarise = Callable[[str, Family, str, Direction, "float | None", Sequence[float]], Any]
"""``summarise(name, family, kind, direction, optimum, values)`` -> a MetricResult (mean with its interval)."""


@dataclass(frozen=True)
class _Group:
    """The variant labels one number is taken over: a family's, or one perturbation's."""

    prefix: str
    family: Family
    labels: tuple[str, ...]
    changed_only: bool  # count only instances with a variant (one perturbation, contrast sets)


def worst(values: Sequence[float], direction: Direction, optimum: float | None) -> float:
    """The worst of ``values`` for a metric: the lowest, the highest (lower is better), or the farthest from the optimum."""
    if direction == "lower":
        return max(values)
    if direction == "target":
        target = 0.5 if optimum is None else optimum
        return max(values, key=lambda value: abs(value - target))
    return min(values)


def labels_of(description: Mapping[str, Any]) -> tuple[str, ...]:
    name, count = str(description["name"]), int(description.get("variants", 1))
    return (name,) if count == 1 else tuple(f"{name}.{k}" for k in range(1, count + 1))


def _groups(info: RunInfo) -> list[_Group]:
    by_family: dict[str, list[str]] = defaultdict(list)
    groups = []
    for description in info.perturbations:
        labels = labels_of(description)
        family = str(description["family"])
        by_family[family].extend(labels)
        groups.append(_Group(str(description["name"]), _family(family), labels, True))
    families = [_Group(family, _family(family), tuple(labels), family == "equivariance") for family, labels in by_family.items()]
    return families + groups


def _family(family: str) -> Family:
    return "fairness" if family == "fairness" else "equivariance" if family == "equivariance" else "robustness"


def _prediction(record: ItemRecord) -> object:
    assert record.completion is not None
    return prediction(record.completion)


def _score(record: ItemRecord | None, metric: str) -> float | None:
    if record is None:
        return None
    value = record.scores.get(metric)
    return None if value is None or math.isnan(value) else value


@dataclass
class PerturbationResults:
    """The derived numbers of one run: flat by name (for gates), and as a per-perturbation table (for reports).

    ``notes`` says what was left out and why (variants without their original, instances whose variants did
    not all run), so a number taken over fewer instances than the run has never passes for the whole run.
    """

    families: dict[str, Any]  # <family>.<...> results: the headline numbers, shown with the run's metrics
    perturbations: dict[str, Any]  # <perturbation>.<...> results
    table: dict[str, dict[str, Any]]
    notes: tuple[str, ...] = ()

    @property
    def flat(self) -> dict[str, Any]:
        return {**self.families, **self.perturbations}


def unchanged_by_instance(info: RunInfo) -> defaultdict[str, set[str]]:
    """Instance id -> the variant labels dropped for it as identical to its original (``info.unchanged`` inverted)."""
    unchanged: defaultdict[str, set[str]] = defaultdict(set)
    for label, ids in info.unchanged.items():
        for instance_id in ids:
            unchanged[instance_id].add(label)
    return unchanged


def perturbation_results(
    records: Sequence[ItemRecord],
    info: RunInfo,
    summarise: Summarise,
    find: Callable[[str], MetricInfo | None] = registry.find,
) -> PerturbationResults:
    """Every derived number of a run whose items include perturbed variants (empty when none were asked for).

    An instance counts towards a family or a perturbation only when its original and every one of that
    group's variants ran or were dropped as identical: after ``-k``, ``--lf``, ``-x`` or an interrupted run,
    a worst case over part of an instance's variants would look better than it is.
    """
    if not info.perturbations:
        return PerturbationResults({}, {}, {})
    originals = {
        record.instance.id: record for record in records if record.perturbation is None and record.completion is not None
    }
    variants: dict[str, dict[str, ItemRecord]] = defaultdict(dict)
    for record in records:
        if record.perturbation is not None and record.completion is not None:
            variants[record.instance.id][record.perturbation] = record
    unchanged = unchanged_by_instance(info)
    order = sorted(originals)
    metrics = sorted({name for record in originals.values() for name, value in record.scores.items() if not math.isnan(value)})
    generation = (method := kind_named(info.adapter.get("method"))) is not None and method.free_text_answer
    families: dict[str, Any] = {}
    singles: dict[str, Any] = {}
    table: dict[str, dict[str, Any]] = {}
    descriptions = {str(d["name"]): d for d in info.perturbations}
    left_out: dict[str, set[str]] = defaultdict(set)  # instance id -> the groups it is missing from
    for group in _groups(info):
        out = singles if group.prefix in descriptions else families
        entry: dict[str, Any] = {"metrics": {}}
        contrast = group.family == "equivariance"  # contrast sets: the answer is meant to change
        complete, incomplete = [], []
        for i in order:
            if contrast and not originals[i].instance.contrasts:
                continue  # nothing to run for it
            if all(label in variants[i] or label in unchanged[i] for label in group.labels):
                complete.append(i)
            else:
                incomplete.append(i)
                left_out[i].add(group.prefix)
        changed = [i for i in complete if any(label in variants[i] for label in group.labels)]
        for metric in metrics if changed or not group.changed_only else ():
            found = find(metric)
            direction: Direction = found.direction if found is not None else "higher"
            optimum = found.optimum if found is not None else None
            columns: dict[str, list[float]] = {"worst": [], "before": [], "after": [], "delta": []}
            for instance_id in changed if group.changed_only else complete:
                original = _score(originals[instance_id], metric)
                if original is None:
                    continue
                scores = [s for label in group.labels if (s := _score(variants[instance_id].get(label), metric)) is not None]
                same = sum(1 for label in group.labels if label in unchanged[instance_id])
                columns["worst"].append(worst([original, *scores], direction, optimum))
                if scores:
                    columns["before"].append(original)
                    columns["after"].append(math.fsum(scores) / len(scores))
                if (scores or same) and changed and not contrast:
                    columns["delta"].append(math.fsum(abs(original - s) for s in scores) / (len(scores) + same))
            statistics = ("worst", "delta") if out is families else ("worst", "before", "after", "delta")
            for statistic in statistics:
                values = columns[statistic]
                if not values:
                    continue
                kind = "mean_abs_delta" if statistic == "delta" else statistic if statistic != "worst" else "worst_case"
                name = derived(group.prefix, statistic, metric)
                result = summarise(name, group.family, kind, "lower" if statistic == "delta" else direction, optimum, values)
                out[name] = result
                entry["metrics"].setdefault(metric, {})[statistic] = result
        extras = () if contrast else (("consistency", _consistency, changed), ("wer", _wer if generation else None, complete))
        for statistic, per_instance, over in extras:
            if per_instance is None or not changed:
                continue
            values = [
                value
                for instance_id in over
                if (value := per_instance(originals[instance_id], variants[instance_id], unchanged[instance_id], group.labels))
                is not None
            ]
            if values:
                result = summarise(
                    derived(group.prefix, statistic),
                    group.family,
                    statistic,
                    "higher" if statistic == "consistency" else "lower",
                    None,
                    values,
                )
                out[derived(group.prefix, statistic)] = result
                entry[statistic] = result
        if group.prefix in descriptions:
            description = descriptions[group.prefix]
            entry.update(
                family=description["family"],
                params=dict(description.get("params") or {}),
                variants=int(description.get("variants", 1)),
                source=description.get("source", ""),
                **({"word_lists": dict(description["word_lists"])} if description.get("word_lists") else {}),
                changed=len(changed),
                flipped=sum(
                    1
                    for i in changed
                    if any(
                        _prediction(variants[i][label]) != _prediction(originals[i])
                        for label in group.labels
                        if label in variants[i]
                    )
                ),
                unchanged=sum(1 for i in complete if i not in changed),
                left_out=len(incomplete),
            )
            table[group.prefix] = entry
    return PerturbationResults(families, singles, table, _notes(originals, variants, left_out))


def _notes(
    originals: Mapping[str, ItemRecord], variants: Mapping[str, Mapping[str, ItemRecord]], left_out: Mapping[str, set[str]]
) -> tuple[str, ...]:
    notes = []
    orphans = sorted(i for i, ran in variants.items() if ran and i not in originals)
    if orphans:
        count = sum(len(variants[i]) for i in orphans)
        notes.append(
            f"{count} variant item(s) of {len(orphans)} instance(s) (e.g. {orphans[0]}) ran without their original, "
            f"which was deselected or did not finish; they count in no robustness/fairness number: select the originals "
            f"too (-k {orphans[0]!r} matches an instance and all its variants)"
        )
    if left_out:
        groups = sorted({prefix for prefixes in left_out.values() for prefix in prefixes})
        shown = ", ".join(groups[:6]) + (", ..." if len(groups) > 6 else "")
        notes.append(
            f"{len(left_out)} instance(s) left out of {shown}: not all of their variants ran (deselected, failed or "
            "interrupted); rerun them to count them"
        )
    return tuple(notes)


def _consistency(original: ItemRecord, variants: Mapping[str, ItemRecord], same: set[str], labels: Sequence[str]) -> float | None:
    """Dynaboard: the share of the variants that ran whose prediction is the original's (identical inputs are not predictions)."""
    expected = _prediction(original)
    kept = [_prediction(variants[label]) == expected for label in labels if label in variants]
    return sum(kept) / len(kept) if kept else None


def _wer(original: ItemRecord, variants: Mapping[str, ItemRecord], same: set[str], labels: Sequence[str]) -> float | None:
    """fmeval: word error rate between the outputs, a variant identical to the original counting as 0 (as fmeval scores it)."""
    assert original.completion is not None
    text = original.completion.text
    rates = [word_error_rate(text, variants[label].completion.text) for label in labels if label in variants]  # type: ignore[union-attr]
    rates += [0.0 for label in labels if label in same]
    defined = [rate for rate in rates if rate is not None]
    return math.fsum(defined) / len(defined) if defined else None


def missing_reason(info: RunInfo, results: PerturbationResults, prefix: str) -> str:
    """Why a run has no ``<prefix>.*`` number, and what would give it one (the fix half of a gate's message)."""
    asked = {str(d["name"]): str(d["family"]) for d in info.perturbations}
    members = [name for name, family in asked.items() if prefix in (name, family)]
    from ..perturbations.catalog import PERTURBATIONS

    related = {prefix, *members, *(name for name, preset in PERTURBATIONS.items() if preset.family == prefix)}
    skips = [line for line in info.perturbation_skips if line.split(" ", 1)[0] in related or "perturbations=False" in line]
    if skips:
        return skips[0]
    if not members:
        return naming.variants_hint(prefix)
    if results.notes:
        return results.notes[0]
    if all(results.table.get(name, {}).get("changed", 0) == 0 for name in members):
        return f"{', '.join(members)} changed none of its instances (every variant was identical to its original)"
    return f"its variants recorded only {', '.join(sorted(results.flat)[:8]) or 'nothing'}"
