"""Speed of pytest-holistic against the bare best loop and, when installed, lm-evaluation-harness.

Runs side by side, on the same model, requests and batch size, each as a whole process:
  * multiple choice (N four-choice instances scored by log-likelihood): the bare shared-context loop,
    ``pytest`` with the plugin on a cold cache, the same run warm, and lm-eval (``--lm-eval-python``);
  * greedy generation of 20 tokens for M prompts: the bare batched loop and ``pytest``;
  * ``--parts seq2seq``: the same multiple choice on an encoder-decoder (``--seq2seq-model FOLDER``, by default a
    random-weight T5 of t5-small's shape with SmolLM2's tokenizer, built here): the bare loop that runs the encoder
    once per context (bare_seq2seq.py), ``pytest`` cold, and lm-eval's seq2seq backend (``--lm-eval-python``);
  * ``--parts fewshot``: the core suite's BoolQ and IMDB (offline editions, few-shot prompts) as a user runs them,
    with prefix sharing on and off, against the bare loop without sharing, lm-eval and the unique-token limit
    (benchmarks/fewshot_workload.py says how each is measured).
Prints the ratios the project's speed targets are stated in, and checks that both sides computed the
same numbers (same argmax, log-probabilities within 1e-3; for the few-shot part, the same text on every item).

usage: python benchmarks/bench_speed.py [--model smollm2-135m|FOLDER] [--instances 500] [--prompts 64]
                                        [--batch-size 8] [--lm-eval-python .venv-lmeval/bin/python]
                                        [--parts mc,gen,lm-eval,seq2seq,fewshot] [--fewshot-modes on,off]
                                        [--seq2seq-model FOLDER]
                                        [--fewshot-instances N] [--rate-batches 6]
The instances are generated here from Python's own standard-library docstrings (prose, not a benchmark).
The few-shot part takes about 30 minutes on 2 CPU cores with lm-eval (``--fewshot-instances 10`` for a quick
check); a checkout whose plugin lacks --holistic-prefix-sharing can still check it with --fewshot-modes off,off.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import fewshot_workload

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def paragraphs() -> list[list[str]]:
    """Long prose paragraphs from the standard library's docstrings."""
    found = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node) or ""
                for block in doc.split("\n\n"):
                    words = block.split()
                    if len(words) >= 86 and sum(w.isalpha() for w in words) / len(words) > 0.75:
                        found.append(words)
    return found


def make_instances(count: int, seed: int = 0) -> list[dict]:
    """Context = 70 words of a paragraph; the gold choice is its next 8 words; three 8-word distractors.

    Scanning the standard library takes about a minute, so the result is kept in the work folder.
    """
    kept = WORK / f"mc-{count}-{seed}.jsonl"
    if kept.is_file():
        return [json.loads(line) for line in kept.read_text().splitlines()]
    rng = random.Random(seed)
    paras = paragraphs()
    rng.shuffle(paras)
    if len(paras) < count + 3:
        raise SystemExit(f"only {len(paras)} long docstring paragraphs found; ask for fewer --instances")
    rows = []
    for i in range(count):
        words = paras[i]
        others = [p for j, p in enumerate(paras[: count + 50]) if j != i]
        distractors = []
        for other in rng.sample(others, 3):
            start = rng.randrange(0, len(other) - 8)
            distractors.append(" ".join(other[start : start + 8]))
        choices = distractors + [" ".join(words[70:78])]
        rng.shuffle(choices)
        rows.append({"id": f"mc{i:04d}", "query": " ".join(words[:70]), "choices": choices, "gold": choices.index(" ".join(words[70:78]))})
    kept.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


# output_prefix " ": the plugin then sends each choice as the continuation " " + choice after the bare query (HELM
# moves a prefix's closing space into the continuation), which is what the bare loops and lm-eval's default
# target delimiter score; with "" it would score the choice glued to the query, another text.
SUITE = '''
import pytest
from pytest_holistic import Fields, Scenario, jsonl

FIELDS = Fields(input="query", choices="choices", answer="gold")
bench = Scenario("bench_mc", local=jsonl("{data}", FIELDS))
prompts = Scenario("bench_gen", local=jsonl("{prompts}", Fields(input="query", references="query")))

@pytest.mark.holistic(bench, adapter="multiple_choice_separate", input_suffix="", output_prefix=" ", max_train_instances=0,
                      metrics=("exact_match",))
def test_mc(completion):
    pass

@pytest.mark.holistic(prompts, adapter="generation", input_suffix="", output_prefix="", max_train_instances=0,
                      max_tokens=20, stop=(), metrics=("exact_match",))
def test_gen(completion):
    pass
'''

