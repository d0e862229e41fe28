"""Per-item cost of pytest-holistic on a warm cache, against bare pytest running as many trivial tests.

Generates, in a temporary folder:
  (a) ``test_bare.py``: N parametrized tests that do nothing;
  (b) ``test_holistic.py``: one ``@pytest.mark.holistic`` test over a generated N-instance scenario, answered
      by the scripted backend (``--model scripted:rules.json``), which is cached like any model with a
      revision, so the warm run takes the real response-cache path (lookups, no backend call).
Runs (b) once cold to fill the cache, then times whole processes, best of ``--repeat``: (a) without the plugin
(``-p no:holistic``), (a) with it loaded, and (b) warm; each also with ``-p no:cacheprovider``. A small timing
plugin notes when the last item finished, so the per-item figure can leave out the end-of-session statistics
(bootstrap intervals, gates, report.json), which are a separate cost.

The target (≤ 0.3 ms per item) is measured on the per-item figure, which leaves out the end-of-session statistics:
(time to the last item of warm b − time to the last item of bare a without the plugin) / N, wall-clock. The same
difference in the processes' own CPU time is printed beside it (a busy machine disturbs it less), and so is the
overhead to the end of the process, statistics and report.json included. The test of (b) asks for ``instance``,
``completion`` and ``record``, as a typical holistic test does; each requested fixture is part of the cost.

usage: python benchmarks/bench_overhead.py [--items 10000] [--repeat 3] [--adapter generation|multiple_choice_joint]
                                          [--profile] [--top 30] [--keep] [--plugin-from FOLDER]
``--plugin-from`` times another copy of the package, e.g. the last commit's:
    mkdir /tmp/head && git archive HEAD pytest_holistic | tar -x -C /tmp/head
    python benchmarks/bench_overhead.py --plugin-from /tmp/head
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BARE = """
import pytest

@pytest.mark.parametrize("i", range({items}))
def test_bare(i):
    pass
"""

HOLISTIC = """
import pytest
from pytest_holistic import Instance, scenario


@scenario
def generated():
    for i in range({items}):
        yield Instance.multiple_choice(f"q{{i:05d}}", f"What is {{i}} modulo 4?", ["0", "1", "2", "3"], i % 4)


@pytest.mark.holistic(generated, adapter={adapter!r}, max_train_instances=0, metrics=("exact_match",))
def test_generated(instance, completion, record):
    record(long_answer=float(len(completion.text) > 3))
"""

TIMING = '''
"""Notes, in the file named by $BENCH_TIMING, when the last item finished and when the session ended (once, at exit).

Wall-clock times, and this process's CPU time (user + system since it started), which a busy machine disturbs less.
"""
import json
import os
import sys
import time

_last = {"item": None, "cpu": None}


def pytest_runtest_logfinish(nodeid, location):
    _last["item"] = time.time()
    _last["cpu"] = time.process_time()


def pytest_unconfigure(config):
    module = sys.modules.get("pytest_holistic")
    if module is not None:
        with open(os.path.join(os.path.dirname(os.environ["BENCH_TIMING"]), "plugin.txt"), "w") as handle:
            handle.write(os.path.dirname(module.__file__))
    path = os.environ.get("BENCH_TIMING")
    if path:
        with open(path, "w") as handle:
            json.dump({"last_item": _last["item"], "last_item_cpu": _last["cpu"], "exit_cpu": time.process_time()}, handle)
'''

RULES = {"generate": {"modulo": " B"}, "default": " A"}


@dataclass(frozen=True)
class Timing:
    """One process: seconds from launch to its last item and to its exit, wall-clock and CPU (user + system)."""

    last_item: float
    total: float
    last_item_cpu: float
    total_cpu: float


def write_project(folder: Path, items: int, adapter: str) -> None:
    """The two test files, the timing plugin and the scripted model's rules."""
    (folder / "bare").mkdir()
    (folder / "holistic").mkdir()
    (folder / "bare" / "test_bare.py").write_text(BARE.format(items=items))
    (folder / "holistic" / "test_holistic.py").write_text(HOLISTIC.format(items=items, adapter=adapter))
    (folder / "bench_timing.py").write_text(TIMING)
    (folder / "rules.json").write_text(json.dumps(RULES))
    (folder / "pytest.ini").write_text("[pytest]\n")  # rootdir here, no ini of the project above


def child_env(folder: Path, **extra: str) -> dict[str, str]:
    """This environment for a pytest child, as a developer's shell would have it.

    No ``PYTEST_ADDOPTS``, and bytecode writing left on: with ``PYTHONDONTWRITEBYTECODE`` set, pytest re-rewrites the
    asserts of every plugin module (hypothesis, pytest-holistic) in every process, a second of start-up that a
    normal set-up pays once. ``$BENCH_PLUGIN_FROM`` (``--plugin-from``) goes first on the path, to time another checkout.
    """
    paths = [os.environ["BENCH_PLUGIN_FROM"]] if os.environ.get("BENCH_PLUGIN_FROM") else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(folder)]), **extra}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(folder: Path, args: list[str], *, check: bool = True) -> Timing:
    """Run pytest in ``folder`` as a whole process; wall-clock times from launch, and the child's own CPU time."""
    timing = folder / "timing.json"
    timing.unlink(missing_ok=True)
    env = child_env(folder, BENCH_TIMING=str(timing))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "bench_timing", *args]
    started = time.time()
    done = subprocess.run(command, check=False, cwd=folder, env=env, capture_output=True, text=True)
    ended = time.time()
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    marks = json.loads(timing.read_text())
    return Timing(marks["last_item"] - started, ended - started, marks["last_item_cpu"], marks["exit_cpu"])


