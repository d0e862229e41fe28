"""The end-of-run summary: per worker what it computed, per scenario each metric family with value and 95% interval."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..answers import counterexample_text
from ..metrics.base import FAMILIES
from ..records import WorkerSummary
from .aggregate import Results


def _number(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"


def worker_line(worker: WorkerSummary) -> str:
    return (
        f"{worker.worker}: device {worker.device or '-'}, model load {worker.load_seconds:.1f} s, "
        f"peak RSS {worker.peak_rss_mib} MiB"
        + (f", peak GPU {worker.peak_gpu_mib} MiB" if worker.peak_gpu_mib else "")
        + f", {worker.requests_computed} requests computed, {worker.cache_hits} from cache"
    )


def group_line(breakdown: Mapping[str, Any]) -> str:
    """One run's disparity for a metric; worst and best come from the breakdown, which ranks by the metric's direction."""
    groups = breakdown["groups"]
    worst, best = breakdown["worst"], breakdown["best"]
    return (
        f"  groups   {breakdown['metric']}: worst {worst} {_number(groups[worst]['mean'])}, "
        f"best {best} {_number(groups[best]['mean'])}, gap {_number(breakdown['gap'])}"
    )


def perturbation_lines(declared: Sequence[str], table: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per perturbation: the run's first metric before and after it, its worst case, and how many answers moved."""
    lines = []
    for name, entry in table.items():
        metrics = entry["metrics"]
        main = next((metric for metric in (*declared, *sorted(metrics)) if "after" in metrics.get(metric, {})), None)
        changed = entry.get("changed", 0)
        if main is None:
            lines.append(f"  {name}: changed no instance" if not changed else f"  {name}: {changed} variant(s) without scores")
            continue
        row = metrics[main]
        text = (
            f"  {name}: {main} {_number(row['before'].value)} -> {_number(row['after'].value)} "
            f"(worst {_number(row['worst'].value)}) on {changed} changed instance(s)"
        )
        lines.append(text + f", {entry.get('flipped', 0)} changed the answer")
    return lines


def early_stop_line(stop: Mapping[str, Any]) -> str:
    """Where a run that could stop early stopped, and on what; or why it ran in full."""
    if stop["stopped"]:
        skipped = stop.get("not_computed", 0)
        return f"stopped early after {stop['n']} of {stop['of']} instances ({skipped} items skipped): {stop['reason']}"
    return f"ran all {stop['of']} instances (stop early: {stop['reason']})"


def summary_lines(results: Results) -> list[str]:
    """Worker lines, then a block per run: ``family  metric  value  [low, high]``, families in HELM's order."""
    lines = [worker_line(worker) for _, worker in sorted(results.workers.items())]
    if len(results.workers) > 1 and (total := results.batch_seconds()).count:
        lines.append(
            f"all workers: {total.count} batches, {total.mean:.3f} s per batch on average "
            f"(min {total.min:.3f}, max {total.max:.3f})"
        )
    labels = results.labels()
    for run in results.runs:
        metrics = run.metrics()
        adapter = run.info.adapter.get("method", "?")
        outcomes = ", ".join(f"{count} {outcome}" for outcome, count in run.outcomes().items())
        lines.append(f"{labels.of(run.key, run.scenario, run.info.name)} ({adapter}, {run.info.source}; {outcomes})")
        if run.early_stop is not None:
            lines.append(f"  {early_stop_line(run.early_stop)}")
        rows = []
        for family in FAMILIES:
            # fmeval's delta per metric stays in the report; the table keeps HELM's worst case and the consistency.
            names = sorted(
                name for name, result in metrics.items() if result.family == family and result.kind != "mean_abs_delta"
            )
            for k, name in enumerate(names):
                result = metrics[name]
                arrow = {"higher": "↑", "lower": "↓"}.get(
                    result.direction, "→" + _number(0.5 if result.optimum is None else result.optimum)
                )
                rows.append(
                    [
                        family if k == 0 else "",
                        f"{name} {arrow}",
                        _number(result.value),
                        f"[{_number(result.low)}, {_number(result.high)}]",
                        f"n={result.n}",
                    ]
                )
        widths = [max((len(row[c]) for row in rows), default=0) for c in range(5)]
        for row in rows:
            lines.append(
                "  "
                + "  ".join(
                    cell.rjust(width) if c in (2, 3) else cell.ljust(width) for c, (cell, width) in enumerate(zip(row, widths))
                ).rstrip()
            )
        replayed = sum(record.cached for record in run.records)
        if replayed:
            lines.append(
                f"  efficiency: {replayed} of {len(run.records)} answers replayed from the response cache; "
                "their timings are those of the run that computed them"
            )
        truncated = sum(record.truncated_tokens > 0 for record in run.records)
        if truncated:
            lines.append(f"  {truncated} prompt(s) cut from the left to fit the model's window (truncated_tokens in the report)")
        lines.extend(group_line(breakdown) for breakdown in run.groups())
        lines.extend(perturbation_lines(run.info.metrics, run.perturbed().table))
        lines.extend(f"  skipped  {reason}" for reason in (*run.skipped(), *run.info.perturbation_skips))
        lines.extend(f"  note  {note}" for note in run.perturbed().notes)
        for record in run.records:
            if record.counterexample is not None:
                first = counterexample_text(record.counterexample).splitlines()[0]
                lines.append(f"  counterexample {record.instance_id}: {first}")
    lines.append(
        "(value [95% interval: Wilson for up to 500 scores of 0/1, else bootstrap]; ↑ higher is better, ↓ lower is better, →x best at x)"
    )
    for gate in results.gates:
        if gate.evaluated:  # the unchecked ones are listed with the other things that did not happen
            lines.append(f"gate {gate.status.upper()}: {gate.message}")
    return lines


