"""Whether bfloat16 answers depend on batch composition: the same requests scored with prefix sharing on and off and
at several batch sizes, answers and log-probabilities compared (no timing: an agreement check, run in one process).

The requests: N four-choice instances (bench_gpu's inputs, ``mc-*.jsonl``) asked zero-shot and few-shot (the same
three solved instances before each question, so prefixes are shared across contexts). Each configuration scores
them all through the transformers backend (``HFModel``) in ``--dtype``; the reference is the first configuration.
For every other one it prints how many answers (the choice with the highest summed log-probability) are the
reference's, and the largest log-probability difference. The issue's target on a GPU: at least 99% of answers
identical between the shared and unshared paths and across batch sizes. Random weights make near ties common, so
this is a harder test than a trained model's.

usage: python benchmarks/bench_bf16_agreement.py MODEL_DIR [--instances 200] [--dtype bfloat16] [--device cpu|cuda]
           [--configs packed:on:64,packed:off:64,packed:on:1,packed:on:7,shared:on:8,shared:off:8,full:off:8]
  MODEL_DIR: e.g. benchmarks/.work/gpu/models/llama-1.7b-random (``bench_gpu.py --parts bare`` builds it) or the
  embedded model's folder. A configuration is STRATEGY:SHARING:BATCH (batch ``auto``: the backend's own choice).
Results go to benchmarks/.work/bf16/results.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "bf16"
DEFAULT_CONFIGS = "packed:on:64,packed:off:64,packed:on:1,packed:on:7,packed:on:auto,shared:on:8,shared:off:8,full:off:8"
SHOTS = 3


def instances(count: int) -> list[dict[str, Any]]:
    """The first ``count`` four-choice instances of bench_gpu's inputs (the largest file there)."""
    files = sorted((HERE / ".work" / "gpu" / "inputs").glob("mc-*.jsonl"), key=lambda f: f.stat().st_size)
    if not files:
        raise SystemExit("no benchmarks/.work/gpu/inputs/mc-*.jsonl: run bench_gpu.py --parts inputs first")
    rows = [json.loads(line) for line in files[-1].read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:count]


def requests(rows: list[dict[str, Any]]) -> tuple[list[Any], list[tuple[int, int]]]:
    """Zero-shot and few-shot requests (each instance's four choices), and (first request, choices) per question."""
    from pytest_holistic.models import LoglikelihoodRequest

    head = "".join(f"{row['query']} {row['choices'][0]}\n\n" for row in rows[:SHOTS])
    made: list[Any] = []
    questions: list[tuple[int, int]] = []
    for prefix in ("", head):
        for row in rows[SHOTS:]:
            questions.append((len(made), len(row["choices"])))
            made += [LoglikelihoodRequest(prefix + row["query"], " " + choice) for choice in row["choices"]]
    return made, questions


def score(model: Any, made: list[Any], config: str) -> list[float]:
    strategy, sharing, batch = config.split(":")
    model.use_strategy(strategy)
    model.use_prefix_sharing(sharing)
    model.batch_size = model._auto_batch_size() if batch == "auto" else int(batch)
    model._shared.rows = None if batch == "auto" else int(batch)
    return [result.logprob for result in model.loglikelihood(made)]


def answers(logprobs: list[float], questions: list[tuple[int, int]]) -> list[int]:
    return [max(range(count), key=lambda k: logprobs[first + k]) for first, count in questions]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("--instances", type=int, default=200)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--configs", default=DEFAULT_CONFIGS)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from pytest_holistic.errors import UserError
    from pytest_holistic.models.hf import HFModel

    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for config in configs:
        parts = config.split(":")
        if len(parts) != 3 or parts[0] not in ("shared", "full", "packed") or parts[1] not in ("on", "off", "auto"):
            parser.error(f"--configs: {config!r} is not STRATEGY:SHARING:BATCH (e.g. packed:on:64, full:off:auto)")
        if parts[2] != "auto" and not (parts[2].isdigit() and int(parts[2]) > 0):
            parser.error(f"--configs: {config!r} has batch {parts[2]!r}; give a positive number or auto")
    if len(configs) < 2:
        parser.error("--configs: give at least two configurations, the first being the reference")
    rows = instances(args.instances + SHOTS)
    made, questions = requests(rows)
    try:
        model = HFModel.load(str(args.model), device=args.device, dtype=args.dtype)
    except UserError as error:
        raise SystemExit(f"bench_bf16_agreement: {error}") from None
    print(f"{args.model.name}, {args.dtype} on {model.device}: {len(questions)} questions, {len(made)} requests", flush=True)
    reference = configs[0]
    expected = score(model, made, reference)
    picked = answers(expected, questions)
    results: dict[str, Any] = {"model": str(args.model), "dtype": args.dtype, "device": str(model.device), "reference": reference}
    print(f"reference {reference}", flush=True)
    for config in configs[1:]:
        scored = score(model, made, config)
        mine = answers(scored, questions)
        same = sum(a == b for a, b in zip(mine, picked))
        worst = max(abs(a - b) for a, b in zip(scored, expected))
        results[config] = {"same_answers": same, "questions": len(questions), "max_logprob_diff": worst}
        print(
            f"  {config:<18} same answers {same}/{len(questions)} ({100 * same / len(questions):.1f}%)   "
            f"max |log-prob diff| {worst:.3g}",
            flush=True,
        )
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