LM_EVAL_TASK = """task: holistic_bench_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "{{{{query}}}}"
doc_to_choice: choices
doc_to_target: gold
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **OFFLINE, **(env or {})}, cwd=WORK)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"command failed ({completed.returncode}): {' '.join(command)}\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")
    return elapsed, completed


T5_SMALL = {"d_model": 512, "d_ff": 2048, "d_kv": 64, "num_layers": 6, "num_heads": 8}
"""t5-small's shape (the weights are random: only the shape matters for speed)."""


def seq2seq_folder(name: str | None) -> str:
    """The encoder-decoder to measure: a folder, or a random-weight T5 of t5-small's shape with SmolLM2's tokenizer."""
    if name:
        return model_folder(name)
    folder = WORK / "t5-small-random"
    if (folder / "config.json").is_file():
        return str(folder)
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(model_folder("smollm2-135m"))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    config = T5Config(vocab_size=len(tokenizer), pad_token_id=pad, eos_token_id=tokenizer.eos_token_id,
                      decoder_start_token_id=pad, **T5_SMALL)
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def lm_eval_choices(out: Path) -> dict[int, list[float]]:
    """Each document's choice log-likelihoods from lm-eval's logged samples (``--log_samples``)."""
    samples = sorted(out.rglob("samples_holistic_bench_mc_*.jsonl"))
    if not samples:
        raise SystemExit(f"lm-eval wrote no samples under {out}")
    choices = {}
    for line in samples[-1].read_text().splitlines():
        sample = json.loads(line)
        choices[int(sample["doc_id"])] = [float(resp[0][0]) for resp in sample["resps"]]
    return choices


def model_folder(name: str) -> str:
    if Path(name).is_dir():
        return str(Path(name).resolve())
    from pytest_holistic.models import embedded

    if name in embedded.ALIASES:
        return str(embedded.converted_dir())
    raise SystemExit(f"--model {name!r}: give a local folder or smollm2-135m")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--instances", type=int, default=500)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lm-eval-python", default=None, help="python of a separate environment with lm-eval installed")
    parser.add_argument("--lm-eval-batch-size", type=int, default=16)
    parser.add_argument("--parts", default="mc,gen,lm-eval", help="comma-separated subset of mc, gen, lm-eval, seq2seq, fewshot (lm-eval reuses the last mc timing)")
    parser.add_argument("--seq2seq-model", default=None, help="seq2seq: an encoder-decoder folder (default: a random t5-small built here)")
    parser.add_argument("--fewshot-modes", default="on,off", help="fewshot: the prefix-sharing mode measured and the one it is measured against")
    parser.add_argument("--fewshot-instances", type=int, default=None, help="fewshot: --holistic-max-instances for both runs (default: all)")
    parser.add_argument("--rate-batches", type=int, default=6, help="fewshot: dense batches the unique-token rate is measured on")
    args = parser.parse_args()
    if args.lm_eval_python:
        args.lm_eval_python = os.path.abspath(args.lm_eval_python)  # the runs below use another working directory

    WORK.mkdir(exist_ok=True)
    folder = model_folder(args.model)
    parts = set(args.parts.split(","))
    results_file = WORK / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else {}
    if "fewshot" in parts:
        results["fewshot"] = fewshot_workload.run(args, folder, WORK / "fewshot")
        results_file.write_text(json.dumps(results, indent=1))
        if not parts & {"mc", "gen", "lm-eval", "seq2seq"}:
            print_results(results, args, parts)
            return
    started = time.perf_counter()
    rows = make_instances(args.instances)
    print(f"instances generated in {time.perf_counter() - started:.1f} s")
    data, prompts = WORK / "mc.jsonl", WORK / "prompts.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    prompts.write_text("".join(json.dumps({"id": row["id"], "query": row["query"]}) + "\n" for row in rows[: args.prompts]))
    (WORK / "test_bench.py").write_text(SUITE.format(data=data, prompts=prompts))
    python = sys.executable
    print(f"model {folder}; {args.instances} four-choice instances, {args.prompts} generation prompts, batch size {args.batch_size}")

    cache = WORK / "cache"
    pytest_cmd = [python, "-m", "pytest", "test_bench.py", "-q", "-p", "no:cacheprovider", "--model", folder,
                  "--holistic-batch-size", str(args.batch_size), "--holistic-report-dir", str(WORK / "reports"),
                  "--holistic-cache-dir", str(cache)]
    report_path = WORK / "reports" / Path(folder).name / "latest" / "report.json"

    if "mc" in parts:
        bare_s, _ = timed([python, str(HERE / "bare_loop.py"), "mc", folder, str(data), str(args.batch_size), str(WORK / "bare_mc.json")])
        bare = json.loads((WORK / "bare_mc.json").read_text())
        shutil.rmtree(cache, ignore_errors=True)
        cold_s, _ = timed([*pytest_cmd, "-k", "test_mc"])
        report = json.loads(report_path.read_text())
        warm_s, _ = timed([*pytest_cmd, "-k", "test_mc"])
        warm = json.loads(report_path.read_text())["workers"]["main"]
        records = {r["instance_id"]: r["completion"] for r in report["runs"][0]["instances"]}
        worst = max(abs(a - b) for row, scores in zip(rows, bare["result"]) for a, b in zip(records[row["id"]]["choice_logprobs"], scores))
        same = sum(max(range(4), key=lambda k: (scores[k], -k)) == records[row["id"]]["predicted_index"] for row, scores in zip(rows, bare["result"]))
        results["mc"] = {"bare_s": bare_s, "bare_compute_s": bare["compute_s"], "cold_s": cold_s, "warm_s": warm_s,
                         "warm_hits": warm["cache_hits"], "warm_computed": warm["loglikelihood_requests"], "same": same, "worst": worst}
        results_file.write_text(json.dumps(results, indent=1))
    if "gen" in parts:
        bare_s, _ = timed([python, str(HERE / "bare_loop.py"), "gen", folder, str(prompts), str(max(32, args.batch_size)), str(WORK / "bare_gen.json")])
        bare = json.loads((WORK / "bare_gen.json").read_text())
        shutil.rmtree(cache, ignore_errors=True)
        gen_s, _ = timed([*pytest_cmd, "-k", "test_gen", "--holistic-batch-size", "auto"])
        generated = {r["instance_id"]: r["completion"]["text"] for r in json.loads(report_path.read_text())["runs"][0]["instances"]}
        same = sum(generated[row["id"]] == bare["result"][k].strip() for k, row in enumerate(rows[: args.prompts]))
        results["gen"] = {"bare_s": bare_s, "bare_compute_s": bare["compute_s"], "pytest_s": gen_s, "same": same}
        results_file.write_text(json.dumps(results, indent=1))
    if "lm-eval" in parts and args.lm_eval_python:
        tasks = WORK / "lm_eval_tasks"
        tasks.mkdir(exist_ok=True)
        (tasks / "holistic_bench_mc.yaml").write_text(LM_EVAL_TASK.format(data=data))
        lm_s, _ = timed([args.lm_eval_python, "-m", "lm_eval", "run", "--model", "hf", "--model_args", f"pretrained={folder},dtype=float32",
                         "--tasks", "holistic_bench_mc", "--include_path", str(tasks), "--batch_size", str(args.lm_eval_batch_size),
                         "--device", "cpu", "--output_path", str(WORK / "lm_eval_out")])
        results["lm_eval"] = {"seconds": lm_s, "batch_size": args.lm_eval_batch_size}
        results_file.write_text(json.dumps(results, indent=1))
    if "seq2seq" in parts:
        results["seq2seq"] = run_seq2seq(args, data, rows, [python, "-m", "pytest", "test_bench.py", "-q", "-p", "no:cacheprovider",
                                                           "--holistic-batch-size", str(args.batch_size), "--holistic-report-dir",
                                                           str(WORK / "reports"), "--holistic-cache-dir", str(cache), "-k", "test_mc"])
        results_file.write_text(json.dumps(results, indent=1))
    print_results(results, args, parts)


