"""``pytest suites/core`` with the README's example gates, cold, with and without ``--holistic-stop-early``.

Two whole processes, one after the other, each with its own fresh response cache and report folder, on the same
model and gates (the README's: ``imdb:exact_match>=0.8`` and ``boolq:quasi_exact_match>=0.6``; ``--gate`` replaces
them). It prints each side's wall seconds and requests computed, the wall time saved, and for each run that could
stop early where it stopped (n of N, each gate's sequence bounds) or why it ran in full; then every gate's verdict
on both sides, which must be the same: a stop-early verdict that differs from the full run's is a wrong decision
(at most 1 − level of them, over many runs, when a mean sits on its threshold).

usage: python benchmarks/bench_stop_early.py [--model smollm2-135m|FOLDER] [--gate EXPR ...] [-k EXPR] [-n N]
                                             [-- EXTRA PYTEST ARGS]
  -k/-n and anything after ``--`` go to both runs (``-k "boolq or imdb"`` runs only the gated scenarios). The whole
  core suite takes about 7 minutes a side on 2 CPU cores.
Everything is written under benchmarks/.work/stop-early (git-ignored); the figures go to its results.json. The
exit status is 1 when a verdict differs between the two sides.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from holistic_runs import REPO, model_arg, summary_line, timed

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "stop-early"
README_GATES = ("imdb:exact_match>=0.8", "boolq:quasi_exact_match>=0.6")


@dataclass(frozen=True)
class Side:
    label: str
    wall_s: float
    requests: int
    verdicts: dict[str, str]  # gate item -> passed / failed / not_evaluated
    stops: dict[str, Any]  # run -> its early_stop entry
    passed_line: str


def run_side(label: str, suite: str, model: str, gates: list[str], extra: list[str]) -> Side:
    folder = WORK / label
    shutil.rmtree(folder, ignore_errors=True)
    cache, reports = folder / "cache", folder / "reports"
    command = [sys.executable, "-m", "pytest", suite, "-q", "-p", "no:cacheprovider", "--model", model,
               "--holistic-cache-dir", str(cache), "--holistic-report-dir", str(reports),
               *(part for gate in gates for part in ("--holistic-gate", gate)), *extra]  # fmt: skip
    print(f"  {label}: {' '.join(command[1:])}", flush=True)
    wall, completed = timed(command, REPO, accept=(0, 1))  # 1: a gate or an item failed; the report is whole
    found = sorted(reports.glob("*/latest/report.json"))
    if not found:
        raise SystemExit(f"{label}: pytest wrote no report.json under {reports}")
    report = json.loads(found[-1].read_text(encoding="utf-8"))
    workers = list(report["workers"].values())
    return Side(
        label=label,
        wall_s=wall,
        requests=sum(int(w["generation_requests"]) + int(w["loglikelihood_requests"]) for w in workers),
        verdicts={f"{gate['run'] or 'holistic'}::{gate['gate']}": gate["status"] for gate in report["gates"]},
        stops={run["key"]: run["early_stop"] for run in report["runs"] if run.get("early_stop") is not None},
        passed_line=summary_line(completed.stdout),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--gate", action="append", default=None, help="a gate for both runs (repeatable; default: the README's)")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest -k expression for both runs")
    parser.add_argument("-n", dest="workers", default=None, help="pytest-xdist workers for both runs")
    parser.add_argument("--suite", default="suites/core", help="what pytest runs, relative to the repository root")
    parser.add_argument("extra", nargs="*", help="after --: more pytest arguments for both runs")
    args = parser.parse_args()
    gates = list(args.gate or README_GATES)
    extra = [*(["-k", args.keyword] if args.keyword else []), *(["-n", args.workers] if args.workers else []), *args.extra]
    model = model_arg(args.model)
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"pytest {args.suite} {' '.join(extra)} on {args.model}, cold, gates {', '.join(gates)}", flush=True)
    early = run_side("stop-early", args.suite, model, gates, [*extra, "--holistic-stop-early"])
    print(f"    {early.passed_line}", flush=True)
    full = run_side("full", args.suite, model, gates, extra)
    print(f"    {full.passed_line}", flush=True)

    saved = full.wall_s - early.wall_s
    print(f"\npytest {args.suite} (whole processes, cold caches)")
    for side in (early, full):
        print(f"  {side.label:<10} wall {side.wall_s:8.1f} s   {side.requests} requests computed   {side.passed_line}")
    share = f" ({saved / full.wall_s:.1%} of the full run)" if full.wall_s > 0 else ""
    print(f"  wall time saved: {saved:.1f} s{share}; requests saved: {full.requests - early.requests}")
    print("\nruns that could stop early")
    for key, stop in sorted(early.stops.items()):
        where = f"stopped after {stop['n']} of {stop['of']}" if stop["stopped"] else f"ran all {stop['of']}"
        print(f"  {key}: {where}: {stop['reason']}")
    print("\nverdicts (stop-early | full)")
    differ = []
    for gate in sorted(set(early.verdicts) | set(full.verdicts)):
        mine, theirs = early.verdicts.get(gate, "-"), full.verdicts.get(gate, "-")
        if mine != theirs:
            differ.append(gate)
        print(f"  {'SAME' if mine == theirs else 'DIFF'}  {gate}: {mine} | {theirs}")
    results = {
        "suite": args.suite,
        "pytest_args": extra,
        "model": args.model,
        "gates": gates,
        "sides": [asdict(early), asdict(full)],
        "wall_saved_s": saved,
        "verdicts_differ": differ,
    }
    (WORK / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"\nresults: {WORK / 'results.json'}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