def partial_lines(results: Results) -> list[str]:
    """What did not happen, said once at the end: interruption, unfinished items, unchecked gates, lost workers."""
    lines = []
    if results.interrupted:
        lines.append(f"pytest-holistic: run incomplete: {results.interrupted}")
    if results.unfinished:
        crashed = [entry for entry in results.unfinished if "crashed" in str(entry["reason"])]
        lines.append(
            f"pytest-holistic: {len(results.unfinished)} item(s) did not finish"
            + (f" ({len(crashed)} crashed with their worker)" if crashed else "")
            + "; the report lists them under not_completed"
        )
    unchecked = [result for result in results.gates if not result.evaluated]
    if unchecked:
        lines.append(f"pytest-holistic: {len(unchecked)} gate(s) not evaluated:")
        lines += [f"  {result.message}" for result in unchecked]
    for name, how in results.lost_workers.items():
        lines.append(f"pytest-holistic: worker {name} was lost ({how})")
    lost = sorted(name for name, worker in results.workers.items() if not worker.final)
    if lost:
        lines.append(
            f"pytest-holistic: no final summary from {', '.join(lost)}; its counts are those it last recorded (after its last committed batch)"
        )
    lines += [f"pytest-holistic: {warning}" for warning in results.warnings]
    return lines


def _signed(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:+.3f}"


def _ids(labels: Sequence[str], shown: int = 5) -> str:
    more = len(labels) - shown
    return ", ".join(labels[:shown]) + (f" (+{more} more)" if more > 0 else "")


def _mde(row: Mapping[str, Any]) -> str:
    """The minimum detectable difference, or that none is detectable with this few pairs."""
    if row.get("mde_note"):
        return "MDE not detectable at this n"
    return f"MDE {'-' if row['mde'] is None else _number(row['mde'])}"


def comparison_lines(comparison: Mapping[str, Any]) -> list[str]:
    """``--holistic-baseline``: per scenario what matched up, and each original metric's paired difference and verdict."""
    baseline = comparison["baseline"]
    lines = [f"compared with baseline {baseline['path']} (run {baseline['run_id'] or '-'}, model {baseline['model']})"]
    if comparison.get("not_evaluated"):
        return [*lines, f"  not compared: {comparison['not_evaluated']}"]
    for scenario in comparison["scenarios"]:
        counts = scenario["instances"]
        line = f"  {scenario['label']}: {counts['matched']} instance(s) matched"
        if counts["added_count"]:
            line += f"; {counts['added_count']} only in this run: {_ids(counts['added'])}"
        if counts["removed_count"]:
            line += f"; {counts['removed_count']} only in the baseline: {_ids(counts['removed'])}"
        lines.append(line)
        for row in scenario["metrics"]:
            arrow = {"higher": "↑", "lower": "↓"}.get(row["direction"], "→")
            if row["perturbation"] is not None:
                continue
            if row["missing"] is not None:
                why = {"this run": "this run did not record it", "baseline": "the baseline did not record it"}.get(
                    row["missing"], "no instance has it on both sides"
                )
                lines.append(f"    {row['metric']} {arrow}: not compared, {why}")
                continue
            low, high = row["ci95"]
            test = f" (McNemar p={row['mcnemar']['p_value']:.3g})" if row["mcnemar"] else ""
            lines.append(
                f"    {row['metric']} {arrow} {_number(row['baseline']['mean'])} -> {_number(row['this']['mean'])}: "
                f"{_signed(row['difference'])} [{_signed(low)}, {_signed(high)}] n={row['n']}, {row['verdict']}{test}, {_mde(row)}"
            )
        variants = sum(1 for row in scenario["metrics"] if row["perturbation"] is not None and row["missing"] is None)
        if variants:
            lines.append(f"    + {variants} comparison(s) of perturbed variants in report.json")
    for key, where in (("only_in_this_run", "only in this run"), ("only_in_baseline", "only in the baseline")):
        if comparison[key]:
            lines.append(f"  scenarios {where}: {', '.join(entry['scenario'] for entry in comparison[key])}")
    lines.append(
        "(baseline -> this run: difference [95% paired bootstrap interval], verdict; "
        "MDE: the smallest difference detectable at 80% power, alpha 0.05)"
    )
    for verdict in comparison.get("regressions", []):
        if verdict["status"] != "skipped":
            lines.append(f"regression {verdict['status'].upper()}: {verdict['message'].removeprefix('regression ')}")
    return lines