def run_seq2seq(args: argparse.Namespace, data: Path, rows: list[dict], pytest_cmd: list[str]) -> dict:
    """The multiple choice on an encoder-decoder: bare loop, pytest cold, lm-eval's seq2seq backend; answers compared."""
    folder = seq2seq_folder(args.seq2seq_model)
    print(f"seq2seq: model {folder}")
    bare_s, _ = timed([sys.executable, str(HERE / "bare_seq2seq.py"), folder, str(data), str(args.batch_size), str(WORK / "bare_s2s.json")])
    bare = json.loads((WORK / "bare_s2s.json").read_text())
    shutil.rmtree(WORK / "cache", ignore_errors=True)
    cold_s, _ = timed([*pytest_cmd, "--model", folder])
    report = json.loads((WORK / "reports" / Path(folder).name / "latest" / "report.json").read_text())
    records = {r["instance_id"]: r["completion"] for r in report["runs"][0]["instances"]}
    pick = lambda scores: max(range(len(scores)), key=lambda k: (scores[k], -k))
    plugin = [records[row["id"]]["choice_logprobs"] for row in rows]
    result = {
        "model": folder, "bare_s": bare_s, "bare_compute_s": bare["compute_s"], "cold_s": cold_s,
        "model_s": report["model_time"]["batches"] * report["model_time"]["seconds_per_batch"]["mean"],
        "same": sum(pick(a) == pick(b) for a, b in zip(plugin, bare["result"])),
        "worst": max(abs(x - y) for a, b in zip(plugin, bare["result"]) for x, y in zip(a, b)),
    }
    if args.lm_eval_python:
        tasks = WORK / "lm_eval_tasks"
        tasks.mkdir(exist_ok=True)
        (tasks / "holistic_bench_mc.yaml").write_text(LM_EVAL_TASK.format(data=data))
        out = WORK / "lm_eval_s2s_out"
        shutil.rmtree(out, ignore_errors=True)
        lm_s, _ = timed([args.lm_eval_python, "-m", "lm_eval", "run", "--model", "hf", "--model_args",
                         f"pretrained={folder},backend=seq2seq,dtype=float32", "--tasks", "holistic_bench_mc",
                         "--include_path", str(tasks), "--batch_size", str(args.lm_eval_batch_size), "--device", "cpu",
                         "--output_path", str(out), "--log_samples"])
        theirs = lm_eval_choices(out)
        result.update({
            "lm_eval_s": lm_s, "lm_eval_batch_size": args.lm_eval_batch_size,
            "lm_eval_same": sum(pick(theirs[k]) == pick(a) for k, a in enumerate(plugin)),
            "lm_eval_worst": max(abs(x - y) for k, a in enumerate(plugin) for x, y in zip(a, theirs[k])),
        })
    return result


