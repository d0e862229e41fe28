"""``pytest suites/core`` cold with prefix sharing on and off, side by side, and every number of the two reports compared.

Two whole processes, one after the other, each with its own fresh response cache and report folder, run the
core suite on the same model: ``--holistic-prefix-sharing on`` and ``off`` (``--modes A,B`` picks the two).
It prints each side's wall seconds and model time (the seconds the workers spent computing batches, from the
report; model load excluded), their ratios (target: model time on <= 0.5x off), the mode each report says was
in effect, and then compares the two reports (benchmarks/report_diff.py): every metric, perturbation and gate
value of every run, and every item's prompt, answer, log-probabilities (within --tolerance, default 1e-4) and
scores, listing each difference. The timing metrics (runtime_s, throughput, tokens_per_s) are left out.

usage: python benchmarks/bench_prefix_core.py [--model smollm2-135m|FOLDER] [--modes on,off] [--scorings auto,auto]
                                              [-k EXPR] [-n N] [--tolerance 1e-4] [-- EXTRA PYTEST ARGS]
  --scorings gives each side its --holistic-scoring: ``--modes on,on --scorings packed,auto`` sets prefix sharing
  inside packed passes beside the default's (a spliced cache on CPU); ``--modes on,off --scorings packed,packed``
  measures what sharing saves inside packed passes.
  -k/-n and anything after ``--`` go to both pytest runs (e.g. ``-k "boolq or raft"`` for a quick check,
  ``-- --holistic-max-instances 20``). The whole suite takes about 20 minutes a side on 2 CPU cores.
  A checkout whose plugin lacks --holistic-prefix-sharing can still check the script with --modes off,off.
Everything is written under benchmarks/.work/prefix-core (git-ignored); the figures and every difference go to
its results.json. The exit status is 1 when the reports differ beyond the tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from holistic_runs import Side, load_report, model_arg, parse_modes, run_side, sharing_supported
from report_diff import compare_reports, describe

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "prefix-core"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}x" if b > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--modes", default="on,off", help="the side measured and the side it is measured against")
    parser.add_argument("--scorings", default="auto,auto", help="--holistic-scoring of each side")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest -k expression for both runs")
    parser.add_argument("-n", dest="workers", default=None, help="pytest-xdist workers for both runs")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="for log-probabilities and the metrics built on them")
    parser.add_argument("--suite", default="suites/core", help="what pytest runs, relative to the repository root")
    parser.add_argument("extra", nargs="*", help="after --: more pytest arguments for both runs")
    args = parser.parse_args()
    first_mode, second_mode = parse_modes(args.modes)
    scorings = [part.strip() for part in args.scorings.split(",")]
    if len(scorings) != 2:
        raise SystemExit(f"--scorings {args.scorings!r}: give two strategies separated by a comma, e.g. packed,auto")
    extra = [*(["-k", args.keyword] if args.keyword else []), *(["-n", args.workers] if args.workers else []), *args.extra]
    supported = sharing_supported()
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"pytest {args.suite} {' '.join(extra)} on {args.model}, cold, sharing {first_mode} then {second_mode}, "
          f"scoring {scorings[0]} then {scorings[1]}", flush=True)  # fmt: skip
    sides: list[Side] = []
    for index, (mode, scoring) in enumerate(zip((first_mode, second_mode), scorings), start=1):
        side_args = [*extra, "--holistic-scoring", scoring] if scoring != "auto" else extra
        sides.append(
            run_side(f"{index}-{mode}-{scoring}", mode, [args.suite], WORK, model=model_arg(args.model), supported=supported, extra=side_args)
        )
        print(f"    {sides[-1].passed_line}", flush=True)
    first, second = sides
    comparison = compare_reports(load_report(first), load_report(second), args.tolerance)

    print(f"\npytest {args.suite} (whole processes, cold caches)")
    for side in sides:
        print(f"  {side.label:<12} wall {side.wall_s:8.1f} s   model {side.model_s:8.1f} s"
              f"{f' (busiest worker {side.model_max_s:.1f} s)' if side.workers > 1 else ''}   load {side.load_s:5.1f} s   "
              f"{side.requests} requests computed   report: {side.sharing_note()}")  # fmt: skip
    print(f"  model time {first.mode}/{second.mode}: {ratio(first.model_s, second.model_s)} (target <= 0.5x)   "
          f"wall {first.mode}/{second.mode}: {ratio(first.wall_s, second.wall_s)}")  # fmt: skip
    print(f"\nagreement ({first.label} against {second.label}, tolerance {args.tolerance:g})")
    for line in describe(comparison, (first.label, second.label)):
        print(f"  {line}")

    results = {
        "suite": args.suite,
        "pytest_args": extra,
        "scorings": scorings,
        "model": args.model,
        "sides": [side.to_data() for side in sides],
        "model_time_ratio": first.model_s / second.model_s if second.model_s > 0 else None,
        "wall_ratio": first.wall_s / second.wall_s if second.wall_s > 0 else None,
        "tolerance": args.tolerance,
        "comparison": {
            "runs": comparison.runs,
            "values": comparison.values,
            "items": comparison.items,
            "same_answers": comparison.same_answers,
            "worst_logprob": comparison.worst_logprob,
            "worst_metric": comparison.worst_metric,
            "differences": [[d.where, d.first, d.second] for d in comparison.differences],
        },
    }
    (WORK / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"\nresults: {WORK / 'results.json'}")
    sys.exit(0 if comparison.identical else 1)


if __name__ == "__main__":
    main()
