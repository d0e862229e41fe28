"""Whole ``pytest`` runs of this checkout's suites for the benchmarks: one side per prefix-sharing mode.

Each side is its own process with a fresh response cache and report folder (cold), timed on the wall; its
model time is what the workers' summaries in ``report.json`` record (``workers.*.model_seconds``: the seconds
spent computing batches, model load excluded). Imports nothing heavy: the benchmarks' driver stays light.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
SHARING_FLAG = "--holistic-prefix-sharing"
MODES = ("auto", "on", "off")


def environment() -> dict[str, str]:
    """This environment, offline, with this checkout first on the path (so pytest and its workers import it)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, **OFFLINE, "PYTHONPATH": path}


def timed(command: list[str], cwd: Path, accept: tuple[int, ...] = (0,)) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``command`` to its end; its wall seconds. Another exit status than ``accept`` stops the benchmark with the
    command's last output."""
    started = time.perf_counter()
    completed = subprocess.run(command, check=False, capture_output=True, text=True, env=environment(), cwd=cwd)
    elapsed = time.perf_counter() - started
    if completed.returncode not in accept:
        raise SystemExit(
            f"command failed ({completed.returncode}): {' '.join(command)}\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}"
        )
    return elapsed, completed


def sharing_supported(python: str = sys.executable) -> bool:
    """Whether the plugin that ``python`` imports from this checkout has the prefix-sharing option."""
    completed = subprocess.run(
        [python, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        check=False,
        capture_output=True,
        text=True,
        env=environment(),
        cwd=REPO,
    )
    return SHARING_FLAG in completed.stdout


def parse_modes(text: str) -> tuple[str, str]:
    """``A,B``: the mode of the side measured and of the side it is measured against (``on,off`` by default)."""
    modes = tuple(part.strip() for part in text.split(","))
    if len(modes) != 2 or any(mode not in MODES for mode in modes):
        raise SystemExit(f"--modes {text!r}: give two of {', '.join(MODES)} separated by a comma, e.g. on,off")
    return modes  # type: ignore[return-value]


@dataclass(frozen=True)
class Side:
    """One cold pytest run: where it wrote, how long it took, and the model time its report records."""

    label: str
    mode: str
    wall_s: float
    model_s: float  # summed over workers: the model work done
    model_max_s: float  # the busiest worker's: the model work's share of the wall time with -n
    load_s: float
    workers: int
    requests: int
    prefix_sharing: Any  # the mode the report's model details say was in effect (None when not recorded)
    shared_tokens: Any  # the prompt tokens sharing saved, as the model details record them
    fallback: Any  # why sharing fell back to whole requests, when it did
    report: str
    passed_line: str

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    def sharing_note(self) -> str:
        """What the report's model details say about sharing, in a few words."""
        if self.prefix_sharing is None:
            return "prefix_sharing not recorded"
        saved = f", {self.shared_tokens} tokens saved" if self.shared_tokens is not None else ""
        fallback = f", {self.fallback}" if self.fallback else ""
        return f"prefix_sharing {self.prefix_sharing}{saved}{fallback}"


def summary_line(stdout: str) -> str:
    """pytest's closing ``N passed ...`` line."""
    lines = [line.strip("= ") for line in stdout.splitlines() if line.startswith("=") or " passed" in line or " failed" in line]
    return lines[-1] if lines else ""


def run_side(
    label: str,
    mode: str,
    targets: list[str],
    work: Path,
    *,
    model: str,
    supported: bool,
    extra: Sequence[str] = (),
    python: str = sys.executable,
) -> Side:
    """``pytest TARGETS`` from the repository root on a cold cache, with ``--holistic-prefix-sharing MODE``.

    Without the option in this checkout only ``off`` can run (there is nothing to turn off): it runs without the flag.
    """
    if not supported and mode != "off":
        raise SystemExit(f"this checkout's plugin has no {SHARING_FLAG}: only 'off' sides can run (e.g. --modes off,off)")
    folder = work / label
    shutil.rmtree(folder, ignore_errors=True)
    cache, reports = folder / "cache", folder / "reports"
    command = [python, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider", "--model", model,
               "--holistic-cache-dir", str(cache), "--holistic-report-dir", str(reports),
               *([SHARING_FLAG, mode] if supported else []), *extra]  # fmt: skip
    print(f"  {label}: {' '.join(command[1:])}", flush=True)
    wall, completed = timed(command, REPO, accept=(0, 1))  # 1: some items failed; the report is whole all the same
    found = sorted(reports.glob("*/latest/report.json"))
    if not found:
        raise SystemExit(f"{label}: pytest wrote no report.json under {reports}")
    report = json.loads(found[-1].read_text(encoding="utf-8"))
    workers = list(report["workers"].values())
    details = (report.get("model") or {}).get("details") or {}
    return Side(
        label=label,
        mode=mode,
        wall_s=wall,
        model_s=sum(float(w["model_seconds"]) for w in workers),
        model_max_s=max((float(w["model_seconds"]) for w in workers), default=0.0),
        load_s=max((float(w["load_seconds"]) for w in workers), default=0.0),
        workers=len(workers),
        requests=sum(int(w["generation_requests"]) + int(w["loglikelihood_requests"]) for w in workers),
        prefix_sharing=details.get("prefix_sharing"),
        shared_tokens=details.get("prefix_shared_tokens"),
        fallback=details.get("prefix_sharing_fallback"),
        report=str(found[-1]),
        passed_line=summary_line(completed.stdout),
    )


def load_report(side: Side) -> dict[str, Any]:
    return json.loads(Path(side.report).read_text(encoding="utf-8"))


def model_arg(name: str) -> str:
    """``--model`` as pytest gets it: a folder made absolute (the runs start elsewhere), a name as given."""
    return str(Path(name).resolve()) if Path(name).is_dir() else name