def print_results(results: dict, args: argparse.Namespace, parts: set[str]) -> None:
    mc, gen, lm = results.get("mc"), results.get("gen"), results.get("lm_eval")
    if "fewshot" in parts and results.get("fewshot"):
        for line in fewshot_workload.report_lines(results["fewshot"]):
            print(line)
    s2s = results.get("seq2seq")
    if "seq2seq" in parts and s2s:
        n = args.instances
        print(f"\nencoder-decoder multiple choice ({n} four-choice instances, {Path(s2s['model']).name}; whole processes)")
        print(f"  bare loop (encoder once per context) {s2s['bare_s']:8.1f} s  (model compute {s2s['bare_compute_s']:.1f} s)")
        print(f"  pytest, cold cache                   {s2s['cold_s']:8.1f} s  -> {s2s['cold_s'] / s2s['bare_s']:.3f}x the bare loop (target <= 1.0x); "
              f"model time {s2s['model_s']:.1f} s, {s2s['model_s'] / s2s['bare_compute_s']:.3f}x the bare loop's compute")
        print(f"  agreement with the bare loop: same choice on {s2s['same']}/{n}, max |log-prob difference| {s2s['worst']:.2e}")
        if "lm_eval_s" in s2s:
            print(f"  lm-evaluation-harness (seq2seq)      {s2s['lm_eval_s']:8.1f} s  (batch size {s2s['lm_eval_batch_size']}) -> pytest is "
                  f"{s2s['lm_eval_s'] / s2s['cold_s']:.2f}x faster")
            print(f"  agreement with lm-eval: same choice on {s2s['lm_eval_same']}/{n}, max |log-prob difference| {s2s['lm_eval_worst']:.2e}")
        else:
            print("  lm-evaluation-harness (seq2seq)      not run (pass --lm-eval-python PATH to a separate environment with lm-eval[hf])")
    if not parts & {"mc", "gen", "lm-eval"}:
        return
    if mc:
        print("\nmultiple choice (whole processes: start-up and model load included)")
        print(f"  bare shared-context loop   {mc['bare_s']:8.1f} s  (model compute {mc['bare_compute_s']:.1f} s, {args.instances / mc['bare_compute_s']:.2f} inst/s)")
        print(f"  pytest, cold cache         {mc['cold_s']:8.1f} s  -> {mc['cold_s'] / mc['bare_s']:.3f}x the bare loop (target <= 1.0x)")
        print(f"  pytest, warm cache         {mc['warm_s']:8.1f} s  -> {mc['warm_s'] / mc['cold_s']:.3f}x the cold run (target <= 0.03x); "
              f"cache hits {mc['warm_hits']}, computed {mc['warm_computed']}")
        print(f"  agreement: same choice on {mc['same']}/{args.instances}, max |log-prob difference| {mc['worst']:.2e}")
        if lm:
            print(f"  lm-evaluation-harness      {lm['seconds']:8.1f} s  (batch size {lm['batch_size']}) -> pytest is "
                  f"{lm['seconds'] / mc['cold_s']:.2f}x faster (target >= 2x)")
        else:
            print("  lm-evaluation-harness      not run (pass --lm-eval-python PATH to a separate environment with lm-eval[hf])")
    if gen:
        print("\ngeneration (greedy, 20 tokens)")
        print(f"  bare batched loop          {gen['bare_s']:8.1f} s  (model compute {gen['bare_compute_s']:.1f} s)")
        print(f"  pytest, cold cache         {gen['pytest_s']:8.1f} s  -> {gen['pytest_s'] / gen['bare_s']:.3f}x the bare loop (target <= 1.15x)")
        print(f"  agreement: same text on {gen['same']}/{args.prompts} prompts")


if __name__ == "__main__":
    main()