def best(folder: Path, args: list[str], repeat: int) -> Timing:
    """Best of ``repeat`` runs, each figure on its own (noise only ever adds time)."""
    runs = [run(folder, args) for _ in range(repeat)]
    return Timing(*(min(getattr(t, name) for t in runs) for name in ("last_item", "total", "last_item_cpu", "total_cpu")))


def overhead_lines(bare: Timing, bare_plugin: Timing, warm: Timing, n: int) -> list[str]:
    """The three processes, then the per-item figures, wall-clock and CPU."""
    lines = []
    for label, t in (
        ("bare pytest, no plugin   (a)", bare),
        ("bare pytest, plugin on   (a)", bare_plugin),
        ("holistic, warm cache     (b)", warm),
    ):
        lines.append(
            f"  {label}: last item {t.last_item:6.2f} s, exit {t.total:6.2f} s  (CPU: {t.last_item_cpu:6.2f} s, {t.total_cpu:6.2f} s)"
        )
    for clock, b, a, p in (
        ("wall", warm.last_item, bare.last_item, bare_plugin.last_item),
        ("CPU ", warm.last_item_cpu, bare.last_item_cpu, bare_plugin.last_item_cpu),
    ):
        lines.append(f"  [{clock}] per-item overhead, to the last item (the target, <= 0.3 ms): {(b - a) / n * 1000:.3f} ms")
        lines.append(f"  [{clock}] plugin loaded, plain tests: {(p - a) / n * 1000:.3f} ms per item")
    for clock, b, a in (("wall", warm.total, bare.total), ("CPU ", warm.total_cpu, bare.total_cpu)):
        lines.append(f"  [{clock}] per-item overhead including end-of-session statistics and report: {(b - a) / n * 1000:.3f} ms")
    lines.append(
        f"  end of session (b): {warm.total - warm.last_item:.2f} s wall, {warm.total_cpu - warm.last_item_cpu:.2f} s CPU to "
        f"pytest_unconfigure; ratio b / a to the last item: {warm.last_item / bare.last_item:.2f}x"
    )
    return lines


def holistic_args(folder: Path) -> list[str]:
    return [
        "holistic",
        "--model",
        f"scripted:{folder / 'rules.json'}",
        "--holistic-cache-dir",
        str(folder / "cache"),
        "--holistic-report-dir",
        str(folder / "reports"),
    ]


def profile(folder: Path, args: list[str], top: int) -> None:
    """cProfile one warm run of (b): the plugin's own functions by cumulative time, then everything by own time."""
    out = folder / "warm.prof"
    env = child_env(folder)
    command = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "pytest", "-q", *args]
    subprocess.run(command, cwd=folder, env=env, capture_output=True, check=True)
    stats = pstats.Stats(str(out))
    print("\n--- plugin functions by cumulative time (warm run, under cProfile) ---")
    stats.sort_stats("cumulative").print_stats("pytest_holistic", top)
    print("--- every function by own time ---")
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--adapter", default="multiple_choice_joint", choices=("generation", "multiple_choice_joint"))
    parser.add_argument("--profile", action="store_true", help="also print a cProfile summary of one warm run")
    parser.add_argument("--top", type=int, default=30, help="rows of each profile table")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    parser.add_argument("--plugin-from", help="a folder holding another pytest_holistic package to time (e.g. git archive HEAD)")
    options = parser.parse_args()
    if options.plugin_from:
        os.environ["BENCH_PLUGIN_FROM"] = str(Path(options.plugin_from).resolve())
    folder = Path(tempfile.mkdtemp(prefix="bench-overhead-"))
    try:
        write_project(folder, options.items, options.adapter)
        args_b = holistic_args(folder)
        cold = run(folder, args_b)
        print(f"{options.items} items, adapter {options.adapter}, best of {options.repeat}; folder {folder}")
        print(f"plugin: {(folder / 'plugin.txt').read_text()}")
        print(f"cold (b), filling the cache: {cold.total:.2f} s")
        n = options.items
        for extra in ([], ["-p", "no:cacheprovider"]):
            label = " ".join(extra) or "(default plugins)"
            bare = best(folder, ["bare", "-p", "no:holistic", *extra], options.repeat)
            bare_plugin = best(folder, ["bare", *extra], options.repeat)
            warm = best(folder, [*args_b, *extra], options.repeat)
            print(f"\n{label}")
            print("\n".join(overhead_lines(bare, bare_plugin, warm, n)), flush=True)
        if options.profile:
            profile(folder, [*args_b, "-p", "no:cacheprovider"], options.top)
    finally:
        if options.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
