"""report.html with 10,000 records: the time to write it, and the time until Chromium shows its first screen.

A synthetic report (ten scenarios of 1,000 records each, with calibration, two perturbations and groups, so every
part of the overview is drawn) is rendered by ``html_report.render``; headless Chromium (Debian's chromium and
chromedriver, through selenium) opens the file several times, and the medians are printed: DOMContentLoaded (the
page's own script has run by then, the drill-down's first page of rows included) and first contentful paint
(the overview, the first thing in the page). The page should be ready within 1 s.

usage: python benchmarks/bench_html_render.py [--records 10000] [--scenarios 10] [--repeat 5] [--width 1400]
Writes benchmarks/.work/html-render/report.html (git-ignored).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "html-render"
sys.path.insert(0, str(HERE.parent))

from pytest_holistic.report.html_report import render
from pytest_holistic.report.leaderboard import build_leaderboard

PREFIX = "".join(f"Passage: example passage {k} about a topic.\nQuestion: is it true?\nAnswer: Yes\n\n" for k in range(5))


def _metric(family: str, value: float, direction: str = "higher") -> dict[str, Any]:
    return {"family": family, "kind": "instance", "value": value, "ci95": [value - 0.05, value + 0.05], "n": 1000,
            "direction": direction, "optimum": None}  # fmt: skip


def _record(key: str, index: int, perturbation: str | None) -> dict[str, Any]:
    correct = index % 3 != 0
    return {
        "nodeid": f"suite.py::{key}[{index}]",
        "run": key,
        "instance_id": f"id{index}",
        "perturbation": perturbation,
        "instance": {"id": f"id{index}", "references": [{"text": "Yes", "correct": True}, {"text": "No", "correct": False}]},
        "prompt": f"{PREFIX}Passage: instance {index} has its own text, long enough to look like one.\nAnswer:",
        "completion": {"text": "Yes" if correct else "No", "gold": ["Yes"], "probability": 0.5 + (index % 5) / 10, "correct": correct},
        "scores": {"exact_match": float(correct)},
        "outcome": "passed",
        "error": None,
    }  # fmt: skip


def _run(number: int, records: int) -> dict[str, Any]:
    key = f"suite.py::test_scenario_{number}"
    accuracy = 0.3 + 0.06 * number
    before_after = {
        name: _metric("robustness", accuracy - shift) for name, shift in (("before", 0.0), ("after", 0.1), ("worst", 0.15))
    }
    originals = records * 4 // 5
    instances = [_record(key, k, None) for k in range(originals)]
    instances += [_record(key, k, "typos" if k % 2 else "dialect") for k in range(records - originals)]
    return {
        "key": key,
        "scenario": f"scenario_{number}",
        "name": f"scenario_{number}",
        "split": "test",
        "requested_metrics": ["exact_match"],
        "metrics": {
            "exact_match": _metric("accuracy", accuracy),
            "ece_10_bin": _metric("calibration", 0.1 + 0.02 * number, "lower"),
            "robustness.exact_match": _metric("robustness", accuracy - 0.15),
            "fairness.exact_match": _metric("fairness", accuracy - 0.05),
            "runtime_s": _metric("efficiency", 0.2, "lower"),
            "throughput": _metric("efficiency", 8.0),
        },
        "perturbations": {
            name: {"family": family, "changed": 100, "flipped": 10 + number, "unchanged": 0, "metrics": {"exact_match": before_after}}
            for name, family in (("typos", "robustness"), ("dialect", "fairness"))
        },
        "groups": [
            {"metric": "exact_match", "groups": {"a": {"n": 500, "mean": accuracy - 0.1}, "b": {"n": 500, "mean": accuracy}},
             "worst": "a", "best": "b", "gap": 0.1},
        ],
        "instances": instances,
    }  # fmt: skip


def synthetic_report(records: int, scenarios: int) -> dict[str, Any]:
    """One model's report.json payload with ``records`` records spread over ``scenarios`` runs, and two gates."""
    runs = [_run(number, records // scenarios) for number in range(scenarios)]
    gates = [
        {"status": "failed", "gate": "scenario_0:exact_match>=0.6", "run": runs[0]["key"], "scenario": "scenario_0",
         "metric": "exact_match", "op": ">=", "threshold": 0.6, "observed": 0.3, "n": 1000, "ci95": [0.25, 0.35],
         "passed": False, "message": "scenario_0 exact_match = 0.3 < 0.6"},
        {"status": "passed", "gate": "scenario_1:exact_match>=0.2", "run": runs[1]["key"], "scenario": "scenario_1",
         "metric": "exact_match", "op": ">=", "threshold": 0.2, "observed": 0.36, "n": 80, "ci95": [0.25, 0.47],
         "passed": True, "message": "stopped early", "sequence": {"stopped": True, "n": 80, "of": 1000}},
    ]  # fmt: skip
    return {"schema": "pytest-holistic/report", "run_id": "bench", "created": "2026-01-01T00:00:00+00:00",
            "complete": True, "model": {"name": "bench-model"}, "runs": runs, "gates": gates, "workers": {}}  # fmt: skip


TIMES = """
var nav = performance.getEntriesByType("navigation")[0];
var paint = performance.getEntriesByName("first-contentful-paint")[0];
return [nav.domContentLoadedEventEnd, paint ? paint.startTime : null, nav.loadEventEnd];
"""


def browse(path: Path, repeat: int, width: int) -> list[tuple[float, float | None, float]]:
    """Open the page ``repeat`` times in a fresh tab each; DOMContentLoaded, first contentful paint and load, in ms."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver")))
    try:
        times = []
        for _ in range(repeat):
            driver.get("about:blank")
            driver.get(path.as_uri())
            WebDriverWait(driver, 30).until(lambda d: d.execute_script(TIMES)[2] > 0 and d.execute_script(TIMES)[1] is not None)
            dcl, fcp, load = driver.execute_script(TIMES)
            times.append((float(dcl), None if fcp is None else float(fcp), float(load)))
        return times
    finally:
        driver.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--scenarios", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        print("chromium and chromedriver are needed (apt-get install chromium chromium-driver)", file=sys.stderr)
        return 2
    payload = synthetic_report(args.records, args.scenarios)
    started = time.perf_counter()
    page = render([payload], build_leaderboard([payload]))
    render_s = time.perf_counter() - started
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / "report.html"
    path.write_text(page, encoding="utf-8")
    times = browse(path, args.repeat, args.width)
    dcl = statistics.median(t[0] for t in times)
    fcp = statistics.median(t[1] for t in times if t[1] is not None)
    load = statistics.median(t[2] for t in times)
    records = sum(len(run["instances"]) for run in payload["runs"])
    print(f"{records} records, {len(payload['runs'])} scenarios: page {len(page.encode()) / 1e6:.2f} MB, rendered in {render_s:.2f} s")
    print(f"Chromium at {args.width} px, median of {args.repeat}: DOMContentLoaded {dcl:.0f} ms, first contentful paint {fcp:.0f} ms, "
          f"load {load:.0f} ms")  # fmt: skip
    print(f"within 1 s: {'yes' if max(dcl, fcp) < 1000 else 'NO'}")
    return 0 if max(dcl, fcp) < 1000 else 1


if __name__ == "__main__":
    sys.exit(main())
